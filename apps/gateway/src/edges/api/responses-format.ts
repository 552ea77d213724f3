/**
 * The Responses API on the wire: the `response` object and, streaming, its typed events in the order OpenAI sends
 * them — response.created, response.in_progress, response.output_item.added, response.content_part.added,
 * response.output_text.delta…, response.output_text.done, response.content_part.done, response.output_item.done,
 * response.completed (or response.failed) — each with its sequence_number.
 */
import { randomBytes } from 'node:crypto';
import type { ApiError } from './errors.js';
import type { Answer, TurnUsage } from './exchange.js';
import type { SseEvent, StreamFormat } from './sse.js';

export interface ResponseMeta {
  id: string;
  messageId: string;
  createdAt: number;
  model: string;
}

export function responseMeta(model: string): ResponseMeta {
  return {
    id: `resp_${randomBytes(16).toString('hex')}`,
    messageId: `msg_${randomBytes(16).toString('hex')}`,
    createdAt: Math.floor(Date.now() / 1000),
    model,
  };
}

function responseUsage(u: TurnUsage | null): Record<string, unknown> {
  const input = u ? u.input + u.cacheRead + u.cacheWrite : 0;
  const output = u?.output ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u?.cacheRead ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

const textPart = (text: string): Record<string, unknown> => ({ type: 'output_text', text, annotations: [], logprobs: [] });

function messageItem(meta: ResponseMeta, text: string | null): Record<string, unknown> {
  return {
    type: 'message',
    id: meta.messageId,
    status: text === null ? 'in_progress' : 'completed',
    role: 'assistant',
    content: text === null ? [] : [textPart(text)],
  };
}

type Status = 'in_progress' | 'completed' | 'failed';

export function responseJson(
  meta: ResponseMeta,
  status: Status,
  text: string | null,
  usage: TurnUsage | null,
  error: ApiError | null = null,
): Record<string, unknown> {
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status,
    background: false,
    error: error ? { code: error.code ?? 'server_error', message: error.message } : null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: meta.model,
    output: text === null ? [] : [messageItem(meta, text)],
    parallel_tool_calls: false,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: status === 'completed' ? responseUsage(usage) : null,
    user: null,
    metadata: {},
  };
}

export function responsesStreamFormat(meta: ResponseMeta): StreamFormat {
  let sequence = 0;
  const ev = (type: string, fields: Record<string, unknown>): SseEvent => ({ event: type, data: { type, sequence_number: sequence++, ...fields } });
  const at = { item_id: meta.messageId, output_index: 0, content_index: 0 };
  return {
    open: () => [
      ev('response.created', { response: responseJson(meta, 'in_progress', null, null) }),
      ev('response.in_progress', { response: responseJson(meta, 'in_progress', null, null) }),
      ev('response.output_item.added', { output_index: 0, item: messageItem(meta, null) }),
      ev('response.content_part.added', { ...at, part: textPart('') }),
    ],
    text: (delta) => [ev('response.output_text.delta', { ...at, delta, logprobs: [] })],
    success: (answer: Answer, shown: string) => [
      ev('response.output_text.done', { ...at, text: shown, logprobs: [] }),
      ev('response.content_part.done', { ...at, part: textPart(shown) }),
      ev('response.output_item.done', { output_index: 0, item: messageItem(meta, shown) }),
      ev('response.completed', { response: responseJson(meta, 'completed', shown, answer.usage) }),
    ],
    failure: (error: ApiError) => [ev('response.failed', { response: responseJson(meta, 'failed', null, null, error) })],
  };
}
