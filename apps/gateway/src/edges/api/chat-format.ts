/**
 * Chat Completions on the wire: the `chat.completion` object and, streaming, `chat.completion.chunk` events ending
 * with `data: [DONE]` (an error after the stream opened is one `{"error": …}` event, which the SDK raises).
 */
import { randomBytes } from 'node:crypto';
import type { ApiError } from './errors.js';
import type { Answer, TurnUsage } from './exchange.js';
import type { SseEvent, StreamFormat } from './sse.js';

interface ChatCompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/** Prompt tokens as OpenAI counts them: cached and cache-written ones included. */
function chatUsage(u: TurnUsage | null): ChatCompletionUsage {
  const prompt = u ? u.input + u.cacheRead + u.cacheWrite : 0;
  const completion = u?.output ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: u?.cacheRead ?? 0 },
  };
}

export interface ChatMeta {
  id: string;
  created: number;
  /** The model name the client asked for (a Herald model from /v1/models). */
  model: string;
}

export function chatMeta(model: string): ChatMeta {
  return { id: `chatcmpl-${randomBytes(12).toString('hex')}`, created: Math.floor(Date.now() / 1000), model };
}

export function chatCompletionJson(meta: ChatMeta, answer: Answer): Record<string, unknown> {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices: [{ index: 0, message: { role: 'assistant', content: answer.text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: chatUsage(answer.usage),
  };
}

export function chatStreamFormat(meta: ChatMeta, includeUsage: boolean): StreamFormat {
  const chunk = (delta: Record<string, unknown>, finish: string | null): SseEvent => ({
    data: {
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    },
  });
  return {
    terminator: '[DONE]',
    open: () => [chunk({ role: 'assistant', content: '' }, null)],
    text: (text) => [chunk({ content: text }, null)],
    success: (answer) => {
      const out = [chunk({}, 'stop')];
      if (includeUsage) {
        out.push({
          data: {
            id: meta.id,
            object: 'chat.completion.chunk',
            created: meta.created,
            model: meta.model,
            system_fingerprint: null,
            choices: [],
            usage: chatUsage(answer.usage),
          },
        });
      }
      return out;
    },
    failure: (error: ApiError) => [{ data: error.body() }],
  };
}
