/**
 * The files a turn's reply carries (what the agent sent with send_file, pictures from its reply, a voice reply),
 * kept in the outbox next to the reply: recorded with it, in the same transaction, and delivered after its text.
 * Each file is recorded as it reaches the platform (the platform's id) or as given up (why), like the reply's
 * chunks, so a re-run after a crash uploads only what is still pending and never a file twice. The bytes
 * (base64 text, the one portable column type for them) are dropped as soon as a file is sent or given up.
 */
import { registerMigrations } from './migrations.js';
import type { Sql } from './sql.js';

/** Versions 210–219 are this feature's. */
export const TURN_FILES_MIGRATION_VERSION = 210;

registerMigrations({
  version: TURN_FILES_MIGRATION_VERSION,
  name: 'outbox: files a reply carries',
  sql: `
CREATE TABLE turn_files (
  turn_id       TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  seq           INTEGER NOT NULL,
  kind          TEXT NOT NULL CHECK (kind IN ('image', 'voice', 'audio', 'file')),
  name          TEXT NOT NULL,
  mime_type     TEXT NOT NULL,
  size          INTEGER NOT NULL,
  caption       TEXT,
  duration_sec  REAL,
  data          TEXT,
  sent_id       TEXT,
  failure       TEXT,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  PRIMARY KEY (turn_id, seq)
);
ALTER TABLE turns ADD COLUMN file_count INTEGER NOT NULL DEFAULT 0;
`,
});

export type TurnFileKind = 'image' | 'voice' | 'audio' | 'file';

/** A file to send with a reply (the same shape as the adapters' OutboundFile). */
export interface NewTurnFile {
  kind: TurnFileKind;
  name: string;
  mimeType: string;
  data: Buffer;
  caption?: string;
  durationSec?: number;
}

export interface TurnFile {
  turnId: string;
  /** Its place among the turn's files, from 0: the order they are sent in. */
  seq: number;
  kind: TurnFileKind;
  name: string;
  mimeType: string;
  size: number;
  caption?: string;
  durationSec?: number;
  /** The bytes while the file is pending; null once it was sent or given up. */
  data: Buffer | null;
  /** The platform's id of what carries it, once sent. */
  sentId: string | null;
  /** Why it was given up (told to the user), when it was. */
  failure: string | null;
}

interface TurnFileRow {
  turn_id: string;
  seq: number;
  kind: TurnFileKind;
  name: string;
  mime_type: string;
  size: number;
  caption: string | null;
  duration_sec: number | null;
  data: string | null;
  sent_id: string | null;
  failure: string | null;
}

function toTurnFile(r: TurnFileRow): TurnFile {
  return {
    turnId: r.turn_id,
    seq: Number(r.seq),
    kind: r.kind,
    name: r.name,
    mimeType: r.mime_type,
    size: Number(r.size),
    ...(r.caption !== null && { caption: r.caption }),
    ...(r.duration_sec !== null && { durationSec: Number(r.duration_sec) }),
    data: r.data === null ? null : Buffer.from(r.data, 'base64'),
    sentId: r.sent_id,
    failure: r.failure,
  };
}

/** Adds the files, numbered from 0; call in the transaction that records the reply. */
export async function addTurnFiles(sql: Sql, turnId: string, files: readonly NewTurnFile[]): Promise<void> {
  const now = Date.now();
  for (const [seq, f] of files.entries()) {
    await sql.run(
      `INSERT INTO turn_files (turn_id, seq, kind, name, mime_type, size, caption, duration_sec, data, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [turnId, seq, f.kind, f.name, f.mimeType, f.data.length, f.caption ?? null, f.durationSec ?? null, f.data.toString('base64'), now, now],
    );
  }
}

/** Every file of the turn, in order. */
export async function getTurnFiles(sql: Sql, turnId: string): Promise<TurnFile[]> {
  return (await sql.all<TurnFileRow>('SELECT * FROM turn_files WHERE turn_id = ? ORDER BY seq', [turnId])).map(toTurnFile);
}

/**
 * Sent as platform message (or file) `sentId`: recorded whatever the sender's fence, like a delivered chunk (a
 * delivery is a fact). False when the file was already recorded as sent or given up.
 */
export async function markFileSent(sql: Sql, turnId: string, seq: number, sentId: string): Promise<boolean> {
  const res = await sql.run(
    'UPDATE turn_files SET sent_id = ?, data = NULL, updated_at = ? WHERE turn_id = ? AND seq = ? AND sent_id IS NULL AND failure IS NULL',
    [sentId, Date.now(), turnId, seq],
  );
  return res.changes > 0;
}

/** Given up (too large for the platform, refused, out of retries): the user is told `failure`; the bytes go. */
export async function markFileFailed(sql: Sql, turnId: string, seq: number, failure: string): Promise<boolean> {
  const res = await sql.run(
    'UPDATE turn_files SET failure = ?, data = NULL, updated_at = ? WHERE turn_id = ? AND seq = ? AND sent_id IS NULL AND failure IS NULL',
    [failure, Date.now(), turnId, seq],
  );
  return res.changes > 0;
}
