/**
 * The cheap pass before any model call: old tool outputs (file dumps, command logs) are usually the bulk of a
 * long history and rarely needed verbatim later. Outputs before the protected tail that are longer than a
 * placeholder are replaced by one.
 */
import type { ChatMessage } from '../base/types.js';

export const PRUNED_TOOL_OUTPUT = '[Old tool output cleared to save context space]';
export const PRUNE_MIN_CHARS = 200;

/** A copy of `messages` with tool outputs before index `end` over PRUNE_MIN_CHARS replaced by the placeholder. */
export function pruneOldToolOutputs(messages: readonly ChatMessage[], end: number): { messages: ChatMessage[]; pruned: number } {
  let pruned = 0;
  const out = messages.map((m, i) => {
    if (i >= end || m.role !== 'tool' || (m.content?.length ?? 0) <= PRUNE_MIN_CHARS) return m;
    pruned++;
    // Images it returned go with it.
    const { images: _images, ...rest } = m;
    return { ...rest, content: PRUNED_TOOL_OUTPUT };
  });
  return { messages: out, pruned };
}
