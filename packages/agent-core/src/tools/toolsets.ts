/**
 * Toolsets name groups of tools and compose by name with `includes` (Hermes' toolsets, pi-mono's style):
 * `resolveToolsets(['research'])` walks the includes recursively and returns the tool names, each once,
 * in first-seen order. A cycle is a configuration mistake, reported with its path.
 */
import type { Availability, ToolRegistry } from './registry.js';

export interface ToolsetDefinition {
  name: string;
  description?: string;
  tools?: string[];
  includes?: string[];
}

export interface Toolset {
  name: string;
  description: string;
  tools: string[];
  includes: string[];
}

export class ToolsetCycleError extends Error {
  /** The toolset names along the cycle, first repeated at the end: ['a', 'b', 'a']. */
  readonly path: string[];

  constructor(path: string[]) {
    super(`toolset cycle: ${path.join(' -> ')}`);
    this.name = 'ToolsetCycleError';
    this.path = path;
  }
}

export class UnknownToolsetError extends Error {
  constructor(
    readonly toolset: string,
    known: readonly string[],
    via?: string,
  ) {
    const where = via ? ` (included by "${via}")` : '';
    super(`unknown toolset "${toolset}"${where}; known toolsets: ${known.join(', ') || '(none)'}`);
    this.name = 'UnknownToolsetError';
  }
}

export class ToolsetRegistry {
  private readonly byName = new Map<string, Toolset>();

  define(def: ToolsetDefinition): Toolset {
    if (this.byName.has(def.name)) throw new Error(`toolset "${def.name}" is already defined`);
    const toolset: Toolset = {
      name: def.name,
      description: def.description ?? '',
      tools: [...(def.tools ?? [])],
      includes: [...(def.includes ?? [])],
    };
    this.byName.set(def.name, toolset);
    return toolset;
  }

  get(name: string): Toolset | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Tool names of `names` and everything they include, deduplicated in first-seen order. */
  resolve(names: readonly string[]): string[] {
    const tools = new Set<string>();
    const done = new Set<string>();

    // `stack` is the include path from a requested toolset down to `name`; seeing `name` on it again is a cycle.
    const visit = (name: string, stack: string[]): void => {
      const at = stack.indexOf(name);
      if (at !== -1) throw new ToolsetCycleError([...stack.slice(at), name]);
      if (done.has(name)) return;
      const toolset = this.byName.get(name);
      if (!toolset) throw new UnknownToolsetError(name, this.names(), stack.at(-1));
      for (const tool of toolset.tools) tools.add(tool);
      for (const included of toolset.includes) visit(included, [...stack, name]);
      done.add(name);
    };

    for (const name of names) visit(name, []);
    return [...tools];
  }
}

/** The process-wide toolsets that tool modules define at import time. */
export const defaultToolsets = new ToolsetRegistry();

export function defineToolset(def: ToolsetDefinition): Toolset {
  return defaultToolsets.define(def);
}

export function resolveToolsets(names: readonly string[], toolsets: ToolsetRegistry = defaultToolsets): string[] {
  return toolsets.resolve(names);
}

/** The tools of some toolsets that can run now, and the ones left out with the reason. */
export function toolsForToolsets(registry: ToolRegistry, names: readonly string[], toolsets: ToolsetRegistry = defaultToolsets): Availability {
  return registry.available(toolsets.resolve(names));
}
