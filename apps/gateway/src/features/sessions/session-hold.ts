/**
 * Commands that rewrite a conversation (/retry, /undo, /compress, /resume) hold the session's lock while they do
 * it, exactly as a turn does: no turn can start on the history being rewritten, and a turn that is running makes
 * the command refuse instead of racing it. The lock is renewed while the command runs; if a renewal fails (the
 * lock expired or was broken by /stop), the command's signal aborts and it must stop.
 */
import type { Mailbox } from '../../queue/mailbox.js';

export type Held<T> = { held: true; value: T } | { held: false };

export async function withSessionHeld<T>(mailbox: Mailbox, sessionKey: string, owner: string, rewrite: (signal: AbortSignal) => Promise<T>): Promise<Held<T>> {
  const lock = await mailbox.acquire(sessionKey, owner);
  if ('heldForMs' in lock) return { held: false };
  const lost = new AbortController();
  const renew = setInterval(
    () => {
      mailbox.renew(sessionKey, lock.token).then(
        (ok) => {
          if (!ok) lost.abort(new Error('the session lock was lost while the command ran'));
        },
        (err: unknown) => lost.abort(err),
      );
    },
    Math.max(Math.floor(mailbox.lockTtlMs / 3), 100),
  );
  try {
    return { held: true, value: await rewrite(lost.signal) };
  } finally {
    clearInterval(renew);
    await mailbox.release(sessionKey, lock.token);
  }
}
