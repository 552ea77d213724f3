/**
 * Pairing tables, registered with the session store's migrations (so every process applies them at start-up with
 * the rest of the schema, on SQLite and PostgreSQL alike).
 */
import { registerMigrations } from '@herald/agent-core';

const PAIRING_MIGRATION_VERSION = 140;

const PAIRING_SCHEMA = `
CREATE TABLE IF NOT EXISTS pairing_requests (
  platform    TEXT NOT NULL,
  user_id     TEXT NOT NULL,
  user_name   TEXT,
  code_hash   TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  PRIMARY KEY (platform, user_id)
);
CREATE INDEX IF NOT EXISTS pairing_requests_code ON pairing_requests (platform, code_hash);
CREATE TABLE IF NOT EXISTS pairing_approved (
  platform     TEXT NOT NULL,
  user_id      TEXT NOT NULL,
  user_name    TEXT,
  approved_at  INTEGER NOT NULL,
  PRIMARY KEY (platform, user_id)
);
CREATE TABLE IF NOT EXISTS pairing_lockouts (
  platform         TEXT PRIMARY KEY,
  failed_attempts  INTEGER NOT NULL DEFAULT 0,
  locked_until     INTEGER
);
`;

registerMigrations({ version: PAIRING_MIGRATION_VERSION, name: 'pairing', sql: PAIRING_SCHEMA });
