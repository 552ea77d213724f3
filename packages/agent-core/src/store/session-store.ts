/**
 * The session store: SQLite (one WAL file, the zero-set-up default) or PostgreSQL (for workers on several
 * machines), behind one asynchronous contract with the same tables and columns on both.
 *
 * This class is the single entry point; the SQL lives in small modules by topic (sessions, messages, lineage,
 * fts, turns), written once against `Sql` (sql.ts). Writes never surface a busy database under ordinary
 * contention: they wait and retry, and only a database locked for seconds yields StoreBusyError; a database
 * that cannot be reached yields StoreUnavailableError (both worth retrying the job later).
 */
import type { ChatMessage, SessionSource } from '../base/types.js';
import { catchUpSearchIndex, searchMessages, type SearchHit, type SearchOptions } from './fts.js';
import * as lineage from './lineage.js';
import * as messages from './messages.js';
import { beginTurnInNewSession, type NewSessionTurn } from './new-session-turn.js';
import { runMigrations } from './migrations.js';
import { PostgresSql, type PostgresOptions } from './postgres-sql.js';
import type { Session, StoredMessage, Turn, TurnStatus } from './rows.js';
import * as sessions from './sessions.js';
import { getSessionOverview, listSessionOverviews, sessionOverviewsByIds, type SessionOverview, type SessionOverviewPage } from './session-overviews.js';
import type { Sql, WriteStats } from './sql.js';
import { SqliteSql, type SqliteOptions } from './sqlite-sql.js';
import * as turnFiles from './turn-files.js';
import * as deliveries from './deliveries.js';
import { RecordBatches } from './record-batches.js';
import { OpenSessionBegins } from './open-session-turn.js';
import * as turns from './turns.js';
import { usageByDay, usageByModel, usageByProfile, type DailyUsage, type ModelUsage, type ProfileUsage, type UsageFilter } from './usage.js';

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** True when `target` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(target: string): boolean {
  return POSTGRES_URL.test(target);
}

interface SearchIndexOptions {
  /**
   * SQLite: adds new messages to the search index every SEARCH_INDEX_EVERY_MS (the running gateway). Without it the
   * index catches up when a search asks (fts.ts), which is always correct, only slower for the first search.
   */
  backgroundSearchIndex?: boolean;
  /** A background indexing round failed (the next one tries again): the gateway logs it. */
  onSearchIndexError?: (err: unknown) => void;
}

/** How a store is opened: PostgreSQL's pool settings, SQLite's background work (each ignores the other's). */
export type StoreOptions = PostgresOptions & SqliteOptions & SearchIndexOptions;

/** How often the gateway's SQLite store indexes new messages for search. */
const SEARCH_INDEX_EVERY_MS = 1_000;

/** Opens a connection without migrating: a SQLite file path (or ':memory:'), or a `postgres://` URL. */
export async function openSql(target: string, opts: StoreOptions = {}): Promise<Sql> {
  return isPostgresUrl(target) ? PostgresSql.open(target, opts) : SqliteSql.open(target, { backgroundCheckpoints: opts.backgroundCheckpoints });
}

export class SessionStore {
  private indexTimer: NodeJS.Timeout | null = null;
  private indexing: Promise<void> | null = null;

  /** PostgreSQL: turns' delivered marks written together when they come together (deliveries.ts). */
  private readonly markBatches: deliveries.MarkBatches | undefined;
  private readonly recordBatches: RecordBatches | undefined;
  private readonly openSessionBegins: OpenSessionBegins | undefined;

  private constructor(readonly sql: Sql) {
    this.markBatches = sql.dialect === 'postgres' ? new deliveries.MarkBatches(sql) : undefined;
    this.recordBatches = sql.dialect === 'postgres' ? new RecordBatches(sql) : undefined;
    this.openSessionBegins = sql.dialect === 'postgres' ? new OpenSessionBegins(sql) : undefined;
  }

  /**
   * Opens a SQLite file (creating it and its directory; ':memory:' works) or a `postgres://` database, and
   * applies pending migrations.
   */
  static async open(target: string, opts: StoreOptions = {}): Promise<SessionStore> {
    const store = await SessionStore.on(await openSql(target, opts));
    if (opts.backgroundSearchIndex && store.dialect === 'sqlite') store.indexInBackground(opts.onSearchIndexError);
    return store;
  }

