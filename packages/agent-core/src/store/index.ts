/** The SQLite session store: sessions, transcripts, titles, search, the turn outbox and known threads. */
export { SessionStore } from './session-store.js';
export type { Session, StoredMessage, Turn, TurnStatus } from './rows.js';
export { TURN_STATUSES } from './rows.js';
export type { SessionInit, NewSessionInit, UsageDelta, ListSessionsOptions, SessionPage } from './sessions.js';
export type { AppendOptions, GetMessagesOptions } from './messages.js';
export type { SearchHit, SearchOptions } from './fts.js';
export { sanitizeFtsQuery } from './fts.js';
export { sanitizeTitle, MAX_TITLE_LENGTH } from './titles.js';
export type { StoreDb, WriteStats } from './db.js';
export { registerMigrations, allMigrations, FIRST_EXTERNAL_VERSION, type Migration } from './migrations.js';
export {
  StoreError,
  StoreBusyError,
  StoreNotFoundError,
  TitleInUseError,
  InvalidCursorError,
} from './errors.js';
