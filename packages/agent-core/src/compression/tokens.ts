/**
 * Token accounting for compression decisions. The API's reported prompt size is the truth when we have it; before
 * the first call (or for a history at rest) characters / 4 is the estimate Hermes uses, close enough to decide
 * "is it time to compress" without shipping a tokenizer per model.
 */
import type { ChatMessage } from '../types.js';
import type { ToolSchema } from '../providers/types.js';

export const CHARS_PER_TOKEN = 4;
/** Role, separators and ids cost tokens too; a flat allowance per message keeps many tiny messages honest. */
const MESSAGE_OVERHEAD_CHARS = 16;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** Characters a message puts on the wire: text, reasoning and the whole tool-call envelope. */
export function messageChars(m: ChatMessage): number {
  let chars = MESSAGE_OVERHEAD_CHARS + (m.content?.length ?? 0) + (m.reasoning?.length ?? 0);
  if (m.tool_calls && m.tool_calls.length > 0) chars += JSON.stringify(m.tool_calls).length;
  if (m.tool_call_id) chars += m.tool_call_id.length;
  return chars;
}

export function estimateMessageTokens(m: ChatMessage): number {
  return Math.ceil(messageChars(m) / CHARS_PER_TOKEN);
}

export function estimateMessagesTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += messageChars(m);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** A whole request: system prompt, messages and the tool schemas (which can be thousands of tokens). */
export function estimateRequestTokens(systemPrompt: string, messages: readonly ChatMessage[], tools: readonly ToolSchema[] = []): number {
  const toolChars = tools.length > 0 ? JSON.stringify(tools).length : 0;
  let chars = systemPrompt.length + toolChars;
  for (const m of messages) chars += messageChars(m);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
