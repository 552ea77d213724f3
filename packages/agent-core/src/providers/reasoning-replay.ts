/**
 * The reasoning state OpenAI-compatible servers hand out and want back on later requests, in their own fields (not
 * in the SDK's types): DeepSeek's `reasoning_content` on tool-call turns, OpenRouter's `reasoning_details`, and
 * Gemini's `extra_content` (the thought signature) on each tool call. Never sent to OpenAI itself.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatMessage } from '../base/types.js';
import { REASONING_CONTENT_FORMAT } from './openai-stream.js';
import { replayedDetails } from './reasoning-details.js';

/** Who the request goes to, and whether OpenRouter's details go too (not on the retry after a refused signature). */
export interface ReplayTarget {
  model: string;
  details: boolean;
}

/** Some message of the history carries details `model` would get back. */
export function hasReplayedDetails(messages: readonly ChatMessage[], model: string): boolean {
  return messages.some((m) => m.role === 'assistant' && replayedDetails(m.reasoning_details, model).length > 0);
}

/** `message` (the wire form of `m`) with what the server gave `m` for the target's model to send back. */
export function withReplayedReasoning(message: ChatCompletionMessageParam, m: ChatMessage, target: ReplayTarget): ChatCompletionMessageParam {
  if (m.role !== 'assistant') return message;
  const extra: Record<string, unknown> = {};
  if (m.reasoning && m.reasoning_details?.some((d) => d.format === REASONING_CONTENT_FORMAT)) extra.reasoning_content = m.reasoning;
  const details = target.details ? replayedDetails(m.reasoning_details, target.model) : [];
  if (details.length > 0) extra.reasoning_details = details;
  if ('tool_calls' in message && message.tool_calls && m.tool_calls?.some((tc) => tc.extra_content)) {
    extra.tool_calls = message.tool_calls.map((tc, i) => {
      const own = m.tool_calls?.[i]?.extra_content;
      return own ? { ...tc, extra_content: own } : tc;
    });
  }
  return Object.assign(message, extra);
}
