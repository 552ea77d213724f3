import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ToolSchema } from '../providers/types.js';
import { estimateRequestTokens, toolsChars } from './tokens.js';

const schema = fc.record({
  name: fc.string({ minLength: 1, maxLength: 20 }),
  description: fc.string({ maxLength: 200 }),
  parameters: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })),
}) as fc.Arbitrary<ToolSchema>;

describe('toolsChars', () => {
  it('is the length of the tool list as JSON, on the first call and on every later one', () => {
    fc.assert(
      fc.property(fc.array(schema, { maxLength: 8 }), (tools) => {
        const expected = tools.length === 0 ? 0 : JSON.stringify(tools).length;
        expect(toolsChars(tools)).toBe(expected);
        // Again, and with the same schemas in another list (each schema's length is kept with it).
        expect(toolsChars(tools)).toBe(expected);
        const reversed = [...tools].reverse();
        expect(toolsChars(reversed)).toBe(tools.length === 0 ? 0 : JSON.stringify(reversed).length);
      }),
    );
  });

  it('is exact for a schema made anew around shared parameters (a tool built per turn), and for one with other keys', () => {
    fc.assert(
      fc.property(schema, fc.string({ maxLength: 50 }), (base, description) => {
        const again: ToolSchema = { name: base.name, description, parameters: base.parameters };
        toolsChars([base]);
        expect(toolsChars([again])).toBe(JSON.stringify([again]).length);
        const extra = { ...again, strict: true } as ToolSchema;
        expect(toolsChars([extra])).toBe(JSON.stringify([extra]).length);
      }),
    );
  });

  it('counts the schemas in a request estimate', () => {
    const tools: ToolSchema[] = [{ name: 'memory', description: 'x'.repeat(400), parameters: { type: 'object' } }];
    const without = estimateRequestTokens('system', [{ role: 'user', content: 'hi' }]);
    const withTools = estimateRequestTokens('system', [{ role: 'user', content: 'hi' }], tools);
    expect(withTools - without).toBeGreaterThanOrEqual(Math.floor(JSON.stringify(tools).length / 4) - 1);
  });
});
