/**
 * How a key signs Anthropic requests. API keys (`sk-ant-api…`) are plain keys. OAuth access tokens (`sk-ant-oat…`,
 * a Claude subscription's token) are bearer tokens the API accepts only with the `oauth-2025-04-20` beta; the seeds'
 * adapter also sends `interleaved-thinking-2025-05-14` with them, so thinking can go on between tool calls, as it
 * does for API keys with extended thinking on.
 */
import type { ClientOptions } from '@anthropic-ai/sdk';

const ANTHROPIC_OAUTH_PREFIX = 'sk-ant-oat';
const OAUTH_BETA = 'oauth-2025-04-20';
const INTERLEAVED_THINKING_BETA = 'interleaved-thinking-2025-05-14';

function isAnthropicOAuthToken(key: string): boolean {
  return key.startsWith(ANTHROPIC_OAUTH_PREFIX);
}

/** The `anthropic-beta` values a request with this key sends (none for an API key without thinking). */
function anthropicBetas(key: string, thinking: boolean): string[] {
  if (isAnthropicOAuthToken(key)) return [OAUTH_BETA, INTERLEAVED_THINKING_BETA];
  return thinking ? [INTERLEAVED_THINKING_BETA] : [];
}

/** The client's credential and default headers for this key. */
export function anthropicCredentials(key: string, thinking: boolean): Pick<ClientOptions, 'apiKey' | 'authToken' | 'defaultHeaders'> {
  const betas = anthropicBetas(key, thinking);
  const headers = betas.length > 0 ? { defaultHeaders: { 'anthropic-beta': betas.join(',') } } : {};
  return isAnthropicOAuthToken(key) ? { authToken: key, ...headers } : { apiKey: key, ...headers };
}
