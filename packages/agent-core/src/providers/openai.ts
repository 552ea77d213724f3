/**
 * Chat Completions provider: OpenAI itself or any OpenAI-compatible server (vLLM, Ollama, llama.cpp,
 * OpenRouter, DeepSeek). The internal messages are already OpenAI-shaped, so conversion only strips our
 * own fields and prepends the system prompt.
 */
import OpenAI from 'openai';
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage } from '../types.js';
import { supportsVision } from './models.js';
import { DEFAULT_IDLE_TIMEOUT_MS, runGuarded } from './guard.js';
import { ChatStreamAccumulator } from './openai-stream.js';
import type { Provider, ProviderConfig, ToolSchema } from './types.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** Local servers need no key, but the SDK refuses to start without one. */
const NO_KEY_PLACEHOLDER = 'no-key';

export function createOpenAIProvider(cfg: ProviderConfig): Provider {
  const baseURL = cfg.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  // Retries are the agent loop's job (it also knows about fallbacks); the SDK must not retry behind its back.
  const client = new OpenAI({ apiKey: cfg.apiKey || NO_KEY_PLACEHOLDER, baseURL, maxRetries: 0, timeout: cfg.timeoutMs });
  // OpenAI's reasoning models reject `max_tokens`; most compatible servers only understand `max_tokens`.
  const maxTokensField = isOpenAIHost(baseURL) ? 'max_completion_tokens' : 'max_tokens';
  const vision = cfg.vision ?? supportsVision(cfg.model);

  return {
    name: cfg.provider,
    model: cfg.model,
    apiMode: 'chat_completions',
    vision,
    complete: (req) =>
      runGuarded(req.signal, cfg.timeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, async (guard) => {
        const params: ChatCompletionCreateParamsStreaming = {
          model: cfg.model,
          messages: toChatMessages(req.systemPrompt, req.messages, vision),
          ...(req.tools.length > 0 ? { tools: req.tools.map(toChatTool) } : {}),
          ...(req.tools.length > 0 && req.toolChoice === 'none' ? { tool_choice: 'none' as const } : {}),
          ...(req.maxTokens === undefined ? {} : { [maxTokensField]: req.maxTokens }),
          stream: true,
          stream_options: { include_usage: true },
        };
        const stream = await client.chat.completions.create(params, { signal: guard.signal });
        const acc = new ChatStreamAccumulator(req);
        for await (const chunk of stream) {
          guard.touch();
          acc.add(chunk);
        }
        return acc.result(cfg.model);
      }),
  };
}

/**
 * The system prompt first, then the history with only the fields the API knows. A user message's images become
 * `image_url` parts with a data URL after its text; `vision` false leaves them out (their text notes stay).
 */
export function toChatMessages(systemPrompt: string, messages: ChatMessage[], vision = true): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (systemPrompt !== '') out.push({ role: 'system', content: systemPrompt });
  for (const m of messages) out.push(toChatMessage(m, vision));
  return out;
}

function toChatMessage(m: ChatMessage, vision: boolean): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content ?? '' };
    case 'user': {
      if (!vision || !m.images?.length) return { role: 'user', content: m.content ?? '' };
      const parts: ChatCompletionContentPart[] = m.content ? [{ type: 'text', text: m.content }] : [];
      for (const img of m.images) parts.push({ type: 'image_url', image_url: { url: `data:${img.mimeType};base64,${img.data}` } });
      return { role: 'user', content: parts };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: m.content ?? '' };
    case 'assistant': {
      if (!m.tool_calls?.length) return { role: 'assistant', content: m.content ?? '' };
      return {
        role: 'assistant',
        content: m.content || null,
        tool_calls: m.tool_calls.map((tc) => ({
          id: tc.id,
          type: 'function',
          function: { name: tc.function.name, arguments: tc.function.arguments },
        })),
      };
    }
  }
}

function toChatTool(t: ToolSchema): ChatCompletionTool {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } };
}

function isOpenAIHost(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}
