/**
 * Whether one batch of tool calls may run side by side (the seeds' rule): read-only tools always may; a tool that
 * writes may when it names the paths it writes (`Tool.paths`) and no other call of the batch touches any of them;
 * a writer that names no paths, or anything that talks to the user, makes the batch run one call at a time.
 */
import { resolve, sep } from 'node:path';
import type { Tool } from '../tools/registry.js';

export interface PlannedCall {
  tool?: Tool;
  args: Record<string, unknown>;
}

interface Claim {
  writes: boolean;
  paths: string[];
}

export function canRunInParallel(calls: readonly PlannedCall[]): boolean {
  const runnable = calls.filter((c): c is PlannedCall & { tool: Tool } => c.tool !== undefined);
  if (runnable.length < 2 || runnable.some((c) => c.tool.interactive)) return false;
  const claims: Claim[] = [];
  for (const { tool, args } of runnable) {
    const paths = pathsOf(tool, args);
    // A writer whose targets are unknown may touch anything.
    if (!tool.readOnly && paths === undefined) return false;
    const claim = { writes: !tool.readOnly, paths: paths ?? [] };
    if (claims.some((other) => conflicts(claim, other))) return false;
    claims.push(claim);
  }
  return true;
}

/** The call's paths, resolved; undefined when the tool names none (or naming them failed). */
function pathsOf(tool: Tool, args: Record<string, unknown>): string[] | undefined {
  if (!tool.paths) return undefined;
  try {
    const paths = tool.paths(args).filter((p) => p !== '');
    return paths.length > 0 ? paths.map((p) => resolve(p)) : undefined;
  } catch {
    return undefined;
  }
}

/** Two calls conflict when one writes where the other reads or writes. */
function conflicts(a: Claim, b: Claim): boolean {
  if (!a.writes && !b.writes) return false;
  return a.paths.some((p) => b.paths.some((q) => overlaps(p, q)));
}

/** The same path, or one inside the other (a directory and a file in it). */
export function overlaps(a: string, b: string): boolean {
  const dir = (p: string): string => (p.endsWith(sep) ? p : p + sep);
  return a === b || a.startsWith(dir(b)) || b.startsWith(dir(a));
}
