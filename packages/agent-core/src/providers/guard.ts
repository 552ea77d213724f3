/**
 * Runs one provider request under the caller's AbortSignal plus an idle watchdog, and decides what a stop means.
 * Both SDKs end a stream *silently* when its signal aborts, and their own timeout only covers the wait for
 * response headers, so a stalled stream would otherwise hang a turn forever.
 */
import { classifyError } from './errors.js';
import { callerSignalOptions } from './http-fetch.js';
import { ProviderError } from './types.js';

/**
 * A stream silent this long has stalled (Hermes: 90 s). The APIs send their first events (response.created,
 * message_start) at once and keep-alive pings while a model thinks, so silence this long means a dead stream,
 * not a slow model. HERALD_STREAM_STALL_TIMEOUT_MS sets it.
 */
export const DEFAULT_STALL_TIMEOUT_MS = 90_000;

/** The stall timeout of a provider config: explicit, else the request timeout, else 90 s. */
export function stallTimeoutOf(cfg: { stallTimeoutMs?: number; timeoutMs?: number }): number {
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

export async function runGuarded<T>(callerSignal: AbortSignal, idleTimeoutMs: number, run: (guard: RequestGuard) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const touch = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(stalled(idleTimeoutMs));
    }, idleTimeoutMs);
  };
  const onAbort = (): void => controller.abort(callerSignal.reason);
  if (callerSignal.aborted) onAbort();
  else callerSignal.addEventListener('abort', onAbort, { once: true });

  // Why the request stopped, when we stopped it: that beats whatever the SDK made of the closed socket.
  const stopReason = (): ProviderError | undefined => {
    if (callerSignal.aborted) return new ProviderError('aborted', 'request aborted', { cause: callerSignal.reason });
    if (timedOut) return stalled(idleTimeoutMs);
    return undefined;
  };

  touch();
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
