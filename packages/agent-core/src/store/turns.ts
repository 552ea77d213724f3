/**
 * The turn outbox. A worker killed mid-turn has its job re-run elsewhere; the turn row tells the re-run what
 * already happened (reply computed? delivered, and as which platform messages?) so nothing is sent twice.
 */
import { StoreNotFoundError } from './errors.js';
import { assertSessionExists } from './guards.js';
import { toTurn, type Turn, type TurnRow, type TurnStatus } from './rows.js';
import type { Sql, SqlValue } from './sql.js';

const SELECT_SQL = 'SELECT * FROM turns WHERE id = ?';

async function updateTurn(sql: Sql, turnId: string, set: string, params: SqlValue[]): Promise<Turn> {
  const row = await sql.get<TurnRow>(`UPDATE turns SET ${set}, updated_at = ? WHERE id = ? RETURNING *`, [
    ...params,
    Date.now(),
    turnId,
  ]);
  if (!row) throw new StoreNotFoundError('turn', turnId);
  return toTurn(row);
}

/** Starts a turn as `running`; when the turn exists already (a re-run), returns it untouched. */
export async function beginTurn(sql: Sql, turnId: string, sessionId: string): Promise<Turn> {
  return sql.transaction(async () => {
    await assertSessionExists(sql, sessionId);
    const now = Date.now();
    await sql.run(
      `INSERT INTO turns (id, session_id, status, created_at, updated_at) VALUES (?, ?, 'running', ?, ?)
       ON CONFLICT (id) DO NOTHING`,
      [turnId, sessionId, now, now],
    );
    return toTurn((await sql.get<TurnRow>(SELECT_SQL, [turnId])) as TurnRow);
  });
}

export async function getTurn(sql: Sql, turnId: string): Promise<Turn | null> {
  const row = await sql.get<TurnRow>(SELECT_SQL, [turnId]);
  return row ? toTurn(row) : null;
}

/** The reply is known but not yet delivered: a re-run delivers this text instead of asking the model again. */
export async function recordReply(sql: Sql, turnId: string, reply: string): Promise<Turn> {
  return updateTurn(sql, turnId, `status = 'replied', reply = ?`, [reply]);
}

/** Delivered as these platform messages; ids from earlier calls (chunks delivered before a crash) are kept. */
export async function markDelivered(sql: Sql, turnId: string, ids: readonly string[]): Promise<Turn> {
  return sql.transaction(async () => {
    await sql.lock(`turn:${turnId}`);
    const current = await getTurn(sql, turnId);
    if (!current) throw new StoreNotFoundError('turn', turnId);
    const merged = [...new Set([...current.deliveredIds, ...ids])];
    return updateTurn(sql, turnId, `status = 'delivered', delivered_ids = ?`, [JSON.stringify(merged)]);
  });
}

export async function markTurn(sql: Sql, turnId: string, status: TurnStatus, error?: string): Promise<Turn> {
  return updateTurn(sql, turnId, 'status = ?, error = ?', [status, error ?? null]);
}
