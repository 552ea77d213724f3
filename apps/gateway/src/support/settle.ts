/** Promise helpers of the gateway's start and stop (roles/compose.ts): a step that ends when the start is cancelled, a close with a deadline. */

/** `p`, or a rejection with the signal's reason as soon as it aborts (`p` goes on; its outcome is dropped). */
export function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  // First: a step that fails after the abort (or already aborted) must not become an unhandled rejection.
  p.catch(() => undefined);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** True when `p` settled within `ms`. */
export async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
