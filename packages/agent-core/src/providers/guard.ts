/**
 * Runs one provider request under the caller's AbortSignal plus an idle watchdog, and decides what a stop means.
 * Both SDKs end a stream *silently* when its signal aborts, and their own timeout only covers the wait for
 * response headers, so a stalled stream would otherwise hang a turn forever.
 */
import { classifyError } from './errors.js';
import { ProviderError } from './types.js';

/** Same as the SDKs' default timeout; reasoning models can think that long before their first byte. */
export const DEFAULT_IDLE_TIMEOUT_MS = 600_000;

export interface RequestGuard {
  /** Pass this to the SDK, not the caller's signal. */
  readonly signal: AbortSignal;
  /** Call on every received chunk: the watchdog measures silence, not total duration. */
  touch(): void;
}

export async function runGuarded<T>(
  callerSignal: AbortSignal,
  idleTimeoutMs: number,
  run: (guard: RequestGuard) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const touch = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new ProviderError('timeout', `no response for ${idleTimeoutMs} ms`));
    }, idleTimeoutMs);
  };
  const onAbort = (): void => controller.abort(callerSignal.reason);
  if (callerSignal.aborted) onAbort();
  else callerSignal.addEventListener('abort', onAbort, { once: true });

  // Why the request stopped, when we stopped it: that beats whatever the SDK made of the closed socket.
  const stopReason = (): ProviderError | undefined => {
    if (callerSignal.aborted) return new ProviderError('aborted', 'request aborted', { cause: callerSignal.reason });
    if (timedOut) return new ProviderError('timeout', `no response for ${idleTimeoutMs} ms`);
    return undefined;
  };

  touch();
  try {
    const result = await run({ signal: controller.signal, touch });
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
