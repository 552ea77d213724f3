/**
 * `herald store backup|restore` in process: usage, PostgreSQL's answer, a backup from a newer Herald, the question.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionStore } from '@herald/agent-core';
import { useTempStores } from '../../../../packages/agent-core/src/store/test-support.js';
import '../features/sessions/store-target.js';
import { CliError, type CliIo } from './io.js';
import { storeCommand } from './store.js';

const temp = useTempStores('sqlite');

function capture(answer: string | null = null): CliIo & { lines: string[]; errors: string[]; asked: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  const asked: string[] = [];
  return {
    lines,
    errors,
    asked,
    out: (l) => void lines.push(l),
    err: (l) => void errors.push(l),
    json: () => 0,
    ask: async (q) => {
      asked.push(q);
      return answer;
    },
  };
}

async function storeWith(file: string, text: string): Promise<void> {
  const store = await SessionStore.open(file);
  const { session } = await store.getOrCreateSession('agent:main:cli:dm:7', { source: 'cli', userId: '7' });
  await store.appendMessages(session.id, [{ role: 'user', content: text }]);
  await store.close();
}

describe('herald store backup and restore', () => {
  it('on PostgreSQL: says what to use instead, without the password, and does nothing', async () => {
    const databaseUrl = 'postgres://herald:s3cret-pw@db.internal:5432/herald';
    const backup = capture();
    expect(await storeCommand(['backup', 'herald.dump'], { db: 'unused.db', databaseUrl }, backup)).toBe(1);
    expect(backup.errors.join('\n')).toContain("pg_dump --format=custom --file herald.dump 'postgres://herald@db.internal:5432/herald'");
    const restore = capture();
    expect(await storeCommand(['restore', 'herald.dump'], { db: 'unused.db', databaseUrl }, restore)).toBe(1);
    expect(restore.errors.join('\n')).toContain("pg_restore --clean --if-exists --dbname 'postgres://herald@db.internal:5432/herald' herald.dump");
    expect([...backup.errors, ...restore.errors].join('\n')).not.toContain('s3cret-pw');
    expect(fs.existsSync('unused.db')).toBe(false);
  });

  it('usage mistakes are CliErrors naming what is wrong', async () => {
    const db = path.join(temp.dir, 'usage.db');
    await storeWith(db, 'hello');
    await expect(storeCommand(['backup'], { db }, capture())).rejects.toThrow(new CliError('usage: npx herald store backup <file> [--force]'));
    await expect(storeCommand(['restore', 'a.db', 'b.db'], { db }, capture())).rejects.toThrow(new CliError('usage: npx herald store restore <file> [--yes]'));
    await expect(storeCommand(['backup', db], { db }, capture())).rejects.toThrow('the backup must go to another file than the store itself');
    await expect(storeCommand(['backup', path.join(temp.dir, 'no-dir', 'x.db')], { db }, capture())).rejects.toThrow(/no such directory$/);
    await expect(storeCommand(['backup', path.join(temp.dir, 'x.db')], { db: path.join(temp.dir, 'missing.db') }, capture())).rejects.toThrow(
      /^no SQLite store at .*missing\.db/,
    );
  });

  it('refuses a backup written by a newer Herald (a schema version unknown here), changing nothing', async () => {
    const db = path.join(temp.dir, 'current.db');
    await storeWith(db, 'current');
    const newer = path.join(temp.dir, 'newer.db');
    await storeWith(newer, 'from the future');
    const raw = await SessionStore.open(newer);
    await raw.sql.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [9_999, 'a later feature', Date.now()]);
    await raw.close();
    const io = capture('restore');
    expect(await storeCommand(['restore', newer], { db }, io)).toBe(1);
    expect(io.errors).toEqual([
      `${newer} was written by a newer Herald (schema versions 9999 are unknown to this one): upgrade Herald first; nothing was changed`,
    ]);
    expect(io.asked).toEqual([]);
    expect(fs.readdirSync(temp.dir).filter((f) => f.startsWith('current.db.'))).toEqual([]);
  });

  it('asks before replacing; any answer but "restore" changes nothing; a restore into an empty place needs no old file', async () => {
    const db = path.join(temp.dir, 'asked.db');
    await storeWith(db, 'the current one');
    const backupFile = path.join(temp.dir, 'asked-backup.db');
    const made = capture();
    expect(await storeCommand(['backup', backupFile], { db }, made)).toBe(0);
    expect(made.lines[0]).toMatch(/: 1 sessions, 1 messages, .* \(schema version \d+\)$/);

    const declined = capture('yes');
    expect(await storeCommand(['restore', backupFile], { db }, declined)).toBe(1);
    expect(declined.asked).toEqual(['Type "restore" to replace the store: ']);
    const ended = capture(null);
    expect(await storeCommand(['restore', backupFile], { db }, ended)).toBe(1);
    expect(fs.readdirSync(temp.dir).filter((f) => f.startsWith('asked.db.'))).toEqual([]);

    const fresh = path.join(temp.dir, 'elsewhere', 'herald.db');
    const io = capture();
    expect(await storeCommand(['restore', backupFile, '--yes'], { db: fresh }, io)).toBe(0);
    expect(io.lines).toContain(`into:    ${fresh} (no store there yet)`);
    expect(io.asked).toEqual([]);
    expect(io.lines.at(-1)).toBe(`restored ${fresh}: 1 sessions, 1 messages; start the gateway again`);
  });
});
