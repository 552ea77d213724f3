/**
 * Backup and restore of a SQLite store file, on real files, with another connection open and writing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionStore } from './session-store.js';
import { backupSqliteStore, inspectSqliteStore, NotAStoreError, prepareSqliteRestore, StoreInUseError } from './sqlite-backup.js';
import { useTempStores } from './test-support.js';

const temp = useTempStores('sqlite');

async function seeded(file: string, texts: string[]): Promise<SessionStore> {
  const store = await temp.open(file);
  const { session } = await store.getOrCreateSession('agent:main:cli:dm:1', { source: 'cli', userId: '1' });
  for (const text of texts) await store.appendMessages(session.id, [{ role: 'user', content: text }]);
  return store;
}

async function contents(file: string): Promise<string[]> {
  const store = await temp.open(file);
  const rows = await store.sql.all<{ content: string }>('SELECT content FROM messages ORDER BY id');
  return rows.map((r) => r.content);
}

describe('backupSqliteStore', () => {
  it('copies a store that another connection keeps writing to: one consistent moment, every row up to it', async () => {
    const live = path.join(temp.dir, 'live.db');
    const writer = await seeded(live, ['first', 'second']);
    const { session } = await writer.getOrCreateSession('agent:main:cli:dm:1', { source: 'cli' });
    let n = 0;
    let writing = true;
    const writes = (async () => {
      while (writing) {
        await writer.appendMessages(session.id, [{ role: 'user', content: `more ${n++}` }]);
        // Let the backup's steps (setImmediate) run between writes, as another process's would.
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await new Promise<void>((resolve) => {
      const check = (): void => void (n >= 20 ? resolve() : setImmediate(check));
      check();
    });
    const dest = path.join(temp.dir, 'backup.db');
    const summary = await backupSqliteStore(live, dest);
    writing = false;
    await writes;

    expect(summary.sessions).toBe(1);
    expect(summary.messages).toBeGreaterThanOrEqual(22);
    expect(summary.versions).toContain(1);
    // A self-contained file: no -wal beside it, nothing half-written under another name.
    expect(fs.readdirSync(temp.dir).filter((f) => f.startsWith('backup.db'))).toEqual(['backup.db']);
    const copied = await contents(dest);
    const all = await contents(live);
    // Exactly the first rows of the live store, in order, without holes: a snapshot, not a mixture.
    expect(copied).toEqual(all.slice(0, copied.length));
    expect(copied.length).toBe(summary.messages);
  });

  it('refuses a file that is not a Herald store and leaves nothing behind', async () => {
    const plain = path.join(temp.dir, 'notes.txt');
    fs.writeFileSync(plain, 'just some text, not a database\n'.repeat(200));
    await expect(backupSqliteStore(plain, path.join(temp.dir, 'x.db'))).rejects.toThrow(NotAStoreError);
    await expect(backupSqliteStore(path.join(temp.dir, 'missing.db'), path.join(temp.dir, 'y.db'))).rejects.toThrow(/does not exist/);
    expect(fs.readdirSync(temp.dir).filter((f) => /^[xy]\.db/.test(f))).toEqual([]);
  });
});

describe('prepareSqliteRestore', () => {
  it('refuses while another connection has the store open, and changes nothing', async () => {
    const target = path.join(temp.dir, 'busy.db');
    const open = await seeded(target, ['kept']);
    const backup = path.join(temp.dir, 'busy-backup.db');
    await backupSqliteStore(target, backup);
    await expect(prepareSqliteRestore(backup, target)).rejects.toThrow(StoreInUseError);
    expect((await open.sql.all<{ content: string }>('SELECT content FROM messages')).map((r) => r.content)).toEqual(['kept']);
    expect(fs.readdirSync(temp.dir).filter((f) => f.startsWith('busy.db.'))).toEqual([]);
  });

  it('replaces a closed store with the backup, keeping the old file (with everything in its WAL) beside it', async () => {
    const target = path.join(temp.dir, 'restore-me.db');
    const before = await seeded(target, ['old one', 'old two']);
    const backup = path.join(temp.dir, 'restore-me-backup.db');
    await backupSqliteStore(target, backup);
    await before.appendMessages((await before.getOrCreateSession('agent:main:cli:dm:1', { source: 'cli' })).session.id, [
      { role: 'user', content: 'after the backup' },
    ]);
    await before.close();

    const plan = await prepareSqliteRestore(backup, target);
    expect(plan.backup.messages).toBe(2);
    expect(plan.current?.messages).toBe(3);
    // While the plan holds the lock, nobody else can open the store.
    await expect(SessionStore.open(target)).rejects.toThrow();
    await plan.commit();

    expect(await contents(target)).toEqual(['old one', 'old two']);
    expect(plan.keptAs).toMatch(/restore-me\.db\.before-restore-\d{8}T\d{6}Z$/);
    expect(await contents(plan.keptAs!)).toEqual(['old one', 'old two', 'after the backup']);
    expect(inspectSqliteStore(target).messages).toBe(2);
  });

  it('cancel lets go of the store untouched; a damaged backup is refused before anything is locked', async () => {
    const target = path.join(temp.dir, 'cancel.db');
    const store = await seeded(target, ['stays']);
    await store.close();
    const backup = path.join(temp.dir, 'cancel-backup.db');
    await backupSqliteStore(target, backup);
    const plan = await prepareSqliteRestore(backup, target);
    plan.cancel();
    expect(await contents(target)).toEqual(['stays']);

    const damaged = path.join(temp.dir, 'damaged.db');
    const bytes = fs.readFileSync(backup);
    bytes.fill(0x5a, 4096, 8192);
    fs.writeFileSync(damaged, bytes);
    await expect(prepareSqliteRestore(damaged, target)).rejects.toThrow(NotAStoreError);
    expect(fs.readdirSync(temp.dir).filter((f) => f.startsWith('cancel.db.'))).toEqual([]);
  });
});
