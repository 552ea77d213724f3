/**
 * The turn outbox. A worker killed mid-turn has its job re-run elsewhere; the turn row tells the re-run what
 * already happened (reply computed? delivered, and as which platform messages?) so nothing is sent twice.
 */
import type { StoreDb } from './db.js';
import { StoreNotFoundError } from './errors.js';
import { assertSessionExists } from './guards.js';
import { toTurn, type Turn, type TurnRow, type TurnStatus } from './rows.js';

const SELECT_SQL = 'SELECT * FROM turns WHERE id = ?';

function updateTurn(db: StoreDb, turnId: string, set: string, params: unknown[]): Turn {
  return db.write(() => {
    const row = db
      .prepare(`UPDATE turns SET ${set}, updated_at = ? WHERE id = ? RETURNING *`)
      .get(...params, Date.now(), turnId) as TurnRow | undefined;
    if (!row) throw new StoreNotFoundError('turn', turnId);
    return toTurn(row);
  });
}

/** Starts a turn as `running`; when the turn exists already (a re-run), returns it untouched. */
export function beginTurn(db: StoreDb, turnId: string, sessionId: string): Turn {
  return db.write(() => {
    assertSessionExists(db, sessionId);
    const now = Date.now();
    db.prepare(
      `INSERT INTO turns (id, session_id, status, created_at, updated_at) VALUES (?, ?, 'running', ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    ).run(turnId, sessionId, now, now);
    return toTurn(db.prepare(SELECT_SQL).get(turnId) as TurnRow);
  });
}

export function getTurn(db: StoreDb, turnId: string): Turn | null {
  const row = db.read(() => db.prepare(SELECT_SQL).get(turnId) as TurnRow | undefined);
  return row ? toTurn(row) : null;
}

/** The reply is known but not yet delivered: a re-run delivers this text instead of asking the model again. */
export function recordReply(db: StoreDb, turnId: string, reply: string): Turn {
  return updateTurn(db, turnId, `status = 'replied', reply = ?`, [reply]);
}

/** Delivered as these platform messages; ids from earlier calls (chunks delivered before a crash) are kept. */
export function markDelivered(db: StoreDb, turnId: string, ids: readonly string[]): Turn {
  return db.write(() => {
    const current = getTurn(db, turnId);
    if (!current) throw new StoreNotFoundError('turn', turnId);
    const merged = [...new Set([...current.deliveredIds, ...ids])];
    return updateTurn(db, turnId, `status = 'delivered', delivered_ids = ?`, [JSON.stringify(merged)]);
  });
}

export function markTurn(db: StoreDb, turnId: string, status: TurnStatus, error?: string): Turn {
  return updateTurn(db, turnId, 'status = ?, error = ?', [status, error ?? null]);
}
