/**
 * `/voice on|off`: whether a conversation's answers also come as voice replies. Kept per session key — the
 * conversation (a DM, a thread), not one session id — so the choice outlives /new and the idle and daily resets.
 * Workers read it once per turn, and only when text-to-speech is configured (HERALD_TTS_MODEL).
 */
import { registerMigrations, type Sql } from '@herald/agent-core';

/** This feature's versions are 210–219 (the outbox's files are 210). */
export const VOICE_REPLIES_MIGRATION_VERSION = 211;
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

export class VoiceReplies {
  constructor(private readonly sql: Sql) {}

  async isOn(sessionKey: string): Promise<boolean> {
    const row = await this.sql.get<{ enabled: number }>('SELECT enabled FROM voice_replies WHERE session_key = ?', [sessionKey]);
    return Number(row?.enabled ?? 0) === 1;
  }

  async set(sessionKey: string, on: boolean): Promise<void> {
    await this.sql.run(
      `INSERT INTO voice_replies (session_key, enabled, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (session_key) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
      [sessionKey, on ? 1 : 0, Date.now()],
    );
  }
}
