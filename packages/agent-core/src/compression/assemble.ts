/**
 * Putting head, summary and tail back together without breaking the alternation rule (never two user or two
 * assistant messages in a row). The summary takes whichever role fits between its neighbours; when the head ends
 * on one role and the tail starts with the other, no standalone role fits, so the summary is merged into the
 * first tail message instead.
 */
import type { ChatMessage, Role } from '../base/types.js';
import { formatSummary, prependSummary } from './summary-text.js';

export function assemble(head: readonly ChatMessage[], summaryBody: string, tail: readonly ChatMessage[]): ChatMessage[] {
  const role = summaryRole(head.at(-1)?.role, tail[0]?.role);
  if (role !== null) return [...head, { role, content: formatSummary(summaryBody) }, ...tail];
  const [first, ...rest] = tail;
  return [...head, { ...first, content: prependSummary(summaryBody, first.content) }, ...rest];
}

/** A role that differs from both neighbours, preferring user (a summary reads as context handed to the model). */
function summaryRole(before: Role | undefined, after: Role | undefined): 'user' | 'assistant' | null {
  for (const role of ['user', 'assistant'] as const) {
    if (role !== before && role !== after) return role;
  }
  return null;
}
