/**
 * PostgreSQL: beginTurn in the key's open session in one statement (a data-modifying CTE) that reads the session, the
 * turn's transcript and, when asked, the person's saved notes with it: one round trip where turns.ts's
 * beginTurnInOpenSession (SQLite's, in-process) takes three, on every message's path. The begins of turns starting
 * together go in one statement (batches.ts): a begin is written at once when none is being written, and those that
 * come meanwhile go together right after it, each reading its own rows; one the server refuses is run begin by begin.
 *
 * What a begin reads: no row, no open session (the caller creates one); the session's last activity (its newest
 * message's time, else its start): a session last active before the given time has expired, and then no turn is begun
 * and nothing else is read (`live_rows` 0) — unless the turn was begun before (a recovered job: it goes on, or finds
 * itself finished, where it began); a null turn: a newer fence owns it. The insert runs once whether or not the outer
 * query reads it (PostgreSQL's rule for data-modifying CTEs); the transcript is read as the statement found it, as
 * getTurnHistory's rows, one a row (a row of nulls when there is none): building JSON for every message cost the
 * server more than the round trip it saved.
 */
import { Batches, settledOf, textArray } from './batches.js';
import { FencedOutError } from './errors.js';
import { toTurnHistory, turnHistoryColumns, type TurnHistoryRow } from './messages.js';
import { toSession, toTurn, type SessionRow, type TurnRow } from './rows.js';
import { LAST_ACTIVITY_OF_S, SESSION_OF_KEY } from './sessions.js';
import type { Sql } from './sql.js';
import { beginTurnSql, type ExpiredSession, type NotesColumn, notesJsonOf, notesRead, type OpenedTurn } from './turns.js';

/** One turn to begin in its key's open session. */
export interface OpenSessionBegin {
  turnId: string;
  sessionKey: string;
  fence: number;
  /** The person whose saved notes to read with it (the memory tool's user key). */
  notesOf?: string;
  /** A session last active before this time has expired (the reset policy); null: none expires. */
  currentSince: number | null;
}

/** The notes' column, read only by statements that ask (`tool_memory` is the builtins' table: a store opened without them has none). */
const notesColumn = (userKey: string): string => `,
    CASE WHEN h.first IS NOT FALSE THEN ${notesJsonOf(userKey)} END AS notes`;

const beginOneSql = (notes: string): string => `WITH cur AS (SELECT s.*, ${LAST_ACTIVITY_OF_S} AS last_activity
    FROM sessions s WHERE s.id = (${SESSION_OF_KEY}) AND s.ended_at IS NULL),
  live AS (SELECT * FROM cur WHERE last_activity >= ? OR EXISTS (SELECT 1 FROM turns WHERE id = ?)),
  t AS (${beginTurnSql(`SELECT ?, live.id, 'running', ?, ?, ? FROM live`)})
  SELECT CASE WHEN h.first IS NOT FALSE THEN row_to_json(cur) END AS session, cur.last_activity,
    (SELECT count(*) FROM live) AS live_rows,
    CASE WHEN h.first IS NOT FALSE THEN (SELECT row_to_json(t) FROM t) END AS turn${notes}, h.*
  FROM cur LEFT JOIN LATERAL (SELECT row_number() OVER (ORDER BY id) = 1 AS first, id, ${turnHistoryColumns('?')}
    FROM messages WHERE session_id = (SELECT id FROM live)) h ON true
  ORDER BY h.id`;
// A lone begin keeps its own statement rather than the shared one with one row: through the JSON rows, the begin at
// 200 messages/s measured slower (p99 event -> model 16.9-37.2 ms against 14.6-27.6 in 6 alternating paced runs).
const BEGIN_ONE_SQL = beginOneSql('');
const BEGIN_ONE_WITH_NOTES_SQL = beginOneSql(notesColumn('?'));

/**
 * beginOneSql for the begins of many turns, given as JSON rows (`v`), each turn's rows told by `for_turn`. The keys
 * are looked up as an array too, so the planner reads their index rather than the JSON rows' hash.
 */
