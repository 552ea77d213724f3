/**
 * Where to cut: a protected head (the first exchange, which usually states the task), a protected tail (the
 * recent context, by token budget but never fewer than a floor of messages), and the middle that gets summarised.
 * A cut never falls between an assistant's tool calls and their results: providers reject orphans on either side.
 */
import type { ChatMessage } from '../base/types.js';
import { estimateMessageTokens } from './tokens.js';

export const HEAD_MESSAGES = 3;
export const MIN_TAIL_MESSAGES = 20;

export interface SplitOptions {
  headMessages?: number;
  minTailMessages?: number;
  /** The tail takes messages from the end while they fit this budget, and at least `minTailMessages`. */
  tailBudgetTokens: number;
}

/** `messages[0, headEnd)` is the head, `[headEnd, tailStart)` the middle, `[tailStart, n)` the tail. */
export interface Split {
  headEnd: number;
  tailStart: number;
}

export function splitForCompression(messages: readonly ChatMessage[], opts: SplitOptions): Split {
  const n = messages.length;
  let headEnd = Math.min(opts.headMessages ?? HEAD_MESSAGES, n);
  // The head may end on a call: its results belong with it.
  while (headEnd < n && messages[headEnd].role === 'tool') headEnd++;

  const minTail = opts.minTailMessages ?? MIN_TAIL_MESSAGES;
  let tailStart = n;
  let tokens = 0;
  while (tailStart > headEnd) {
    const cost = estimateMessageTokens(messages[tailStart - 1]);
    if (n - tailStart >= minTail && tokens + cost > opts.tailBudgetTokens) break;
    tokens += cost;
    tailStart--;
  }
  // The tail may start on a result: take the assistant message that made the call as well.
  while (tailStart > headEnd && tailStart < n && messages[tailStart].role === 'tool') tailStart--;
  return { headEnd, tailStart: Math.max(tailStart, headEnd) };
}
