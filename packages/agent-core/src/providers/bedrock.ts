/**
 * AWS Bedrock provider (`bedrock:` prefix): the Converse API, streamed with ConverseStream through
 * @aws-sdk/client-bedrock-runtime. Region and credentials come from the standard AWS chain (AWS_REGION,
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, AWS_PROFILE and ~/.aws, instance roles); the
 * endpoint from AWS_ENDPOINT_URL_BEDROCK_RUNTIME or the config's base URL (a local stand-in, a VPC endpoint).
 */
import { BedrockRuntimeClient, ConverseStreamCommand, type ConverseStreamCommandInput } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { supportsCachePoints, toConverseRequest, toConverseTool } from './bedrock-convert.js';
import { ConverseStreamAccumulator } from './bedrock-stream.js';
import { modelInfo, supportsVision } from './models.js';
import { ClientPool, runProviderRequest } from './request.js';
import { maxTokensWithThinking, thinkingBudgetOf } from './thinking.js';
import { retireAgent } from './transport.js';
import type { KeySource, Provider, ProviderConfig } from './types.js';

/** Converse needs no max tokens, but the model's own default can be tiny; ask for a generous answer. */
export const BEDROCK_DEFAULT_MAX_TOKENS = 8_192;

/** AWS signs with its credential chain, not an API key: one "key" whose client the pool rebuilds on stalls. */
const AWS_CHAIN: KeySource = {
  label: 'bedrock',
  size: 1,
  acquire: async (tried) => (tried.has('aws') ? undefined : { key: '', fingerprint: 'aws' }),
  cool: async () => undefined,
};

export function createBedrockProvider(cfg: ProviderConfig): Provider {
  const clients = new ClientPool(() => {
    // A private socket pool per client, so a rebuild after a stall really starts on fresh connections.
    const httpAgent = new HttpAgent({ keepAlive: true });
    const httpsAgent = new HttpsAgent({ keepAlive: true });
    const client = new BedrockRuntimeClient({
      ...(cfg.region ? { region: cfg.region } : {}),
      ...(cfg.baseUrl ? { endpoint: cfg.baseUrl } : {}),
      // Retries are the agent loop's job; the SDK's own would multiply them.
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler({ httpAgent, httpsAgent, connectionTimeout: cfg.timeoutMs, requestTimeout: cfg.timeoutMs }),
    });
    return {
      client,
      // Not client.destroy(): that would cut the other turns' streams on these agents (transport.ts says more).
      retire: () => {
        retireAgent(httpAgent);
        retireAgent(httpsAgent);
      },
    };
  });
  const cache = supportsCachePoints(cfg.model);
  const vision = cfg.vision ?? supportsVision(cfg.model);
  const maxTokens = cfg.maxTokens ?? Math.min(BEDROCK_DEFAULT_MAX_TOKENS, modelInfo(cfg.model)?.maxOutput ?? Infinity);
  // Claude on Bedrock thinks through the Anthropic field, passed as an additional model request field.
  const thinkingBudget = /claude/i.test(cfg.model) ? thinkingBudgetOf(cfg) : undefined;
  const thinking = thinkingBudget === undefined ? {} : { additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: thinkingBudget } } };

  return {
    name: cfg.provider,
    model: cfg.model,
    apiMode: 'bedrock_converse',
    vision,
    maxTokens,
    complete: (req) =>
      runProviderRequest(cfg, AWS_CHAIN, clients, req.signal, async (client, guard) => {
        const { system, messages } = toConverseRequest(req.systemPrompt, req.messages, cache, vision, thinkingBudget !== undefined);
        const input: ConverseStreamCommandInput = {
          modelId: cfg.model,
          messages,
          ...(system.length > 0 ? { system } : {}),
          inferenceConfig: { maxTokens: maxTokensWithThinking(req.maxTokens ?? maxTokens, thinkingBudget) },
          ...thinking,
          // Converse refuses toolUse/toolResult history without a toolConfig, so the tools stay described;
          // Converse has no "none" tool choice, so a text-only answer relies on the prompt that asks for one.
          ...(req.tools.length > 0 ? { toolConfig: { tools: req.tools.map(toConverseTool) } } : {}),
        };
        const response = await client.send(new ConverseStreamCommand(input), { abortSignal: guard.signal });
        const acc = new ConverseStreamAccumulator(req);
        for await (const event of response.stream ?? []) {
          guard.touch();
          acc.add(event);
        }
        return acc.result(cfg.model);
      }),
  };
}
