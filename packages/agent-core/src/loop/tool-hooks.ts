/**
 * Hooks around every tool call of the loop, in one place (execute-tools.ts calls them for built-in, MCP and gateway
 * tools alike; subagents inherit them). They come as one ordered list in the loop's options:
 *
 * - `before` runs before the tool, in list order. It allows the call, or denies it with the text the model gets as
 *   the tool's result (the tool does not run, later hooks are not asked). It may also pause the call: it simply does
 *   not resolve until it knows (an approval waiting for a button press), honouring the call's AbortSignal.
 * - `after` runs after the tool (or after a denial), in list order, and sees the result; it cannot change it.
 *
 * A hook that throws denies the call with the error's message (before) or is reported as a status (after): a broken
 * hook never runs a tool it was meant to guard, and never ends the turn.
 */
import type { Tool } from '../tools/registry.js';

/** One tool call as the hooks see it. */
export interface ToolCallInfo {
  /** The call id (as in history). */
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The tool that will run (its annotations: readOnly, destructive). */
  tool: Tool;
  /** The call's AbortSignal (the turn's): a paused hook gives up when it fires. */
  signal: AbortSignal;
  /** The loop's tool context (session, user, platform, ...), as the tool gets it. */
  context: Readonly<Record<string, unknown>>;
}

export type BeforeVerdict = { action: 'allow' } | { action: 'deny'; result: string };

export interface ToolCallOutcome {
  /** What the model gets as the tool's result. */
  content: string;
  ok: boolean;
  /** False when a before-hook denied the call. */
  ran: boolean;
  durationMs: number;
}

export interface ToolHook {
  /** Names the hook in status messages and logs. */
  name: string;
  before?(call: ToolCallInfo): Promise<BeforeVerdict>;
  after?(call: ToolCallInfo, outcome: ToolCallOutcome): Promise<void>;
}

export const ALLOW: BeforeVerdict = { action: 'allow' };

/** The first denial of the list, or allow. A hook that throws denies (unless the turn was aborted: then it stops). */
export async function runBeforeHooks(hooks: readonly ToolHook[], call: ToolCallInfo): Promise<BeforeVerdict> {
  for (const hook of hooks) {
    if (!hook.before) continue;
    try {
      const verdict = await hook.before(call);
      if (verdict.action === 'deny') return verdict;
    } catch (err) {
      call.signal.throwIfAborted();
      const message = err instanceof Error ? err.message : String(err);
      return { action: 'deny', result: `Error: ${call.name} was not run: the ${hook.name} check failed (${message}).` };
    }
  }
  return ALLOW;
}

/** Every after-hook, in order; failures are returned (for a status event), never thrown. */
export async function runAfterHooks(hooks: readonly ToolHook[], call: ToolCallInfo, outcome: ToolCallOutcome): Promise<string[]> {
  const failures: string[] = [];
  for (const hook of hooks) {
    if (!hook.after) continue;
    try {
      await hook.after(call, outcome);
    } catch (err) {
      failures.push(`${hook.name} after ${call.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return failures;
}

/** The key subagents find their parent's hooks under in the tool context (delegate_task passes them on). */
export const TOOL_HOOKS_CONTEXT_KEY = 'toolHooks';

export function toolHooksOf(context: Readonly<Record<string, unknown>>): ToolHook[] | undefined {
  const hooks = context[TOOL_HOOKS_CONTEXT_KEY];
  return Array.isArray(hooks) ? (hooks as ToolHook[]) : undefined;
}
