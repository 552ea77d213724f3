/**
 * `/reasoning on|off`: whether a conversation's answers show the model's reasoning (thinking) above them. Off by
 * default: reasoning is kept in the history for the model, never shown to users unless they ask for it.
 */
import { registerMigrations, type Sql } from '@herald/agent-core';
import { ConversationToggle } from './toggles.js';

/** The agent loop's extension versions are 700–709. */
const REASONING_DISPLAY_MIGRATION_VERSION = 700;
registerMigrations({
  version: REASONING_DISPLAY_MIGRATION_VERSION,
  name: 'reasoning display per conversation',
  sql: `
CREATE TABLE reasoning_display (
  session_key  TEXT PRIMARY KEY,
  enabled      INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
`,
});

export class ReasoningDisplay extends ConversationToggle {
  constructor(sql: Sql) {
    super(sql, 'reasoning_display');
  }
}