const beginManySql = (notes: string): string => `WITH v AS (SELECT * FROM json_to_recordset(?::json)
    AS v(turn_id text, session_key text, since bigint, fence bigint, at bigint, notes_of text)),
  cur AS (SELECT v.turn_id AS for_turn, s.*, ${LAST_ACTIVITY_OF_S} AS last_activity
    FROM v JOIN session_keys k ON k.key = v.session_key JOIN sessions s ON s.id = k.session_id
    WHERE k.key = ANY(?::text[]) AND s.ended_at IS NULL),
  live AS (SELECT cur.for_turn, cur.id FROM cur JOIN v ON v.turn_id = cur.for_turn
    WHERE cur.last_activity >= v.since OR EXISTS (SELECT 1 FROM turns WHERE id = v.turn_id)),
  t AS (${beginTurnSql(`SELECT v.turn_id, live.id, 'running', v.fence, v.at, v.at FROM live JOIN v ON v.turn_id = live.for_turn`)})
  SELECT cur.for_turn, CASE WHEN h.first IS NOT FALSE THEN row_to_json(cur) END AS session, cur.last_activity,
    (SELECT count(*) FROM live WHERE live.for_turn = cur.for_turn) AS live_rows,
    CASE WHEN h.first IS NOT FALSE THEN (SELECT row_to_json(t) FROM t WHERE t.id = cur.for_turn) END AS turn${notes}, h.*
  FROM cur JOIN v ON v.turn_id = cur.for_turn
  LEFT JOIN LATERAL (SELECT row_number() OVER (ORDER BY id) = 1 AS first, id, ${turnHistoryColumns('cur.for_turn')}
    FROM messages WHERE session_id = (SELECT live.id FROM live WHERE live.for_turn = cur.for_turn)) h ON true
  ORDER BY cur.for_turn, h.id`;
const BEGIN_MANY_SQL = beginManySql('');
const BEGIN_MANY_WITH_NOTES_SQL = beginManySql(notesColumn('v.notes_of'));

/** Begins in one statement, at most. */
const MAX_BEGINS = 64;

type OpenedRow = TurnHistoryRow &
  NotesColumn & { session: SessionRow | null; turn: TurnRow | null; id: number | null; last_activity: number | string; live_rows: number | string };
type Opened = OpenedTurn | ExpiredSession | null;

export class OpenSessionBegins {
  private readonly batches: Batches<OpenSessionBegin, Opened>;

  constructor(private readonly sql: Sql) {
    this.batches = new Batches(sql, {
      max: MAX_BEGINS,
      keyOf: (b) => b.sessionKey,
      one: (b) => beginOne(sql, b),
      together: async (begins) => {
        const byTurn = new Map<string, OpenedRow[]>();
        for (const r of await this.beginTogether(begins)) {
          const own = byTurn.get(r.for_turn);
          if (own) own.push(r);
          else byTurn.set(r.for_turn, [r]);
        }
        return begins.map((b) => settledOf(() => openedFrom(byTurn.get(b.turnId) ?? [], b)));
      },
    });
  }

  begin(b: OpenSessionBegin): Promise<Opened> {
    return this.batches.add(b);
  }

  private beginTogether(begins: readonly OpenSessionBegin[]): Promise<Array<OpenedRow & { for_turn: string }>> {
    const at = Date.now();
    const notes = begins.some((b) => b.notesOf !== undefined);
    const rows = begins.map((b) => ({
      turn_id: b.turnId,
      session_key: b.sessionKey,
      since: b.currentSince ?? 0,
      fence: b.fence,
      at,
      notes_of: b.notesOf ?? null,
    }));
    return this.sql.all(notes ? BEGIN_MANY_WITH_NOTES_SQL : BEGIN_MANY_SQL, [JSON.stringify(rows), textArray(begins.map((b) => b.sessionKey))]);
  }
}

/** One begin in its own statement. */
async function beginOne(sql: Sql, b: OpenSessionBegin): Promise<Opened> {
  const { turnId, sessionKey, fence, notesOf } = b;
  const now = Date.now();
  // Every session's last activity is at or after 0: no time given, none expired.
  const since = b.currentSince ?? 0;
  const rows =
    notesOf === undefined
      ? await sql.all<OpenedRow>(BEGIN_ONE_SQL, [sessionKey, since, turnId, turnId, fence, now, now, turnId])
      : await sql.all<OpenedRow>(BEGIN_ONE_WITH_NOTES_SQL, [sessionKey, since, turnId, turnId, fence, now, now, notesOf, turnId]);
  return openedFrom(rows, b);
}

/** What a begin's rows say: no open session, an expired one, or the turn begun with its transcript (and notes). */
function openedFrom(rows: readonly OpenedRow[], b: OpenSessionBegin): Opened {
  if (rows.length === 0) return null;
  const { session, turn, last_activity, live_rows } = rows[0];
  const lastActivity = Number(last_activity);
  if (Number(live_rows) === 0) return { expired: toSession(session as SessionRow), lastActivity };
  if (!turn) throw new FencedOutError(b.turnId, b.fence); // a newer fence owns it
  const history = toTurnHistory(rows[0].id === null ? [] : rows);
  return {
    session: toSession(session as SessionRow),
    turn: toTurn(turn),
    history,
    ...(b.notesOf !== undefined && { notes: notesRead(b.notesOf, rows[0].notes) }),
  };
}
