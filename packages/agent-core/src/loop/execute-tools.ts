/**
 * One batch of tool calls from one model response: repair what the model got slightly wrong, run each distinct
 * call once (in parallel when parallel-plan.ts allows: read-only calls, writers whose paths do not overlap; else one
 * at a time), and give every call exactly one result, in call order.
 */
import { isRecord } from '../base/json-values.js';
import type { ChatMessage, ImageInput, ToolCall } from '../base/types.js';
import { deterministicCallId } from '../providers/tool-call-ids.js';
import { toToolOutput, type Tool } from '../tools/registry.js';
import { canRunInParallel } from './parallel-plan.js';
import { sanitizeText } from './transcript.js';
import { repairToolName } from './tool-names.js';
import { runAfterHooks, runBeforeHooks, TOOL_HOOKS_CONTEXT_KEY, type ToolCallInfo, type ToolHook } from './tool-hooks.js';
import type { AgentEvent } from './types.js';

export const MAX_PARALLEL_TOOLS = 8;
export const MAX_TOOL_RESULT_CHARS = 100_000;
const TOOL_PREVIEW_CHARS = 200;
export const CANCELLED_RESULT = 'Error: cancelled by user interrupt.';
const BAD_ARGUMENTS_PREVIEW_CHARS = 200;

export type ParsedArguments = { ok: true; args: Record<string, unknown> } | { ok: false; error: string };

