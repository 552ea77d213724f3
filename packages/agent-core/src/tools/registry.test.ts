import { describe, expect, it } from 'vitest';
import { ToolRegistry, checkAvailability, toolSchemas, type Tool } from './registry.js';

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  description: `${name} tool`,
  parameters: { type: 'object', properties: {} },
  readOnly: true,
  execute: async () => `${name} ran`,
  ...extra,
});

describe('ToolRegistry', () => {
  it('keeps tools by name and exposes only what the model needs as schemas', () => {
    const registry = new ToolRegistry([tool('web_search'), tool('memory', { readOnly: false })]);
    expect(registry.names()).toEqual(['web_search', 'memory']);
    expect(registry.get('memory')?.readOnly).toBe(false);
    expect(toolSchemas(registry.list())).toEqual([
      { name: 'web_search', description: 'web_search tool', parameters: { type: 'object', properties: {} } },
      { name: 'memory', description: 'memory tool', parameters: { type: 'object', properties: {} } },
    ]);
  });

  it('gives a tool the same schema object every time, and a new one when the tool is another or changed', () => {
    const a = tool('a');
    const [first] = toolSchemas([a]);
    expect(toolSchemas([a])[0]).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // A tool object whose description was replaced (tools are plain objects) is described as it is now.
    const changed = a as { description: string };
    changed.description = 'a tool, reworded';
    expect(toolSchemas([a])[0]).toEqual({ name: 'a', description: 'a tool, reworded', parameters: { type: 'object', properties: {} } });
    expect(toolSchemas([tool('a')])[0]).not.toBe(first);
  });

  it('refuses a duplicate name and a name the provider APIs would reject', () => {
    const registry = new ToolRegistry([tool('a')]);
    expect(() => registry.register(tool('a'))).toThrow(/already registered/);
    expect(() => registry.register(tool('has space'))).toThrow(/invalid tool name/);
  });

  it('accepts a tool with typed arguments', async () => {
    const typed: Tool<{ query: string }> = {
      ...tool('search'),
      execute: async (args) => `searched ${args.query}`,
    };
    const registry = new ToolRegistry().register(typed);
    const ctx = { signal: new AbortController().signal };
    await expect(registry.get('search')?.execute({ query: 'cats' }, ctx)).resolves.toBe('searched cats');
  });

  it('leaves out tools whose requirements are missing, with the reason, instead of crashing', () => {
    const registry = new ToolRegistry([
      tool('web_search', { requires: () => 'FIRECRAWL_API_KEY is not set' }),
      tool('broken', {
        requires: () => {
          throw new Error('probe exploded');
        },
      }),
      tool('memory', { requires: () => null }),
    ]);
    const { tools, unavailable } = registry.available();
    expect(tools.map((t) => t.name)).toEqual(['memory']);
    expect(unavailable).toEqual([
      { name: 'web_search', reason: 'FIRECRAWL_API_KEY is not set' },
      { name: 'broken', reason: 'requirement check failed: probe exploded' },
    ]);
  });

  it('reports names that were never registered as unavailable', () => {
    const registry = new ToolRegistry([tool('memory')]);
    expect(registry.available(['memory', 'ghost'])).toEqual({
      tools: [registry.get('memory')],
      unavailable: [{ name: 'ghost', reason: 'not registered' }],
    });
  });

  it('checkAvailability works on a plain list too', () => {
    const result = checkAvailability([tool('a', { requires: () => 'no binary' }), tool('b')]);
    expect(result.tools.map((t) => t.name)).toEqual(['b']);
    expect(result.unavailable).toEqual([{ name: 'a', reason: 'no binary' }]);
  });
});
