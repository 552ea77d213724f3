/**
 * The road every provider request takes: a key from the pool (rotating on refusals, key-pool.ts `withPooledKey`),
 * that key's client (transport.ts), the stall watchdog (guard.ts), and a rebuilt client after a transport failure
 * so the loop's retry starts on fresh connections.
 */
import { runGuarded, stallTimeoutOf, type RequestGuard } from './guard.js';
import { singleKey, withPooledKey } from './key-pool.js';
import type { ClientPool } from './transport.js';
import { ProviderError, type KeySource, type ProviderConfig } from './types.js';

/** Local servers need no key, but the SDKs refuse to start without one. */
const NO_KEY_PLACEHOLDER = 'no-key';

export function keySourceOf(cfg: ProviderConfig): KeySource {
  return cfg.keyPool ?? singleKey(cfg.provider, cfg.apiKey || NO_KEY_PLACEHOLDER);
}

export function runProviderRequest<C, T>(
  cfg: ProviderConfig,
  source: KeySource,
  clients: ClientPool<C>,
  signal: AbortSignal,
  run: (client: C, guard: RequestGuard) => Promise<T>,
): Promise<T> {
  return withPooledKey(source, signal, async (key) => {
    try {
      return await runGuarded(signal, stallTimeoutOf(cfg), (guard) => run(clients.get(key), guard));
    } catch (err) {
      if (err instanceof ProviderError && err.transport && !signal.aborted) {
        clients.rebuild(key);
        cfg.onTransportReset?.({ provider: cfg.provider, model: cfg.model, fingerprint: key.fingerprint, error: err.message });
      }
      throw err;
    }
  });
}