/** Empty arguments mean `{}`; anything else must be a JSON object. */
export function parseToolArguments(raw: string): ParsedArguments {
  if (raw.trim() === '') return { ok: true, args: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  if (!isRecord(value)) return { ok: false, error: 'arguments must be a JSON object' };
  return { ok: true, args: value };
}

export function hasInvalidArguments(calls: readonly ToolCall[]): boolean {
  return calls.some((c) => !parseToolArguments(c.function.arguments).ok);
}

/** One distinct (tool, arguments) pair of the batch; identical calls share one. */
interface Execution {
  id: string;
  name: string;
  tool?: Tool;
  args: Record<string, unknown>;
  /** Set when the call cannot run at all (unknown tool, bad arguments). */
  problem?: string;
  result?: ExecutionResult;
}

/** Images: what the tool returned for the model to see (this turn only; see ToolOutput). */
interface ExecutionResult {
  content: string;
  ok: boolean;
  images?: ImageInput[];
}

export interface PreparedBatch {
  /** The calls as they go into history: repaired names, unique ids, arguments that parse. */
  calls: ToolCall[];
  /** Names the model used that match no tool, even after repair. */
  unknownNames: string[];
  executions: Execution[];
  /** executions[callToExecution[i]] answers calls[i]. */
  callToExecution: number[];
}

export function prepareToolCalls(raw: readonly ToolCall[], tools: ReadonlyMap<string, Tool>): PreparedBatch {
  const validNames = [...tools.keys()];
  const calls: ToolCall[] = [];
  const unknownNames: string[] = [];
  const executions: Execution[] = [];
  const byKey = new Map<string, number>();
  const callToExecution: number[] = [];
  const usedIds = new Set<string>();

  raw.forEach((call, index) => {
    // Pairing results to calls needs unique ids; some OpenAI-compatible servers send none or repeat them. A missing
    // one is derived from the call, so the same reply always gets the same ids (tool-call-ids.ts).
    let id = call.id || deterministicCallId(call.function.name, call.function.arguments, index);
    while (usedIds.has(id)) id = `${id}_${index}`;
    usedIds.add(id);

    const repaired = repairToolName(call.function.name, validNames);
    const parsed = parseToolArguments(call.function.arguments);
    const name = repaired ?? call.function.name;
    const args = parsed.ok ? parsed.args : {};
    // Invalid arguments are replaced in history: a provider adapter that parses them must not choke later.
    // What the server attached to the call (Gemini's thought signature) stays with it: it must go back.
    calls.push({
      id,
      type: 'function',
      function: { name, arguments: JSON.stringify(args) },
      ...(call.extra_content ? { extra_content: call.extra_content } : {}),
    });

    let problem: string | undefined;
    if (repaired === null) {
      unknownNames.push(call.function.name);
      problem = `Error: unknown tool "${call.function.name}". Valid tools: ${validNames.join(', ') || '(none)'}.`;
    } else if (!parsed.ok) {
      const preview = call.function.arguments.slice(0, BAD_ARGUMENTS_PREVIEW_CHARS);
      problem = `Error: the arguments for ${name} are not valid JSON (${parsed.error}). Received: ${preview}`;
    }

    const key = problem === undefined ? `${name}\u0000${JSON.stringify(args)}` : `problem\u0000${index}`;
    let slot = byKey.get(key);
    if (slot === undefined) {
      slot = executions.push({ id, name, tool: problem ? undefined : tools.get(name), args, problem }) - 1;
      byKey.set(key, slot);
    }
    callToExecution.push(slot);
  });
  return { calls, unknownNames, executions, callToExecution };
}

export interface RunBatchOptions {
  signal: AbortSignal;
  toolContext?: Record<string, unknown>;
  emit: (event: AgentEvent) => void;
  /** Around every call that can run (tool-hooks.ts), in order. */
  hooks?: readonly ToolHook[];
}

/** Runs a prepared batch and returns one tool message per call, in call order. */
export async function executeToolCalls(batch: PreparedBatch, opts: RunBatchOptions): Promise<ChatMessage[]> {
  const parallel = canRunInParallel(batch.executions);
  await runPool(batch.executions, parallel ? MAX_PARALLEL_TOOLS : 1, (e) => runOne(e, opts));

  return batch.calls.map((call, i) => {
    const result = batch.executions[batch.callToExecution[i]].result;
    const message: ChatMessage = { role: 'tool', tool_call_id: call.id, tool_name: call.function.name, content: result?.content ?? CANCELLED_RESULT };
    if (result?.images?.length) message.images = result.images;
    return message;
  });
}

async function runOne(execution: Execution, opts: RunBatchOptions): Promise<void> {
  // A tool that has not started when the user interrupts does not start.
  if (opts.signal.aborted) return;
  const { id, name, args } = execution;
  opts.emit({ type: 'tool_start', id, name, args });
  const started = performance.now();
  execution.result = await invoke(execution, opts);
  opts.emit({
    type: 'tool_end',
    id,
    name,
    ok: execution.result.ok,
    durationMs: Math.round(performance.now() - started),
    preview: execution.result.content.slice(0, TOOL_PREVIEW_CHARS),
  });
}

async function invoke(execution: Execution, opts: RunBatchOptions): Promise<ExecutionResult> {
  if (execution.problem !== undefined || execution.tool === undefined) {
    return { content: execution.problem ?? `Error: unknown tool "${execution.name}".`, ok: false };
  }
  const hooks = opts.hooks ?? [];
  const context = { ...opts.toolContext, ...(hooks.length > 0 && { [TOOL_HOOKS_CONTEXT_KEY]: hooks }) };
  const call: ToolCallInfo = { id: execution.id, name: execution.name, args: execution.args, tool: execution.tool, signal: opts.signal, context };
  const started = performance.now();
  let ran = false;
  let result: ExecutionResult;
  try {
    const verdict = await runBeforeHooks(hooks, call);
    if (verdict.action === 'deny') {
      result = { content: verdict.result, ok: false };
    } else {
      ran = true;
      const output = toToolOutput(await execution.tool.execute(execution.args, { ...context, signal: opts.signal }));
      // Sanitise after cutting: the cut may split a surrogate pair.
      const content = sanitizeText(truncateResult(String(output.content)));
      result = output.images?.length ? { content, ok: true, images: output.images } : { content, ok: true };
    }
  } catch (err) {
    if (opts.signal.aborted) return { content: CANCELLED_RESULT, ok: false };
    const message = err instanceof Error ? err.message : String(err);
    result = { content: `Error: ${execution.name} failed: ${message}`, ok: false };
  }
  const outcome = { content: result.content, ok: result.ok, ran, durationMs: Math.round(performance.now() - started) };
  for (const failure of await runAfterHooks(hooks, call, outcome)) opts.emit({ type: 'status', kind: 'info', message: `tool hook failed: ${failure}` });
  return result;
}

/** Results over MAX_TOOL_RESULT_CHARS are cut, with a note so the model knows it saw only the start. */
export function truncateResult(text: string): string {
  if (text.length <= MAX_TOOL_RESULT_CHARS) return text;
  const dropped = text.length - MAX_TOOL_RESULT_CHARS;
  return `${text.slice(0, MAX_TOOL_RESULT_CHARS)}\n\n[truncated: ${dropped} more characters not shown]`;
}

/** Runs `work` over `items` with at most `limit` in flight, starting them in order. */
async function runPool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
