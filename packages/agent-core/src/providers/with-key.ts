/**
 * Runs one provider request with a key from the provider's pool, rotating inside the request: a 429 is tried
 * once more on the same key and then on the next key; a 401/402/403 cools the key down and moves on at once.
 * All of this happens inside one `provider.complete`, so rotation never spends the agent loop's retry budget;
 * only when no key is left does the loop see the error (and retry or fall back as usual).
 */
import { abortableSleep } from './retry.js';
import { classifyError } from './errors.js';
import { ProviderError, type KeySource, type PooledKey } from './types.js';

/** Longest wait before the one same-key retry of a 429; a longer Retry-After rotates at once. */
const SAME_KEY_RETRY_MAX_WAIT_MS = 2_000;

export async function withPooledKey<T>(
  source: KeySource,
  signal: AbortSignal,
  attempt: (key: PooledKey) => Promise<T>,
): Promise<T> {
  const tried = new Set<string>();
  let last: ProviderError | undefined;
  for (;;) {
    const key = await source.acquire(tried);
    if (!key) throw last ?? new ProviderError('auth', `${source.label}: no API key available`);
    tried.add(key.fingerprint);
    try {
      return await attempt(key);
    } catch (raw) {
      let err = classifyError(raw);
      // With one key there is nowhere to rotate to: the loop's own retry and fallback take it from here.
      if (source.size === 1 || signal.aborted) throw err;
      if (err.kind === 'rate_limit') {
        const wait = err.retryAfterMs ?? 0;
        if (wait > SAME_KEY_RETRY_MAX_WAIT_MS) {
          await source.cool(key, err);
          last = err;
          continue;
        }
        await abortableSleep(wait, signal);
        try {
          return await attempt(key);
        } catch (again) {
          err = classifyError(again);
          if (signal.aborted) throw err;
        }
      }
      if (!isKeyRefusal(err)) throw err;
      await source.cool(key, err);
      last = err;
    }
  }
}

/** The key itself is the problem: rate limited, refused, or out of credit. */
function isKeyRefusal(err: ProviderError): boolean {
  return err.kind === 'rate_limit' || (err.kind === 'auth' && (err.status === 401 || err.status === 402 || err.status === 403 || err.status === 429));
}
