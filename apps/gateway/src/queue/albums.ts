/**
 * Albums as one turn. A platform that delivers one post as several messages (a Telegram album: one message per
 * picture, same media_group_id) has every part handed over at once, each its own mailbox entry carrying the album's
 * id. The worker that takes the first part waits, holding the session, until no new part has reached the mailbox
 * for `quietMs`, and answers all the parts as one turn. The parts wait in Redis, not in an ingress process's memory:
 * nothing is lost when a process dies, webhook answers are not held back (Telegram sends a chat's next update only
 * after the last one was answered), and parts that reach different ingress processes or several polls still meet.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Mailbox, MailboxEntry, TurnPayload } from './mailbox.js';

/** Album parts arrive back to back (the client sends the album in one request); a second of quiet ends it. */
export const ALBUM_QUIET_MS = 1_000;
/** Telegram albums have at most 10 items: with all of them there, nothing more is waited for. */
const ALBUM_MAX_PARTS = 10;

type Pending = Array<{ raw: string; entry: MailboxEntry }>;

/** Whether `payload` is another part of the album `head` belongs to (same album, same conversation). */
export function isAlbumPart(head: MailboxEntry | undefined, payload: TurnPayload): boolean {
  const album = head?.payload.albumId;
  return album !== undefined && payload.albumId === album && payload.conversationId === head?.payload.conversationId;
}

/**
 * The parts of the head's album waiting behind it, once no new one has come for `quietMs`. `stop` ends the waiting
 * early (the worker is shutting down or lost the session): the parts there so far are returned.
 */
export async function gatherAlbum(mailbox: Mailbox, sessionKey: string, head: MailboxEntry, quietMs: number, stop: () => boolean): Promise<Pending> {
  const partsNow = async (): Promise<Pending> => (await mailbox.pending(sessionKey)).filter((p) => isAlbumPart(head, p.entry.payload));
  let parts = await partsNow();
  let quietSince = Date.now();
  const step = Math.max(Math.floor(quietMs / 5), 10);
  for (;;) {
    const quiet = Date.now() - quietSince;
    if (quiet >= quietMs || parts.length + 1 >= ALBUM_MAX_PARTS || stop()) return parts;
    await sleep(Math.min(step, quietMs - quiet));
    const now = await partsNow();
    if (now.length !== parts.length) {
      parts = now;
      quietSince = Date.now();
    }
  }
}
