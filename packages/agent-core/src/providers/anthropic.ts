/**
 * Anthropic Messages provider. Conversion lives in anthropic-convert.ts, stream folding in anthropic-stream.ts;
 * this file only builds the request and runs it under the guard.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsStreaming } from '@anthropic-ai/sdk/resources/messages';
import { anthropicCredentials } from './anthropic-auth.js';
import { toAnthropicRequest, toAnthropicTool } from './anthropic-convert.js';
import { NO_THINKING, withSignatureRecovery, type ThinkingReplay } from './signature-recovery.js';
import { MessageStreamAccumulator } from './anthropic-stream.js';
import { modelInfo, supportsVision } from './models.js';
import { ClientPool, keySourceOf, runProviderRequest } from './request.js';
import { maxTokensWithThinking, thinkingBudgetOf } from './thinking.js';
import { createTransport } from './transport.js';
import type { CompletionResult, Provider, ProviderConfig } from './types.js';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
/**
 * Anthropic requires max_tokens. Asking for a model's full output cap makes prompt + max_tokens overflow the
 * window sooner, so the default is a generous answer size, lowered for models whose cap is smaller.
 */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 16_384;

export function createAnthropicProvider(cfg: ProviderConfig): Provider {
  // HERALD_THINKING_BUDGET, or the reasoning effort mapped to a budget (thinking.ts).
  const budget = thinkingBudgetOf(cfg);
  const thinking = budget === undefined ? undefined : { type: 'enabled' as const, budget_tokens: budget };
  // Retries are the agent loop's job (it also knows about fallbacks); the SDK must not retry behind its back.
  const clients = new ClientPool((key) => {
    const transport = createTransport();
    const client = new Anthropic({
      ...anthropicCredentials(key.key, thinking !== undefined),
      baseURL: cfg.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL,
      maxRetries: 0,
      timeout: cfg.timeoutMs,
      fetch: transport.fetch,
    });
    return { client, retire: transport.retire };
  });
  const keys = keySourceOf(cfg);
  const defaultMaxTokens = cfg.maxTokens ?? Math.min(ANTHROPIC_DEFAULT_MAX_TOKENS, modelInfo(cfg.model)?.maxOutput ?? Infinity);
  const vision = cfg.vision ?? supportsVision(cfg.model);

  return {
    name: cfg.provider,
    model: cfg.model,
    apiMode: 'anthropic_messages',
    vision,
    maxTokens: defaultMaxTokens,
    complete: (req) => {
      const send = (replay: ThinkingReplay): Promise<CompletionResult> =>
        runProviderRequest(cfg, keys, clients, req.signal, async (client, guard) => {
          const { system, messages } = toAnthropicRequest(req.systemPrompt, req.messages, vision, replay.thinkingBlocks);
          const maxTokens = req.maxTokens ?? defaultMaxTokens;
          const params: MessageCreateParamsStreaming = {
            model: cfg.model,
            // The thinking budget counts against max_tokens, which must stay above it with room for the answer.
            max_tokens: maxTokensWithThinking(maxTokens, budget),
            ...(thinking && replay.thinking ? { thinking } : {}),
            messages,
            ...(system.length > 0 ? { system } : {}),
            ...(req.tools.length > 0 ? { tools: req.tools.map(toAnthropicTool) } : {}),
            ...(req.tools.length > 0 && req.toolChoice === 'none' ? { tool_choice: { type: 'none' as const } } : {}),
            stream: true,
          };
          const stream = await client.messages.create(params, guard.sdkOptions);
          const acc = new MessageStreamAccumulator(req);
          for await (const event of stream) {
            guard.touch();
            acc.add(event);
          }
          return acc.result(cfg.model);
        });
      // Signed thinking goes with the request only when extended thinking is on: only then can the API refuse it.
      return thinking !== undefined ? withSignatureRecovery(req, send) : send(NO_THINKING);
    },
  };
}
