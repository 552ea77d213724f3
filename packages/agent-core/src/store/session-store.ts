/**
 * The session store: one SQLite file (WAL) shared by every gateway process on a machine.
 *
 * This class is the single entry point; the SQL lives in small modules by topic (sessions, messages, lineage,
 * fts, turns). All methods are synchronous (better-sqlite3). Writes never surface SQLITE_BUSY under ordinary
 * contention: they wait and retry (see db.ts) and only a database locked for seconds yields StoreBusyError.
 */
import type { ChatMessage, SessionSource } from '../types.js';
import { StoreDb, type WriteStats } from './db.js';
import { searchMessages, type SearchHit, type SearchOptions } from './fts.js';
import * as lineage from './lineage.js';
import * as messages from './messages.js';
import { runMigrations } from './migrations.js';
import type { Session, StoredMessage, Turn, TurnStatus } from './rows.js';
import * as sessions from './sessions.js';
import * as turns from './turns.js';

export class SessionStore {
  private constructor(private readonly db: StoreDb) {}

  /** Opens (creating the file and its directory), applies pragmas and pending migrations. ':memory:' works. */
  static open(path: string): SessionStore {
    const db = StoreDb.open(path);
    try {
      runMigrations(db);
    } catch (err) {
      db.close();
      throw err;
    }
    return new SessionStore(db);
  }

  /** Checkpoints the WAL and closes; calling it twice is harmless. */
  close(): void {
    this.db.close();
  }

  /** A real round trip to SQLite, for health checks. */
  ping(): boolean {
    try {
      return this.db.raw.prepare('SELECT 1 AS ok').get() !== undefined;
    } catch {
      return false;
    }
  }

  /**
   * Runs several store calls as one write transaction: one BEGIN IMMEDIATE and one commit instead of one each,
   * and all-or-nothing (a turn's messages, usage and recorded reply land together). `fn` must only use the store.
   */
  batch<T>(fn: () => T): T {
    return this.db.write(fn);
  }

  /**
   * The connection itself, for modules that keep their own tables in this file (registered through
   * `registerMigrations`): the built-in tools, the gateway's counters. Their writes then get the same busy retry
   * and checkpointing, and can join a `batch` with the store's own writes.
   */
  get database(): StoreDb {
    return this.db;
  }

  /** Commits and busy retries on this connection, for metrics. */
  writeStats(): WriteStats {
    return this.db.stats();
  }

  // --- sessions ---------------------------------------------------------------------------------------------

  getOrCreateSession(key: string, init: sessions.SessionInit): { session: Session; created: boolean } {
    return sessions.getOrCreateSession(this.db, key, init);
  }

  /** A new session the key now points at; the previous one keeps its transcript. */
  startNewSession(key: string, init: sessions.NewSessionInit): Session {
    return sessions.startNewSession(this.db, key, init);
  }

  /** The session the key points at, ended or not. */
  currentSession(key: string): Session | null {
    return sessions.currentSession(this.db, key);
  }

  getSession(id: string): Session | null {
    return sessions.getSession(this.db, id);
  }

  /** `reason`: session_reset, compression, idle, daily, ... */
  endSession(id: string, reason: string): Session {
    return sessions.endSession(this.db, id, reason);
  }

  addUsage(sessionId: string, usage: sessions.UsageDelta): void {
    sessions.addUsage(this.db, sessionId, usage);
  }

  setModel(id: string, model: string | null): void {
    sessions.setSessionField(this.db, id, 'model', model);
  }

  setSystemPrompt(id: string, prompt: string | null): void {
    sessions.setSessionField(this.db, id, 'system_prompt', prompt);
  }

  listSessions(opts?: sessions.ListSessionsOptions): sessions.SessionPage {
    return sessions.listSessions(this.db, opts);
  }

  // --- messages ---------------------------------------------------------------------------------------------

  appendMessages(sessionId: string, msgs: readonly ChatMessage[], opts?: messages.AppendOptions): StoredMessage[] {
    return messages.appendMessages(this.db, sessionId, msgs, opts);
  }

  getHistory(sessionId: string): ChatMessage[] {
    return messages.getHistory(this.db, sessionId);
  }

  getMessages(sessionId: string, opts?: messages.GetMessagesOptions): StoredMessage[] {
    return messages.getMessages(this.db, sessionId, opts);
  }

  /** When the session's newest message was written (ms), or null when it has none. One indexed row, not the transcript. */
  lastMessageAt(sessionId: string): number | null {
    return this.db.read(() => {
      const row = this.db
        .prepare('SELECT created_at FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT 1')
        .get(sessionId) as { created_at: number } | undefined;
      return row ? row.created_at : null;
    });
  }

  /** For /retry and /undo: removes the message and everything after it. */
  deleteMessagesFrom(sessionId: string, messageId: number): number {
    return messages.deleteMessagesFrom(this.db, sessionId, messageId);
  }

  search(query: string, opts?: SearchOptions): SearchHit[] {
    return searchMessages(this.db, query, opts);
  }

  // --- titles -----------------------------------------------------------------------------------------------

  /** Cleans and stores the title (null clears it); throws TitleInUseError if another lineage has it. */
  setTitle(sessionId: string, title: string | null): string | null {
    return lineage.setTitle(this.db, sessionId, title);
  }

  nextLineageTitle(base: string): string {
    return lineage.nextLineageTitle(this.db, base);
  }

  /** The session first, then its parent, grandparent, … (compression and /resume lineage). */
  ancestry(sessionId: string): Session[] {
    return lineage.ancestry(this.db, sessionId);
  }

  resolveTitle(title: string): Session | null {
    return lineage.resolveTitle(this.db, title);
  }

  listTitledSessions(opts: { source?: SessionSource; limit?: number } = {}): Session[] {
    return lineage.listTitledSessions(this.db, opts);
  }

  // --- turn outbox ------------------------------------------------------------------------------------------

  beginTurn(turnId: string, sessionId: string): Turn {
    return turns.beginTurn(this.db, turnId, sessionId);
  }

  getTurn(turnId: string): Turn | null {
    return turns.getTurn(this.db, turnId);
  }

  recordReply(turnId: string, reply: string): Turn {
    return turns.recordReply(this.db, turnId, reply);
  }

  markDelivered(turnId: string, ids: readonly string[]): Turn {
    return turns.markDelivered(this.db, turnId, ids);
  }

  markTurn(turnId: string, status: TurnStatus, error?: string): Turn {
    return turns.markTurn(this.db, turnId, status, error);
  }

  // --- threads ----------------------------------------------------------------------------------------------

  /** Remembers a thread the bot takes part in (so replies there need no mention). */
  rememberThread(platform: string, threadId: string): void {
    this.db.write(() =>
      this.db
        .prepare('INSERT INTO known_threads (platform, thread_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
        .run(platform, threadId, Date.now()),
    );
  }

  isKnownThread(platform: string, threadId: string): boolean {
    return this.db.read(
      () =>
        this.db.prepare('SELECT 1 FROM known_threads WHERE platform = ? AND thread_id = ?').get(platform, threadId) !==
        undefined,
    );
  }
}
