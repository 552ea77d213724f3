/**
 * The road every provider request takes: a key from the pool (rotating on refusals, key-pool.ts `withPooledKey`),
 * that key's client (one per key, each on its own connections: transport.ts), the stall watchdog, and a rebuilt
 * client after a transport failure so the loop's retry starts on fresh connections.
 *
 * The watchdog runs one request under the caller's AbortSignal plus an idle timer, and decides what a stop means.
 * Both SDKs end a stream *silently* when its signal aborts, and their own timeout only covers the wait for
 * response headers, so a stalled stream would otherwise hang a turn forever.
 *
 * The clients are retired after a transport failure, not closed: their idle connections close at once, but the
 * requests other turns have in flight on them run to their end (transport.ts says why).
 */
import { classifyError } from './errors.js';
import { callerSignalOptions } from './http-fetch.js';
import { singleKey, withPooledKey } from './key-pool.js';
import { ProviderError, type KeySource, type PooledKey, type ProviderConfig } from './types.js';

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

/**
 * A stream silent this long has stalled (Hermes: 90 s). The APIs send their first events (response.created,
 * message_start) at once and keep-alive pings while a model thinks, so silence this long means a dead stream,
 * not a slow model. HERALD_STREAM_STALL_TIMEOUT_MS sets it.
 */
export const DEFAULT_STALL_TIMEOUT_MS = 90_000;

/** The stall timeout of a provider config: explicit, else the request timeout, else 90 s. */
function stallTimeoutOf(cfg: { stallTimeoutMs?: number; timeoutMs?: number }): number {
  return cfg.stallTimeoutMs ?? cfg.timeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
}

export interface RequestGuard {
  /** Pass this to an SDK that takes a signal (Bedrock's), not the caller's signal. */
  readonly signal: AbortSignal;
  /**
   * The request options for an OpenAI or Anthropic SDK call: the same signal, handed to our transport's fetch
   * past the SDK (http-fetch.ts says why).
   */
  readonly sdkOptions: ReturnType<typeof callerSignalOptions>;
  /** Call on every received chunk: the watchdog measures silence, not total duration. */
  touch(): void;
}

async function runGuarded<T>(callerSignal: AbortSignal, idleTimeoutMs: number, run: (guard: RequestGuard) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  // One timer for the request, started again on every chunk (`refresh`: no new timer and callback per chunk).
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(stalled(idleTimeoutMs));
  }, idleTimeoutMs);
  const touch = (): void => void timer.refresh();
  const onAbort = (): void => controller.abort(callerSignal.reason);
  if (callerSignal.aborted) onAbort();
  else callerSignal.addEventListener('abort', onAbort, { once: true });

  // Why the request stopped, when we stopped it: that beats whatever the SDK made of the closed socket.
  const stopReason = (): ProviderError | undefined => {
    if (callerSignal.aborted) return new ProviderError('aborted', 'request aborted', { cause: callerSignal.reason });
    if (timedOut) return stalled(idleTimeoutMs);
    return undefined;
  };

  try {
    const result = await run({ signal: controller.signal, sdkOptions: callerSignalOptions(controller.signal), touch });
    const stopped = stopReason();
    if (stopped) throw stopped;
    return result;
  } catch (err) {
    throw stopReason() ?? classifyError(err);
  } finally {
    clearTimeout(timer);
    callerSignal.removeEventListener('abort', onAbort);
  }
}

function stalled(ms: number): ProviderError {
  return new ProviderError('timeout', `stream stalled: nothing received for ${ms} ms`, { transport: true });
}

interface Slot<C> {
  client: C;
  /** Let the requests in flight finish, then close the client's connections (see the top of this file). */
  retire: () => void;
}

/** Clients by key fingerprint; `rebuild` retires a key's client so the next call starts on fresh connections. */
export class ClientPool<C> {
  private readonly slots = new Map<string, Slot<C>>();
  /** How many clients were rebuilt after transport failures (for tests and the operator's log line). */
  rebuilds = 0;

  constructor(private readonly build: (key: PooledKey) => Slot<C>) {}

  get(key: PooledKey): C {
    let slot = this.slots.get(key.fingerprint);
    if (!slot) {
      slot = this.build(key);
      this.slots.set(key.fingerprint, slot);
    }
    return slot.client;
  }

  rebuild(key: PooledKey): void {
    const slot = this.slots.get(key.fingerprint);
    if (!slot) return;
    this.slots.delete(key.fingerprint);
    this.rebuilds += 1;
    slot.retire();
  }
}
