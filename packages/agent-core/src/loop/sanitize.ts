/**
 * Input and history hygiene run before every API call. Providers reject malformed histories with a 400 that no
 * retry fixes, so the loop repairs them instead: DESIGN.md's alternation rule (never two user or two assistant
 * messages in a row; only tool repeats; every tool call has exactly one result).
 */
import type { ChatMessage, ToolCall } from '../base/types.js';

/** The result given to a tool call that has none (e.g. the process died between the call and its result). */
export const MISSING_RESULT_TEXT = 'Error: this tool call has no result (it was interrupted before it finished).';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Lone UTF-16 surrogates (cut emoji, bad client input) become U+FFFD: they are invalid in the JSON we send. */
export function sanitizeText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * Returns a history that obeys the alternation rule, without mutating the input:
 * - system messages are dropped (the system prompt travels separately);
 * - a tool result counts only right after the assistant message that made the call, once per call id;
 * - a call without a result gets a stub result;
 * - an assistant message with neither text nor tool calls is dropped;
 * - consecutive user messages, or consecutive assistant messages, are merged into one.
 */
export function sanitizeHistory(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  // Calls of the latest assistant message that still wait for a result, in call order.
  let open = new Map<string, ToolCall>();

  const closeOpenCalls = (): void => {
    for (const call of open.values()) {
      out.push({ role: 'tool', content: MISSING_RESULT_TEXT, tool_call_id: call.id, tool_name: call.function.name });
    }
    open = new Map();
  };

  for (const message of messages) {
    if (message.role === 'system') continue;
    if (message.role === 'tool') {
      const id = message.tool_call_id;
      if (id === undefined || !open.has(id)) continue;
      open.delete(id);
      out.push({ ...message });
      continue;
    }
    closeOpenCalls();
    // An empty reply carries nothing, and Anthropic rejects empty text blocks; dropping it lets the merge below
    // keep the alternation.
    if (message.role === 'assistant' && !message.content && !message.tool_calls?.length) continue;
    const last = out.at(-1);
    if (last && last.role === message.role && last.tool_calls === undefined) {
      out[out.length - 1] = mergeMessages(last, message);
    } else {
      out.push(copyMessage(message));
    }
    for (const call of message.tool_calls ?? []) open.set(call.id, call);
  }
  closeOpenCalls();
  return out;
}

function copyMessage(message: ChatMessage): ChatMessage {
  const copy: ChatMessage = { ...message };
  if (message.tool_calls) copy.tool_calls = message.tool_calls.map((c) => ({ ...c, function: { ...c.function } }));
  if (copy.tool_calls?.length === 0) delete copy.tool_calls;
  return copy;
}

/** Joins two same-role messages; `second` may carry tool calls (the first never does: its results would follow). */
function mergeMessages(first: ChatMessage, second: ChatMessage): ChatMessage {
  const merged = copyMessage(second);
  merged.content = joinText(first.content, second.content);
  const reasoning = joinText(first.reasoning ?? null, second.reasoning ?? null);
  if (reasoning !== null) merged.reasoning = reasoning;
  // Files and images of both stay with the merged text.
  const attachments = [...(first.attachments ?? []), ...(second.attachments ?? [])];
  if (attachments.length > 0) merged.attachments = attachments;
  const images = [...(first.images ?? []), ...(second.images ?? [])];
  if (images.length > 0) merged.images = images;
  return merged;
}

function joinText(a: string | null, b: string | null): string | null {
  if (!a) return b ?? a;
  if (!b) return a;
  return `${a}\n\n${b}`;
}
