/**
 * `/voice on|off`: whether a conversation's answers also come as voice replies. Kept per session key — the
 * conversation (a DM, a thread), not one session id — so the choice outlives /new and the idle and daily resets.
 * Workers read it once per turn, and only when text-to-speech is configured (HERALD_TTS_MODEL).
 */
import { registerMigrations, type Sql } from '@herald/agent-core';
import { ConversationToggle } from './toggles.js';

/** This feature's versions are 210–219 (the outbox's files are 210). */
const VOICE_REPLIES_MIGRATION_VERSION = 211;
registerMigrations({
  version: VOICE_REPLIES_MIGRATION_VERSION,
  name: 'voice replies per conversation',
  sql: `
CREATE TABLE voice_replies (
  session_key  TEXT PRIMARY KEY,
  enabled      INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
`,
});

export class VoiceReplies extends ConversationToggle {
  constructor(sql: Sql) {
    super(sql, 'voice_replies');
  }
}
