/**
 * Matrix (client-server API) adapter options and the platform's named constants.
 */
import type { Logger } from 'pino';

/**
 * Longest reply chunk, in characters of Markdown. An event is at most 65,536 bytes of JSON with `body` and
 * `formatted_body` both in it: 8,000 characters stay under that even as 3-byte UTF-8 in both.
 */
export const MATRIX_MAX_MESSAGE_LENGTH = 8_000;
/** A typing notice lasts as long as we say; refresh before it ends. */
export const MATRIX_TYPING_TIMEOUT_MS = 30_000;
export const MATRIX_TYPING_REFRESH_MS = 20_000;
/** How long the homeserver holds a /sync open when nothing happens. */
export const MATRIX_SYNC_TIMEOUT_MS = 30_000;
/** A /sync with no answer past its long-poll plus this fails and is retried. */
export const MATRIX_SYNC_GRACE_MS = 15_000;
/** Any other call with no answer for this long fails (a NetworkError delivery retries). */
export const MATRIX_REQUEST_TIMEOUT_MS = 30_000;
/** Backoff between failed /sync calls: from 1 s doubling to 30 s. */
export const MATRIX_SYNC_BACKOFF_MS = { first: 1_000, max: 30_000 } as const;
/** Event ids remembered to drop repeats in this process (the mailbox dedupes across processes). */
export const MATRIX_DEDUPE_CAPACITY = 5_000;
/** Media users send travel as the `mxc://server/id` URI itself (downloads go through the authenticated endpoint). */
export const MATRIX_MXC_RE = /^mxc:\/\/([A-Za-z0-9.\-[\]:]{1,255})\/([A-Za-z0-9_-]{1,255})$/;
/** The refusal posted (once per room) in an end-to-end encrypted room. */
export const MATRIX_ENCRYPTED_REFUSAL = 'This room is encrypted; Herald does not support end-to-end encrypted rooms. Use an unencrypted room to talk to it.';

/**
 * What the ingress keeps across restarts: its `/sync` position (`next_batch`), so a restart continues after the last
 * event it took and never replays older ones; the encrypted rooms it has refused, so the refusal is said once per
 * room and not once per process; and the latest buttons the bot offered in each conversation, so a numbered reply
 * is a press even when the offer came before a restart (whose /sync does not show it again) or was seen by another
 * ingress process. The gateway keeps them in Redis; without one, the ingress keeps them in its process (memory.ts).
 */
export interface MatrixIngressMemory {
  loadSyncToken(): Promise<string | null>;
  saveSyncToken(token: string): Promise<void>;
  /** Notes the room as refused: true only the first time it is noted. */
  firstRefusal(roomId: string): Promise<boolean>;
  /** The data of the buttons the bot just offered in the conversation, in order: its latest offer there. */
  saveOffer(conversationId: string, data: readonly string[]): Promise<void>;
  /** The conversation's latest offer (button data in order); undefined when there is none, or none readable. */
  loadOffer(conversationId: string): Promise<string[] | undefined>;
}

export interface MatrixConnection {
  /** The homeserver's base URL (`https://matrix.example.org`). */
  homeserverUrl: string;
  accessToken: string;
  /** The bot's own user id (`@herald:example.org`). */
  userId: string;
}

export interface MatrixIngressOptions extends MatrixConnection {
  logger: Logger;
  /** Absent: kept in this process only (tests). */
  memory?: MatrixIngressMemory;
  /** Whose invites are accepted (user ids; `*` any). Others are declined and logged. */
  inviteFrom: readonly string[];
  /** Rooms the bot answers in (room ids; empty: any room it is in). */
  allowedRooms: readonly string[];
  /** The bot's display name, also a mention when it appears in a message's body (else the localpart). */
  displayName?: string;
  syncTimeoutMs?: number;
  dedupeCapacity?: number;
}

export interface MatrixEgressOptions extends MatrixConnection {
  logger: Logger;
  timeoutMs?: number;
}
