import { describe, expect, it } from 'vitest';
import { ToolRegistry, type Tool } from './registry.js';
import { ToolsetCycleError, ToolsetRegistry, UnknownToolsetError, defineToolset, resolveToolsets, toolsForToolsets } from './toolsets.js';

describe('toolsets', () => {
  it('resolves includes recursively, each tool once, in first-seen order', () => {
    const sets = new ToolsetRegistry();
    sets.define({ name: 'web', tools: ['web_search', 'web_fetch'] });
    sets.define({ name: 'memory', tools: ['memory', 'session_search'] });
    sets.define({ name: 'research', tools: ['web_search', 'todo'], includes: ['web', 'memory'] });
    sets.define({ name: 'everything', includes: ['research', 'web'] });
    expect(sets.resolve(['everything'])).toEqual(['web_search', 'todo', 'web_fetch', 'memory', 'session_search']);
  });

  it('allows the same toolset to be included twice along different paths (a diamond is not a cycle)', () => {
    const sets = new ToolsetRegistry();
    sets.define({ name: 'base', tools: ['x'] });
    sets.define({ name: 'left', includes: ['base'] });
    sets.define({ name: 'right', includes: ['base'] });
    sets.define({ name: 'top', includes: ['left', 'right'] });
    expect(sets.resolve(['top'])).toEqual(['x']);
  });

  it('reports a cycle with its path', () => {
    const sets = new ToolsetRegistry();
    sets.define({ name: 'a', tools: ['t1'], includes: ['b'] });
    sets.define({ name: 'b', includes: ['c'] });
    sets.define({ name: 'c', includes: ['a'] });
    sets.define({ name: 'entry', includes: ['b'] });
    const err = (() => {
      try {
        sets.resolve(['entry']);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ToolsetCycleError);
    expect((err as ToolsetCycleError).path).toEqual(['b', 'c', 'a', 'b']);
    expect((err as Error).message).toBe('toolset cycle: b -> c -> a -> b');
  });

  it('reports a toolset that includes itself', () => {
    const sets = new ToolsetRegistry();
    sets.define({ name: 'self', includes: ['self'] });
    expect(() => sets.resolve(['self'])).toThrow('toolset cycle: self -> self');
  });

  it('names an unknown toolset, who included it, and the known ones', () => {
    const sets = new ToolsetRegistry();
    sets.define({ name: 'web', includes: ['browser'] });
    expect(() => sets.resolve(['web'])).toThrow(UnknownToolsetError);
    expect(() => sets.resolve(['web'])).toThrow('unknown toolset "browser" (included by "web"); known toolsets: web');
  });

  it('defineToolset/resolveToolsets use the process-wide registry', () => {
    defineToolset({ name: 'unit_test_core', tools: ['clarify'] });
    defineToolset({ name: 'unit_test_chat', tools: ['memory'], includes: ['unit_test_core'] });
    expect(resolveToolsets(['unit_test_chat'])).toEqual(['memory', 'clarify']);
    expect(() => defineToolset({ name: 'unit_test_core' })).toThrow(/already defined/);
  });

  it('turns toolsets into runnable tools, leaving out the unavailable with reasons', () => {
    const make = (name: string, requires?: () => string | null): Tool => ({
      name,
      description: name,
      parameters: { type: 'object' },
      readOnly: true,
      requires,
      execute: async () => 'ok',
    });
    const registry = new ToolRegistry([make('web_search', () => 'no API key'), make('memory')]);
    const sets = new ToolsetRegistry();
    sets.define({ name: 'chat', tools: ['web_search', 'memory', 'web_fetch'] });
    const { tools, unavailable } = toolsForToolsets(registry, ['chat'], sets);
    expect(tools.map((t) => t.name)).toEqual(['memory']);
    expect(unavailable).toEqual([
      { name: 'web_fetch', reason: 'not registered' },
      { name: 'web_search', reason: 'no API key' },
    ]);
  });
});
