/**
 * What the model is sent: the messages of one turn, and the hygiene every request goes through.
 *
 * The messages of one turn, kept apart by fate:
 * - context: the session history the turn started from (or a compressed replacement of everything sent so far);
 * - turn: what this turn adds and the caller persists (`newMessages`), starting with the user message;
 * - scaffold: messages sent to the model but never persisted (continuation prompts and the parts they continue,
 *   the final summary request), so the stored history reads as one clean reply;
 * - notes: budget and context-pressure lines added to the last tool result of the next request only;
 * - request context: text after the latest user message's own text in every request (the saved notes), never kept.
 *
 * The hygiene (`sanitizeHistory`, `sanitizeText`, at the end), run before every API call: providers reject malformed
 * histories with a 400 that no retry fixes, so the loop repairs them instead: DESIGN.md's alternation rule (never
 * two user or two assistant messages in a row; only tool repeats; every tool call has exactly one result).
 */
import type { ChatMessage, ToolCall } from '../base/types.js';

export class Transcript {
  private context: ChatMessage[];
  private readonly turn: ChatMessage[];
  private scaffold: ChatMessage[] = [];
  /** Index into `turn` of the first message not yet folded into `context` by compression. */
  private unsentFrom = 0;
  private compacted = false;
  private notes: string[] = [];
  /**
   * The last forRequest() answer, until the transcript changes: the loop asks for the same request twice before the
   * first call (the preflight's estimate, then the call itself), and each answer copies every message of the history.
   */
  private sent: ChatMessage[] | null = null;

  constructor(
    history: readonly ChatMessage[],
    userMessage: ChatMessage,
    private readonly requestContext?: string,
  ) {
    this.context = [...history];
    this.turn = [userMessage];
  }

  /** Adds messages that belong in the session's history. */
  append(...messages: ChatMessage[]): void {
    this.sent = null;
    this.turn.push(...messages);
  }

  /** Adds messages the model must see for the rest of the turn but that are not persisted. */
  appendScaffold(...messages: ChatMessage[]): void {
    this.sent = null;
    this.scaffold.push(...messages);
  }

  clearScaffold(): void {
    this.sent = null;
    this.scaffold = [];
  }

  /** Lines for the model on the last tool result of the requests that follow, until replaced; never persisted. */
  setNotes(notes: readonly string[]): void {
    // The same notes again (none, before most calls) leave the request as it was.
    if (notes.length === this.notes.length && notes.every((n, i) => n === this.notes[i])) return;
    this.sent = null;
    this.notes = [...notes];
  }

  /**
   * What to send next: sanitised, so every request obeys the alternation rule whatever happened before. Asked again
   * with nothing changed, the same messages in a new array (callers may change the array, never the messages).
   */
  forRequest(): ChatMessage[] {
    this.sent ??= this.buildRequest();
    return [...this.sent];
  }

  private buildRequest(): ChatMessage[] {
    const messages = sanitizeHistory([...this.context, ...this.turn.slice(this.unsentFrom), ...this.scaffold]);
    const last = messages.at(-1);
    if (this.notes.length > 0 && last?.role === 'tool') {
      messages[messages.length - 1] = { ...last, content: [last.content ?? '', ...this.notes].join('\n\n') };
    }
    if (this.requestContext) {
      // After the latest user message's own text, not in front: the next turn sends that message without the
      // notes, and its own text is then still the same bytes as here, so the prompt cache reads through it.
      const i = messages.findLastIndex((m) => m.role === 'user');
      if (i >= 0) {
        const own = messages[i].content ?? '';
        const content = own === '' ? this.requestContext : `${own}\n\n${this.requestContext}`;
        messages[i] = { ...messages[i], content, requestContextAt: own.length };
      }
    }
    return messages;
  }

  /** What the session holds so far (context and this turn), without scaffold or notes: what compression may summarise. */
  forCompression(): ChatMessage[] {
    return sanitizeHistory([...this.context, ...this.turn.slice(this.unsentFrom)]);
  }

  /**
   * Compression replaced everything sent so far with `messages`; later requests build on them. Compressors are
   * handed what was sent, so the latest user message may carry the request context: it goes, or it would be
   * stored with the session (and sent twice from then on).
   */
  replaceContext(messages: readonly ChatMessage[]): void {
    this.sent = null;
    this.context = messages.map(withoutRequestContext);
    this.unsentFrom = this.turn.length;
    this.scaffold = [];
    this.compacted = true;
  }

  get newMessages(): ChatMessage[] {
    return [...this.turn];
  }

  /** After compression: the compressed context plus what the turn added since; otherwise undefined. */
  get compactedHistory(): ChatMessage[] | undefined {
    return this.compacted ? [...this.context, ...this.turn.slice(this.unsentFrom)] : undefined;
  }
}

/** The message as the person wrote it: the request context after `requestContextAt` removed. */
function withoutRequestContext(m: ChatMessage): ChatMessage {
  if (m.requestContextAt === undefined) return m;
  const { requestContextAt: at, ...rest } = m;
  return { ...rest, content: m.content === null ? null : m.content.slice(0, at) };
}

/** The result given to a tool call that has none (e.g. the process died between the call and its result). */
export const MISSING_RESULT_TEXT = 'Error: this tool call has no result (it was interrupted before it finished).';

/** Lone UTF-16 surrogates (cut emoji, bad client input) become U+FFFD: they are invalid in the JSON we send. */
export function sanitizeText(text: string): string {
  return text.toWellFormed();
}

/**
 * Returns a history that obeys the alternation rule, without mutating the input (a message it keeps as it is is the
 * input's own object, not a copy: this runs before every model call over the whole history, and no one changes a
 * message once it is made — a changed one is a new object, as here):
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
    // Most messages leave no call open: no new Map for each of them.
    if (open.size === 0) return;
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
      out.push(message);
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
      out.push(message.tool_calls?.length === 0 ? copyMessage(message) : message);
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
