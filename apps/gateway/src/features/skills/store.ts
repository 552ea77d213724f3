/**
 * The skills the agent wrote (skill_manage), kept in the store (migration 50, both SQLite and PostgreSQL) so every
 * worker on every host sees them, not only the one whose disk a file landed on.
 */
import type { Sql } from '@herald/agent-core';

export interface StoredSkill {
  profile: string;
  name: string;
  description: string;
  /** The whole SKILL.md. */
  content: string;
  updatedAt: number;
}

interface Row {
  profile: string;
  name: string;
  description: string;
  content: string;
  updated_at: number | string;
}

const toSkill = (r: Row): StoredSkill => ({
  profile: r.profile,
  name: r.name,
  description: r.description,
  content: r.content,
  updatedAt: Number(r.updated_at),
});

export class SkillStore {
  constructor(private readonly sql: Sql) {}

  async list(profile: string): Promise<StoredSkill[]> {
    const rows = await this.sql.all<Row>('SELECT profile, name, description, content, updated_at FROM skills WHERE profile = ? ORDER BY name', [profile]);
    return rows.map(toSkill);
  }

  async get(profile: string, name: string): Promise<StoredSkill | null> {
    const row = await this.sql.get<Row>('SELECT profile, name, description, content, updated_at FROM skills WHERE profile = ? AND name = ?', [profile, name]);
    return row ? toSkill(row) : null;
  }

  /** Creates or replaces; true when the skill is new. */
  async put(profile: string, name: string, description: string, content: string): Promise<boolean> {
    const now = Date.now();
    return this.sql.transaction(async () => {
      const existed = (await this.sql.get('SELECT 1 AS one FROM skills WHERE profile = ? AND name = ?', [profile, name])) !== undefined;
      await this.sql.run(
        `INSERT INTO skills (profile, name, description, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (profile, name) DO UPDATE SET description = excluded.description, content = excluded.content, updated_at = excluded.updated_at`,
        [profile, name, description, content, now, now],
      );
      return !existed;
    });
  }

  async remove(profile: string, name: string): Promise<boolean> {
    return (await this.sql.run('DELETE FROM skills WHERE profile = ? AND name = ?', [profile, name])).changes > 0;
  }
}
