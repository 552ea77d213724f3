/**
 * Before a conversation loses its details (compression summarises the middle away; /new starts over), the model
 * gets one call that can only use the memory tool, to save what should outlive the conversation. Best effort:
 * a failure is reported in the result and never blocks the reset or the compression.
 */
import type { ChatMessage, ToolCall } from '../base/types.js';
import type { Provider } from '../providers/types.js';
import type { SessionStore } from '../store/session-store.js';
import { parseToolArguments } from '../loop/execute-tools.js';
import { sanitizeHistory } from '../loop/transcript.js';
import { toToolOutput, toolSchemas } from '../tools/registry.js';
import { MemoryStore } from './memory-store.js';
import { MEMORY_TOOL, createMemoryTool, renderMemoryBlock } from './memory.js';

/** Room for a few short memory edits; the call says nothing else. */
const FLUSH_MAX_TOKENS = 1_024;

export type FlushReason = 'compression' | 'reset';

export interface FlushMemoryOptions {
  provider: Provider;
  /** The conversation about to be compressed or reset (no system message). */
  history: readonly ChatMessage[];
  /** Whose notes: `platform:userId`. */
  userKey: string;
  store: SessionStore;
  /** The session's system prompt: sending the same one lets the provider reuse its cached prefix. */
  systemPrompt: string;
  reason?: FlushReason;
  signal?: AbortSignal;
}

export interface FlushMemoryResult {
  /** Memory edits that succeeded. */
  saved: number;
  /** One line per attempted edit: the tool's result or its error. */
  results: string[];
  /** Set when the call itself failed (the provider was down, the request was aborted...). */
  error?: string;
}

export function flushPrompt(reason: FlushReason, currentNotes: string | null): string {
  const what = reason === 'compression' ? 'compressed: its details will be summarised away' : 'reset: the user is starting a new conversation';
  return [
    `[This conversation is about to be ${what}.]`,
    'Save anything worth remembering in later conversations with the memory tool: preferences, corrections, facts',
    'about the user or the work that are not saved yet. Do not save the progress of the current task. If nothing',
    'needs saving, answer "nothing to save". Do not answer anything else.',
    currentNotes ? `\nAlready saved:\n${currentNotes}` : '\nNothing is saved yet.',
  ].join(' ');
}

export async function flushMemory(opts: FlushMemoryOptions): Promise<FlushMemoryResult> {
  // Nothing said yet, nothing to remember: skip the call.
  if (!opts.history.some((m) => m.role === 'user')) return { saved: 0, results: [] };
  const tool = createMemoryTool(opts.store);
  const signal = opts.signal ?? new AbortController().signal;
  const notes = renderMemoryBlock(await new MemoryStore(opts.store).snapshot(opts.userKey));
  const messages = sanitizeHistory([...opts.history, { role: 'user', content: flushPrompt(opts.reason ?? 'reset', notes) }]);

  let calls: ToolCall[];
  try {
    const reply = await opts.provider.complete({
      systemPrompt: opts.systemPrompt,
      messages,
      tools: toolSchemas([tool]),
      maxTokens: FLUSH_MAX_TOKENS,
      signal,
    });
    calls = reply.message.tool_calls ?? [];
  } catch (err) {
    return { saved: 0, results: [], error: err instanceof Error ? err.message : String(err) };
  }

  const result: FlushMemoryResult = { saved: 0, results: [] };
  for (const call of calls) {
    if (call.function.name !== MEMORY_TOOL) {
      result.results.push(`Error: only the memory tool can be used here (got ${call.function.name})`);
      continue;
    }
    const parsed = parseToolArguments(call.function.arguments);
    if (!parsed.ok) {
      result.results.push(`Error: invalid arguments (${parsed.error})`);
      continue;
    }
    try {
      result.results.push(toToolOutput(await tool.execute(parsed.args, { signal, userKey: opts.userKey })).content);
      result.saved += 1;
    } catch (err) {
      result.results.push(`Error: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return result;
}
