/** The session store (SQLite or PostgreSQL): sessions, transcripts, titles, search, the turn outbox, known threads. */
export { SessionStore, openSql, isPostgresUrl, type StoreOptions } from './session-store.js';
export type { Session, StoredMessage, Turn, TurnStatus } from './rows.js';
export { TURN_STATUSES } from './rows.js';
export { TURN_FILES_MIGRATION_VERSION, type NewTurnFile, type TurnFile, type TurnFileKind } from './turn-files.js';
export type { SessionInit, NewSessionInit, SessionPromptRecord, UsageDelta, ListSessionsOptions, SessionPage } from './sessions.js';
export { recordSessionPrompt } from './sessions.js';
export type { NewSessionTurn } from './new-session-turn.js';
export { PREVIEW_CHARS, type SessionOverview, type SessionOverviewPage } from './session-overviews.js';
export type { AppendOptions, GetMessagesOptions, TurnHistory } from './messages.js';
export type { BegunTurn, ExpiredSession, NotesRead, OpenedTurn, SqlWrite, TurnRecord, WriteMerge } from './turns.js';
export type { SearchHit, SearchOptions } from './fts.js';
export type { DailyUsage, ModelUsage, ProfileUsage, UsageFilter } from './usage.js';
export { sanitizeFtsQuery, tsQueryOf } from './fts-query.js';
export { sanitizeTitle, MAX_TITLE_LENGTH } from './titles.js';
export { StoredWindowBook } from './context-windows.js';
export type { Sql, SqlValue, Dialect, RunResult, WriteStats } from './sql.js';
export { ddlFor, whereOf } from './sql.js';
export { SqliteSql, type SqliteOptions } from './sqlite-sql.js';
export { PostgresSql, isConnectionError, type PostgresOptions } from './postgres-sql.js';
export { registerMigrations, allMigrations, appliedVersions, migrationSql, FIRST_EXTERNAL_VERSION, type Migration } from './migrations.js';
export { copyStore, COPY_BATCH_ROWS, StoreCopyError, TargetNotEmptyError } from './copy.js';
export type { CopyOptions, CopyProgress, CopyReport, TableCopyResult } from './copy.js';
export {
  StoreError,
  StoreBusyError,
  StoreUnavailableError,
  StoreNotFoundError,
  FencedOutError,
  TitleInUseError,
  InvalidCursorError,
  isTransientStoreError,
} from './errors.js';
export {
  backupSqliteStore,
  inspectSqliteStore,
  prepareSqliteRestore,
  NotAStoreError,
  StoreInUseError,
  type RestorePlan,
  type SqliteStoreSummary,
} from './sqlite-backup.js';
