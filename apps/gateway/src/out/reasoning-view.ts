/**
 * The reasoning shown above an answer when a conversation has /reasoning on: the thinking of this turn's
 * replies, as a quote, cut to a readable length. Without /reasoning on it is never shown.
 */
import type { ChatMessage } from '@herald/agent-core';

/** Reasoning longer than this is cut (the start is kept: that is where the plan is). */
export const REASONING_VIEW_MAX_CHARS = 3000;

const reasoned = (m: ChatMessage): boolean => m.role === 'assistant' && Boolean(m.reasoning?.trim());

/** Whether the turn's replies carry any reasoning to show (when none does, the /reasoning switch need not be read). */
export function hasReasoning(turnMessages: readonly ChatMessage[]): boolean {
  return turnMessages.some(reasoned);
}

/** The turn's reasoning as a quote block followed by the answer; the answer alone when there was none. */
export function withReasoning(answer: string, turnMessages: readonly ChatMessage[]): string {
  const thinking = turnMessages
    .filter(reasoned)
    .map((m) => (m.reasoning ?? '').trim())
    .join('\n\n');
  if (thinking === '') return answer;
  const cut = thinking.length > REASONING_VIEW_MAX_CHARS ? `${thinking.slice(0, REASONING_VIEW_MAX_CHARS - 1)}…` : thinking;
  const quoted = cut.split('\n').map((line) => `> ${line}`).join('\n');
  return `💭 Reasoning:\n${quoted}\n\n${answer}`;
}
