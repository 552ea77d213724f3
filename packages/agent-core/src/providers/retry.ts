/**
 * The pieces of a model call's retries: the policy, jittered exponential backoff, and a wait that an interrupt
 * ends at once. The retry loop itself, the one owner of model-call retries, is `withRetries` in
 * loop/call-model.ts.
 */
import { ProviderError, type ProviderErrorKind } from './types.js';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out: the call counts as failed and falls back. */
  maxRetryAfterMs: number;
  /** [0, 1); injectable so tests are deterministic. */
  random: () => number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 2_000,
  maxDelayMs: 60_000,
  maxRetryAfterMs: 120_000,
  random: Math.random,
};

/** Failures that may pass on their own. rate_limit is here too, but only retried when no fallback is left. */
const TRANSIENT_KINDS: ReadonlySet<ProviderErrorKind> = new Set(['rate_limit', 'overloaded', 'server_error', 'timeout', 'format_error', 'unknown']);

export function isTransient(err: ProviderError): boolean {
  return TRANSIENT_KINDS.has(err.kind);
}

/** Delay before retry number `retry` (1-based): half fixed, half random, so many clients do not retry in step. */
export function backoffDelay(retry: number, policy: RetryPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (policy.random() * ceiling) / 2);
}

/** Resolves after `ms`, or rejects with a ProviderError of kind 'aborted' as soon as `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal): ProviderError {
  return new ProviderError('aborted', 'aborted by user interrupt', { cause: signal.reason });
}

/** Anything a provider throws, as a ProviderError (providers should already classify; this is the safety net). */
export function toProviderError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError('unknown', message, { cause: err });
}