  /** One round at a time: every new message, a batch per transaction, so turns' writes interleave with it. */
  private indexInBackground(onError?: (err: unknown) => void): void {
    this.indexTimer = setInterval(() => {
      this.indexing ??= catchUpSearchIndex(this.sql)
        .then(
          () => undefined,
          (err: unknown) => onError?.(err),
        )
        .finally(() => (this.indexing = null));
    }, SEARCH_INDEX_EVERY_MS);
    this.indexTimer.unref();
  }

  /** A store on an open connection (migrated here); closing the store closes it. */
  static async on(sql: Sql): Promise<SessionStore> {
    try {
      await runMigrations(sql);
    } catch (err) {
      await sql.close();
      throw err;
    }
    return new SessionStore(sql);
  }

  get dialect(): Sql['dialect'] {
    return this.sql.dialect;
  }

  /** Checkpoints the WAL (SQLite) or ends the pool (PostgreSQL); calling it twice is harmless. */
  async close(): Promise<void> {
    if (this.indexTimer) clearInterval(this.indexTimer);
    this.indexTimer = null;
    await this.indexing;
    return this.sql.close();
  }

  /** A real round trip to the database, for health checks; throws with the reason. */
  ping(): Promise<void> {
    return this.sql.ping();
  }

  /**
   * Runs several store calls as one transaction, all-or-nothing (a turn's messages, usage and recorded reply
   * land together); store calls made inside join it. `fn` must only use the store: it may run again when the
   * database was busy.
   */
  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.sql.transaction(fn);
  }

  /** Commits and busy retries on this connection, for metrics. */
  writeStats(): WriteStats {
    return this.sql.stats();
  }

  // --- sessions ---------------------------------------------------------------------------------------------

  /** The key's open session, or a new one; `init` may be a function, called only when the session is created. */
  getOrCreateSession(
    key: string,
    init: sessions.SessionInit | (() => sessions.SessionInit),
    opts?: sessions.GetOrCreateOptions,
  ): Promise<{ session: Session; created: boolean }> {
    return sessions.getOrCreateSession(this.sql, key, init, opts);
  }

  /** A new session the key now points at; the previous one keeps its transcript. */
  startNewSession(key: string, init: sessions.NewSessionInit): Promise<Session> {
    return sessions.startNewSession(this.sql, key, init);
  }

  /** The session the key points at, ended or not. */
  currentSession(key: string): Promise<Session | null> {
    return sessions.currentSession(this.sql, key);
  }

  /** The session the key points at (ended or not) and when it was last used, in one read. */
  currentSessionActivity(key: string): Promise<{ session: Session; lastActivity: number } | null> {
    return sessions.currentSessionActivity(this.sql, key);
  }

  getSession(id: string): Promise<Session | null> {
    return sessions.getSession(this.sql, id);
  }

  /** `reason`: session_reset, compression, idle, daily, ... */
  endSession(id: string, reason: string): Promise<Session> {
    return sessions.endSession(this.sql, id, reason);
  }

  addUsage(sessionId: string, usage: sessions.UsageDelta): Promise<void> {
    return sessions.addUsage(this.sql, sessionId, usage);
  }

  setModel(id: string, model: string | null): Promise<void> {
    return sessions.setSessionField(this.sql, id, 'model', model);
  }

  setSystemPrompt(id: string, prompt: string | null): Promise<void> {
    return sessions.setSessionField(this.sql, id, 'system_prompt', prompt);
  }

  listSessions(opts?: sessions.ListSessionsOptions): Promise<sessions.SessionPage> {
    return sessions.listSessions(this.sql, opts);
  }

  /** listSessions with each session's first user message, user name and last activity (the console's list). */
  listSessionOverviews(opts?: sessions.ListSessionsOptions): Promise<SessionOverviewPage> {
    return listSessionOverviews(this.sql, opts);
  }

  getSessionOverview(id: string): Promise<SessionOverview | null> {
    return getSessionOverview(this.sql, id);
  }

  /** Overviews of these sessions (in no particular order), in one query. */
  sessionOverviewsByIds(ids: readonly string[]): Promise<SessionOverview[]> {
    return sessionOverviewsByIds(this.sql, ids);
  }

  /** Tokens and estimated spend per model (sessions counted by the model they record). */
  usageByModel(filter?: UsageFilter): Promise<ModelUsage[]> {
    return usageByModel(this.sql, filter);
  }

  usageByProfile(filter?: UsageFilter): Promise<ProfileUsage[]> {
    return usageByProfile(this.sql, filter);
  }

  /** The same per UTC day (the day a session started) and model. */
  usageByDay(filter?: UsageFilter): Promise<DailyUsage[]> {
    return usageByDay(this.sql, filter);
  }

  // --- messages ---------------------------------------------------------------------------------------------

  appendMessages(sessionId: string, msgs: readonly ChatMessage[], opts?: messages.AppendOptions): Promise<StoredMessage[]> {
    return messages.appendMessages(this.sql, sessionId, msgs, opts);
  }

  getHistory(sessionId: string): Promise<ChatMessage[]> {
    return messages.getHistory(this.sql, sessionId);
  }

  getMessages(sessionId: string, opts?: messages.GetMessagesOptions): Promise<StoredMessage[]> {
    return messages.getMessages(this.sql, sessionId, opts);
  }

  /** For a turn that runs again: the history before it, and the messages an earlier run of it saved. */
  getTurnHistory(sessionId: string, turnId: string): Promise<messages.TurnHistory> {
    return messages.getTurnHistory(this.sql, sessionId, turnId);
  }

  /**
   * Saves a running turn's messages so far (they keep their positions, so saving again, or the final persist, adds
   * only what is new), and only while `fence` still owns the running turn: a fenced-out worker writes nothing.
   */
  checkpointTurn(
    turnId: string,
    fence: number,
    sessionId: string,
    msgs: readonly ChatMessage[],
    opts: Omit<messages.AppendOptions, 'turnId'> = {},
  ): Promise<void> {
    return this.sql.transaction(async () => {
      await turns.assertRunning(this.sql, turnId, fence);
      await messages.appendMessages(this.sql, sessionId, msgs, { ...opts, turnId });
    });
  }

  /** When the session's newest message was written (ms), or null when it has none. One indexed row, not the transcript. */
  lastMessageAt(sessionId: string): Promise<number | null> {
    return messages.lastMessageAt(this.sql, sessionId);
  }

  /** For /retry and /undo: removes the message and everything after it. */
  deleteMessagesFrom(sessionId: string, messageId: number): Promise<number> {
    return messages.deleteMessagesFrom(this.sql, sessionId, messageId);
  }

  search(query: string, opts?: SearchOptions): Promise<SearchHit[]> {
    return searchMessages(this.sql, query, opts);
  }

  // --- titles -----------------------------------------------------------------------------------------------

  /** Cleans and stores the title (null clears it); throws TitleInUseError if another lineage has it. */
  setTitle(sessionId: string, title: string | null): Promise<string | null> {
    return lineage.setTitle(this.sql, sessionId, title);
  }

  nextLineageTitle(base: string): Promise<string> {
    return lineage.nextLineageTitle(this.sql, base);
  }

  /** The session first, then its parent, grandparent, … (compression and /resume lineage). */
  ancestry(sessionId: string): Promise<Session[]> {
    return lineage.ancestry(this.sql, sessionId);
  }

  resolveTitle(title: string): Promise<Session | null> {
    return lineage.resolveTitle(this.sql, title);
  }

  listTitledSessions(opts: { source?: SessionSource; limit?: number } = {}): Promise<Session[]> {
    return lineage.listTitledSessions(this.sql, opts);
  }

  // --- turn outbox ------------------------------------------------------------------------------------------

  /** Starts (or, on a re-run, takes over) the turn under `fence`; see turns.ts for the fencing rules. */
  async beginTurn(turnId: string, sessionId: string, fence: number): Promise<Turn> {
    return (await turns.beginTurn(this.sql, turnId, sessionId, fence)).turn;
  }

  /**
   * beginTurn in a new session of the key (created with `init`, its prompt record included), or in the one another
   * turn opened meanwhile; one round trip on PostgreSQL, with the saved notes of `notesOf` (new-session-turn.ts).
   */
  beginTurnInNewSession(turnId: string, sessionKey: string, init: sessions.SessionInit, fence: number, notesOf?: string): Promise<NewSessionTurn> {
    return beginTurnInNewSession(this.sql, turnId, sessionKey, init, fence, notesOf);
  }

  /**
   * beginTurn in the key's open session, read with it (on PostgreSQL one statement, shared with the turns beginning
   * together: open-session-turn.ts); null when the key has none open. With `currentSince`, a session last active
   * before it is returned as expired, no turn begun (the reset policy).
   */
  beginTurnInOpenSession(turnId: string, sessionKey: string, fence: number, notesOf?: string): Promise<turns.OpenedTurn | null>;
  beginTurnInOpenSession(
    turnId: string,
    sessionKey: string,
    fence: number,
    notesOf: string | undefined,
    currentSince: number | null,
  ): Promise<turns.OpenedTurn | turns.ExpiredSession | null>;
  beginTurnInOpenSession(
    turnId: string,
    sessionKey: string,
    fence: number,
    notesOf?: string,
    currentSince: number | null = null,
  ): Promise<turns.OpenedTurn | turns.ExpiredSession | null> {
    const b = this.openSessionBegins;
    return b ? b.begin({ turnId, sessionKey, fence, notesOf, currentSince }) : turns.beginTurnInOpenSession(this.sql, turnId, sessionKey, fence, currentSince);
  }

  getTurn(turnId: string): Promise<Turn | null> {
    return turns.getTurn(this.sql, turnId);
  }

  /** The reply and the files it carries (sent after its text), recorded together; with `claim`, claimed for sending. */
  recordReply(turnId: string, reply: string, fence: number, files?: readonly turnFiles.NewTurnFile[], options?: turns.RecordReplyOptions): Promise<Turn> {
    return turns.recordReply(this.sql, turnId, reply, fence, files, options);
  }

  /**
   * A finished turn's messages, usage, `alongside` writes and reply (no files), all or nothing: one statement on
   * PostgreSQL (turns.ts `recordTurn`). Throws FencedOutError, and writes nothing, when `fence` no longer owns the running turn.
   */
  recordTurn(rec: turns.TurnRecord): Promise<Turn> {
    return turns.recordTurn(this.sql, rec, this.recordBatches);
  }

  /** The turn's files in order: pending ones with their bytes, sent and given-up ones without. */
  getTurnFiles(turnId: string): Promise<turnFiles.TurnFile[]> {
    return turnFiles.getTurnFiles(this.sql, turnId);
  }

  /** A file reached the platform (a fact, whatever the sender's fence); false when it was recorded already. */
  markFileSent(turnId: string, seq: number, sentId: string): Promise<boolean> {
    return turnFiles.markFileSent(this.sql, turnId, seq, sentId);
  }

  /** A file given up, with the reason the user was told. */
  markFileFailed(turnId: string, seq: number, failure: string): Promise<boolean> {
    return turnFiles.markFileFailed(this.sql, turnId, seq, failure);
  }

  /** The send intent: null when there is nothing left to send. */
  claimDelivery(turnId: string, fence: number): Promise<Turn | null> {
    return turns.claimDelivery(this.sql, turnId, fence);
  }

  /**
   * A delivered chunk: recorded whatever the sender's fence (a delivery is a fact). `known`: the ids last seen
   * recorded, which saves a read when nobody else wrote meanwhile.
   */
  recordChunk(turnId: string, messageId: string, known?: readonly string[]): Promise<Turn> {
    return deliveries.recordChunk(this.sql, turnId, messageId, known);
  }

  recordStreamMessage(turnId: string, fence: number, messageId: string): Promise<Turn> {
    return turns.recordStreamMessage(this.sql, turnId, fence, messageId);
  }

  /** The whole reply delivered: recorded whatever the sender's fence (a delivery is a fact). */
  markDelivered(turnId: string, ids: readonly string[], known?: readonly string[]): Promise<Turn> {
    return deliveries.markDelivered(this.sql, turnId, ids, known, this.markBatches);
  }

  markTurn(turnId: string, status: TurnStatus, fence: number, error?: string): Promise<Turn> {
    return turns.markTurn(this.sql, turnId, status, fence, error);
  }

  fenceOut(turnId: string, newFence: number, status: TurnStatus, error: string): Promise<boolean> {
    return turns.fenceOut(this.sql, turnId, newFence, status, error);
  }

  // --- threads ----------------------------------------------------------------------------------------------

  /** Remembers a thread the bot takes part in (so replies there need no mention). */
  async rememberThread(platform: string, threadId: string): Promise<void> {
    await this.sql.run('INSERT INTO known_threads (platform, thread_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [platform, threadId, Date.now()]);
  }

  async isKnownThread(platform: string, threadId: string): Promise<boolean> {
    return (await this.sql.get('SELECT 1 AS found FROM known_threads WHERE platform = ? AND thread_id = ?', [platform, threadId])) !== undefined;
  }
}
