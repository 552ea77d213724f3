/**
 * Tools are plain values (STYLE.md, after pi-mono): a name, a JSON Schema for the arguments, whether running it
 * changes anything, and an `execute` that gets an AbortSignal. The registry keeps them by name and decides which
 * are available right now; it never runs them (the loop does).
 */
import type { JsonSchema, ToolSchema } from '../providers/types.js';
import type { ImageInput } from '../base/types.js';

/** OpenAI and Anthropic both reject tool names outside this pattern. */
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** What a tool receives besides its arguments: the turn's AbortSignal plus the caller's `toolContext`. */
export interface ToolContext {
  signal: AbortSignal;
  /**
   * The task this call belongs to: one per run of the loop (a turn; a subagent is a task of its own), the same for
   * every call of the run. Tools that keep state between calls (a shell, a browser, a scratch area) keep it per task,
   * so two turns running at once, or a subagent and its parent, never share it.
   */
  taskId?: string;
  [key: string]: unknown;
}

/**
 * What a tool returns besides plain text: images for the model to see with the result (an MCP screenshot). The
 * content names each image in words; the bytes go to this turn's requests only (a model without vision gets a
 * note instead) and are never stored, so later turns read the content alone.
 */
export interface ToolOutput {
  content: string;
  images?: ImageInput[];
}

/** Any tool's output as `{ content, images? }`. */
export function toToolOutput(output: string | ToolOutput): ToolOutput {
  return typeof output === 'string' ? { content: output } : output;
}

export interface Tool<Args extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: JsonSchema;
  /** Read-only tools may run in parallel with each other. */
  readOnly: boolean;
  /**
   * The tool may change or destroy things outside the conversation (an MCP tool's `destructiveHint: true`): the
   * gateway's approvals ask before such a call by default.
   */
  destructive?: boolean;
  /** Tools that talk to the user (clarify, approval) always run one at a time. */
  interactive?: boolean;
  /**
   * The files or directories a call works on, from its arguments. A tool that writes and names them runs side by
   * side with the other calls of its batch when none of them touches those paths (loop/parallel-plan.ts); one that
   * writes without naming them runs alone. For read-only tools, the paths keep them apart from writers of the same files.
   */
  paths?: (args: Record<string, unknown>) => string[];
  /** null when the tool can run; otherwise why not (missing API key, binary, ...). */
  requires?: () => string | null;
  // Method syntax on purpose: a Tool<{ query: string }> must be usable where a Tool is expected.
  execute(args: Args, ctx: ToolContext): Promise<string | ToolOutput>;
}

export interface UnavailableTool {
  name: string;
  reason: string;
}

export interface Availability {
  tools: Tool[];
  unavailable: UnavailableTool[];
}

/** Why a tool cannot run now, or null. A `requires` that throws counts as unavailable rather than a crash. */
export function unavailableReason(tool: Tool): string | null {
  if (!tool.requires) return null;
  try {
    return tool.requires();
  } catch (err) {
    return `requirement check failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Splits tools into those that can run and those left out, with the reason the caller can log. */
export function checkAvailability(tools: readonly Tool[]): Availability {
  const available: Tool[] = [];
  const unavailable: UnavailableTool[] = [];
  for (const tool of tools) {
    const reason = unavailableReason(tool);
    if (reason === null) available.push(tool);
    else unavailable.push({ name: tool.name, reason });
  }
  return { tools: available, unavailable };
}

/**
 * Each tool's schema, built once: the same object goes with every call of every turn, so what is worked out from a
 * schema (its length in the token estimate, compression/tokens.ts) is worked out once. Frozen: it is shared.
 */
const schemaOf = new WeakMap<Tool, ToolSchema>();

/** The part of a tool the model sees. */
export function toolSchemas(tools: readonly Tool[]): ToolSchema[] {
  return tools.map((t) => {
    const known = schemaOf.get(t);
    if (known && known.name === t.name && known.description === t.description && known.parameters === t.parameters) return known;
    const schema: ToolSchema = Object.freeze({ name: t.name, description: t.description, parameters: t.parameters });
    schemaOf.set(t, schema);
    return schema;
  });
}

export class ToolRegistry {
  private readonly byName = new Map<string, Tool>();

  constructor(tools: readonly Tool[] = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Registering two tools with one name, or a name the APIs reject, is a programming error. */
  register<Args extends Record<string, unknown>>(tool: Tool<Args>): this {
    if (!TOOL_NAME_PATTERN.test(tool.name)) {
      throw new Error(`invalid tool name "${tool.name}": use letters, digits, _ or -, at most 64 characters`);
    }
    if (this.byName.has(tool.name)) throw new Error(`tool "${tool.name}" is already registered`);
    this.byName.set(tool.name, tool as Tool);
    return this;
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  list(): Tool[] {
    return [...this.byName.values()];
  }

  /**
   * The tools that can run now, from `names` (default: all registered). Names that are not registered are
   * reported as unavailable too, so a toolset naming a tool that was never built is visible, not fatal.
   */
  available(names: readonly string[] = this.names()): Availability {
    const known: Tool[] = [];
    const missing: UnavailableTool[] = [];
    for (const name of new Set(names)) {
      const tool = this.byName.get(name);
      if (tool) known.push(tool);
      else missing.push({ name, reason: 'not registered' });
    }
    const checked = checkAvailability(known);
    return { tools: checked.tools, unavailable: [...missing, ...checked.unavailable] };
  }
}
