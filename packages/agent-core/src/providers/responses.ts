/**
 * OpenAI Responses API provider (`openai-responses:` prefix, or `api_mode: responses` for a model).
 *
 * Reasoning between turns: stateless, with encrypted reasoning and full input replay (`store: false`,
 * `include: ['reasoning.encrypted_content']`). Every request carries the whole history, reasoning items included,
 * so any worker can run the next turn from the store alone; compression, /undo, /retry and fallbacks edit the
 * history freely; and nothing depends on OpenAI keeping a response for us (`previous_response_id` would, and
 * breaks the moment history is rewritten or the account has zero data retention).
 */
import type { ResponseCreateParamsStreaming } from 'openai/resources/responses/responses';
import { OPENAI_DEFAULT_BASE_URL, openAIClients } from './openai.js';
import { isReasoningModel, toResponsesInput, toResponsesTool } from './responses-convert.js';
import { ResponsesStreamAccumulator } from './responses-stream.js';
import { keySourceOf, runProviderRequest } from './request.js';
import type { Provider, ProviderConfig } from './types.js';
import { supportsVision } from './models.js';

export function createResponsesProvider(cfg: ProviderConfig): Provider {
  const clients = openAIClients(cfg, cfg.baseUrl ?? OPENAI_DEFAULT_BASE_URL);
  const keys = keySourceOf(cfg);
  const reasoning = isReasoningModel(cfg.model);
  const vision = cfg.vision ?? supportsVision(cfg.model);

  return {
    name: cfg.provider,
    model: cfg.model,
    vision,
    apiMode: 'responses',
    ...(cfg.maxTokens === undefined ? {} : { maxTokens: cfg.maxTokens }),
    complete: (req) =>
      runProviderRequest(cfg, keys, clients, req.signal, async (client, guard) => {
        const params: ResponseCreateParamsStreaming = {
          model: cfg.model,
          input: toResponsesInput(req.messages, cfg.model, vision),
          ...(req.systemPrompt !== '' ? { instructions: req.systemPrompt } : {}),
          ...(req.tools.length > 0 ? { tools: req.tools.map(toResponsesTool) } : {}),
          ...(req.tools.length > 0 && req.toolChoice === 'none' ? { tool_choice: 'none' as const } : {}),
          ...((req.maxTokens ?? cfg.maxTokens) === undefined ? {} : { max_output_tokens: req.maxTokens ?? cfg.maxTokens }),
          ...(req.cacheKey ? { prompt_cache_key: req.cacheKey } : {}),
          ...(reasoning
            ? {
                include: ['reasoning.encrypted_content' as const],
                reasoning: { summary: 'auto' as const, ...(cfg.reasoningEffort ? { effort: cfg.reasoningEffort } : {}) },
              }
            : {}),
          store: false,
          stream: true,
        };
        const stream = await client.responses.create(params, guard.sdkOptions);
        const acc = new ResponsesStreamAccumulator(req, cfg.model);
        for await (const event of stream) {
          guard.touch();
          acc.add(event);
        }
        return acc.result();
      }),
  };
}
