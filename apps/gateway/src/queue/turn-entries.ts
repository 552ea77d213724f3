/**
 * Which mailbox entries one turn answers, besides the head: in interrupt mode what piled up while the last turn ran
 * (nothing is dropped), and in every mode the other parts of a message the head is a part of (an album, a split
 * text: queue/parts.ts). A scheduled task's run is always a turn of its own, and stays in the mailbox while messages
 * are merged. Also which entry a job names, and which entries may steer a running turn.
 */
import { PARTS_QUIET_MS, gatherParts } from './parts.js';
import type { Mailbox, MailboxEntry } from './mailbox.js';
import type { BusyInputMode, TurnJobData } from './producer.js';

export type PendingEntry = { raw: string; entry: MailboxEntry };

export interface TurnEntriesInput {
  mailbox: Mailbox;
  sessionKey: string;
  head: MailboxEntry;
  mode: BusyInputMode;
  partsQuietMs?: number;
  /** Ends the waiting for parts early (shutting down, session lost). */
  stop: () => boolean;
}

/** The entries after the head that the turn answers too, in arrival order. */
export async function entriesJoiningHead(input: TurnEntriesInput): Promise<PendingEntry[]> {
  const { mailbox, sessionKey, head } = input;
  if (head.payload.scheduled !== undefined) return [];
  // The parts of a message reach the mailbox one by one: the rest are waited for and answered with the head.
  const parts = head.payload.partOf !== undefined ? await gatherParts(mailbox, sessionKey, head, input.partsQuietMs ?? PARTS_QUIET_MS, input.stop) : [];
  if (input.mode !== 'interrupt') return parts;
  const together = mergeable(
    head,
    (await mailbox.pending(sessionKey)).filter((m) => !m.entry.payload.scheduled),
  );
  return [...together, ...parts.filter((a) => !together.some((t) => t.raw === a.raw))].sort((a, b) => a.entry.seq - b.entry.seq);
}

/**
 * The pending entries one turn may answer together with the head: those in a row that reply to the same place.
 * A message that waits for an answer of its own elsewhere (each HTTP API request has its own) is never merged.
 */
function mergeable(head: MailboxEntry, pending: PendingEntry[]): PendingEntry[] {
  const out: PendingEntry[] = [];
  for (const p of pending) {
    if (p.entry.payload.conversationId !== head.payload.conversationId) break;
    out.push(p);
  }
  return out;
}

/** Steering passes text only: a message with files stays in the mailbox and is a turn of its own next. */
export function steerable(raw: string): PendingEntry | undefined {
  const entry = JSON.parse(raw) as MailboxEntry;
  return entry.payload.attachments?.length ? undefined : { raw, entry };
}

/** The entry a job was added for; jobs added before job data was trimmed carry the whole entry instead. */
export function entryOf(data: TurnJobData | { sessionKey: string; entry: string }): { entryId: string; seq: number } {
  if (!('entry' in data)) return data;
  const entry = JSON.parse(data.entry) as MailboxEntry;
  return { entryId: entry.id, seq: entry.seq };
}
