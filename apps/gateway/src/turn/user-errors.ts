/**
 * Short, actionable texts for what went wrong, never a stack trace: one for each provider error kind, and one
 * for anything a turn throws (named by its type, so a bug report has something to go on). The user-facing errors
 * policy that sends the latter is in turn/pipeline.ts (answerFailure).
 */
import { ProviderError, StoreBusyError, type ProviderErrorKind } from '@herald/agent-core';
import { SessionModelError } from '../features/sessions/models.js';
import { ModelNotConfiguredError } from '../support/config/providers.js';

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
      return '⚠️ The configured model was not found. Ask the bot admin to check HERALD_MODEL (or pick another with /model).';
    case 'timeout':
    case 'server_error':
      return '⚠️ The AI provider did not answer properly. Please try again.';
    default:
      return `⚠️ Something went wrong (${kind}). Please try again.`;
  }
}

/** The reply for an exception thrown by a turn (the loop reports provider errors itself; this is the rest). */
export function turnFailureReply(err: unknown): string {
  if (err instanceof ProviderError) return userFacingError(err.kind);
  if (err instanceof SessionModelError || err instanceof ModelNotConfiguredError) {
    return '⚠️ The model chosen for this conversation cannot be used right now. Pick another with /model, or /model default.';
  }
  if (err instanceof StoreBusyError) return '⏳ I am very busy right now. Please send that again in a moment.';
  return userFacingError(err instanceof Error ? err.name : typeof err);
}
