/**
 * An on/off choice remembered per conversation (`/voice`, `/reasoning`): kept per session key — the conversation
 * (a DM, a thread), not one session id — so it outlives /new and the idle and daily resets. Each toggle has a
 * table of its own, created by its module's migration: (session_key PRIMARY KEY, enabled, updated_at).
 */
import type { Sql } from '@herald/agent-core';

export class ConversationToggle {
  constructor(
    private readonly sql: Sql,
    private readonly table: string,
  ) {}

  async isOn(sessionKey: string): Promise<boolean> {
    const row = await this.sql.get<{ enabled: number }>(`SELECT enabled FROM ${this.table} WHERE session_key = ?`, [sessionKey]);
    return Number(row?.enabled ?? 0) === 1;
  }

  async set(sessionKey: string, on: boolean): Promise<void> {
    await this.sql.run(
      `INSERT INTO ${this.table} (session_key, enabled, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (session_key) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
      [sessionKey, on ? 1 : 0, Date.now()],
    );
  }
}
