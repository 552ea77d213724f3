/**
 * Messages the platform delivers in parts, answered as one turn: a Telegram album (one message per picture, same
 * media_group_id), a long text the client split at the length limit. Ingress hands every part over at once, each its
 * own mailbox entry tagged with the same `partOf` (InboundMessage.partOf). The worker that takes the first part
 * waits, holding the session, until no new part has reached the mailbox for `quietMs` (or the platform marked the
 * newest part as the last), and answers all the parts as one turn. The parts wait in Redis, not in an ingress
 * process's memory: nothing is lost when a process dies, webhook answers are not held back (Telegram sends a chat's
 * next update only after the last one was answered), and parts that reach different ingress processes or several
 * polls still meet.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Mailbox, MailboxEntry, TurnPayload } from './mailbox.js';

/** Parts arrive back to back (the client sends them one after the other); a second of quiet ends the message. */
export const PARTS_QUIET_MS = 1_000;
/** How often the mailbox is looked at while parts are waited for, at most. */
const PARTS_POLL_MAX_MS = 100;
/** Telegram albums have at most 10 items: with all of them there, nothing more is waited for. */
const ALBUM_MAX_PARTS = 10;

type Pending = Array<{ raw: string; entry: MailboxEntry }>;

/** Whether `payload` is another part of the message `head` is a part of (same parts, same conversation). */
export function isPartOf(head: MailboxEntry | undefined, payload: TurnPayload): boolean {
  const group = head?.payload.partOf;
  const part = payload.partOf;
  return (
    group !== undefined && part !== undefined && part.id === group.id && part.kind === group.kind && payload.conversationId === head?.payload.conversationId
  );
}

/** Nothing more can come: the newest part is marked as the last, or an album has as many parts as one can have. */
function complete(head: MailboxEntry, parts: Pending): boolean {
  const newest = parts.length > 0 ? parts[parts.length - 1].entry.payload : head.payload;
  if (newest.partOf?.last) return true;
  return head.payload.partOf?.kind === 'album' && parts.length + 1 >= ALBUM_MAX_PARTS;
}

/**
 * The other parts of the head's message waiting behind it, once nothing more can come or no new one has come for
 * `quietMs`. `stop` ends the waiting early (the worker is shutting down or lost the session): the parts there so far
 * are returned.
 */
export async function gatherParts(mailbox: Mailbox, sessionKey: string, head: MailboxEntry, quietMs: number, stop: () => boolean): Promise<Pending> {
  const partsNow = async (): Promise<Pending> => (await mailbox.pending(sessionKey)).filter((p) => isPartOf(head, p.entry.payload));
  let parts = await partsNow();
  let quietSince = Date.now();
  const step = Math.min(Math.max(Math.floor(quietMs / 5), 10), PARTS_POLL_MAX_MS);
  for (;;) {
    const quiet = Date.now() - quietSince;
    if (quiet >= quietMs || complete(head, parts) || stop()) return parts;
    await sleep(Math.min(step, quietMs - quiet));
    const now = await partsNow();
    if (now.length !== parts.length) {
      parts = now;
      quietSince = Date.now();
    }
  }
}
