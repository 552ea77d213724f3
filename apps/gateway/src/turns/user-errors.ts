/**
 * Short, actionable texts for what went wrong, never a stack trace.
 */
import type { ProviderErrorKind } from '@herald/agent-core';

export function userFacingError(kind: ProviderErrorKind | string): string {
  switch (kind) {
    case 'context_overflow':
    case 'payload_too_large':
      return '⚠️ This conversation is too long for the model. Send /compress to summarise it, or /new to start fresh.';
    case 'auth':
      return '⚠️ The AI provider refused our credentials. Ask the bot admin to check the API key.';
    case 'rate_limit':
      return '⏳ The AI provider is rate limiting us. Please try again in a minute.';
    case 'overloaded':
      return '⏳ The AI provider is overloaded right now. Please try again shortly.';
    case 'model_not_found':
      return '⚠️ The configured model was not found. Ask the bot admin to check HERALD_MODEL.';
    case 'timeout':
    case 'server_error':
      return '⚠️ The AI provider did not answer properly. Please try again.';
    default:
      return `⚠️ Something went wrong (${kind}). Please try again.`;
  }
}
