/**
 * The messages of one turn, kept apart by fate:
 * - context: the session history the turn started from (or a compressed replacement of everything sent so far);
 * - turn: what this turn adds and the caller persists (`newMessages`), starting with the user message;
 * - scaffold: messages sent to the model but never persisted (continuation prompts and the parts they continue,
 *   the final summary request), so the stored history reads as one clean reply;
 * - notes: budget and context-pressure lines added to the last tool result of the next request only;
 * - request context: text after the latest user message's own text in every request (the saved notes), never kept.
 */
import type { ChatMessage } from '../base/types.js';
import { sanitizeHistory } from './sanitize.js';

export class Transcript {
  private context: ChatMessage[];
  private readonly turn: ChatMessage[];
  private scaffold: ChatMessage[] = [];
  /** Index into `turn` of the first message not yet folded into `context` by compression. */
  private unsentFrom = 0;
  private compacted = false;
  private notes: string[] = [];

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
    this.turn.push(...messages);
  }

  /** Adds messages the model must see for the rest of the turn but that are not persisted. */
  appendScaffold(...messages: ChatMessage[]): void {
    this.scaffold.push(...messages);
  }

  clearScaffold(): void {
    this.scaffold = [];
  }

  /** Lines for the model on the last tool result of the requests that follow, until replaced; never persisted. */
  setNotes(notes: readonly string[]): void {
    this.notes = [...notes];
  }

  /** What to send next: sanitised, so every request obeys the alternation rule whatever happened before. */
  forRequest(): ChatMessage[] {
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
