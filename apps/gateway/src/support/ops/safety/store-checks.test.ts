/**
 * The store checks on real stores: a SQLite file (its real filesystem and disk; a network mount described by a
 * mountinfo file in the kernel's format) and a PostgreSQL schema migrated by the store, then damaged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionStore } from '@herald/agent-core';
import { freshPostgresSchema } from '../../../../../../packages/agent-core/src/store/test-support.js';
import '../../../features/sessions/store-target.js';
import { storeFindings } from './checks.js';
import { checkSqlite } from './sqlite-checks.js';
import { checkPostgres, expectedIndexes } from './postgres-checks.js';
import { mountOf, parseMountInfo } from './mounts.js';

const dir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'herald-store-safety-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A mountinfo in the kernel's format: the root on ext4, `mnt` (with a space, escaped as \040) over NFS. */
function mountinfoWithNfsAt(mnt: string): string {
  const file = path.join(dir, `mountinfo-${Math.random().toString(36).slice(2)}`);
  fs.writeFileSync(
    file,
    [
      '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
      '23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw',
      `98 22 0:52 / ${mnt.replaceAll(' ', '\\040')} rw,relatime shared:40 - nfs4 fileserver:/export/herald rw,vers=4.2,hard,proto=tcp`,
      '',
    ].join('\n'),
  );
  return file;
}

describe('SQLite store checks', () => {
  it('the store on a network filesystem: a warning naming the filesystem, the mount and what goes wrong', () => {
    const mnt = path.join(dir, 'shared data');
    fs.mkdirSync(mnt);
    const [network] = checkSqlite(path.join(mnt, 'herald.db'), { minFreeMb: 0, mountinfo: mountinfoWithNfsAt(mnt) });
    expect(network.status).toBe('warn');
    expect(network.detail).toBe(`${path.join(mnt, 'herald.db')} is on a network filesystem: nfs4 (fileserver:/export/herald on ${mnt})`);
    expect(network.risk).toMatch(/can be corrupted or lose writes/);
  });

  it("on a local filesystem (this machine's real mounts): ok, naming the type", () => {
    const [local] = checkSqlite(path.join(dir, 'herald.db'), { minFreeMb: 0 });
    expect(local.status).toBe('ok');
    expect(local.detail).toMatch(/is on a local filesystem/);
  });

  it('a disk with less free space than the threshold: a warning with the real figures', () => {
    const file = path.join(dir, 'disk.db');
    fs.writeFileSync(file, Buffer.alloc(64 * 1024));
    const [, roomy] = checkSqlite(file, { minFreeMb: 0 });
    expect(roomy.status).toBe('ok');
    expect(roomy.detail).toMatch(/ free of .* \(the store takes 64 kB\)$/);
    // No disk here has a petabyte free: the threshold makes this one "nearly full".
    const [, full] = checkSqlite(file, { minFreeMb: 1024 ** 3 });
    expect(full.status).toBe('warn');
    expect(full.detail).toMatch(/^disk nearly full: .* free of /);
    expect(full.risk).toBe('when the disk fills up, writes fail: replies are no longer recorded and conversations stop');
  });

  it('mountinfo: the deepest mount wins, and a path beside a mount point is not inside it', () => {
    const mounts = parseMountInfo(fs.readFileSync(mountinfoWithNfsAt('/srv/data'), 'utf8'));
    expect(mountOf('/srv/data/herald', mounts)?.fsType).toBe('nfs4');
    expect(mountOf('/srv/database', mounts)?.fsType).toBe('ext4');
  });

  it('storeFindings applies HERALD_ACCEPT_RISKS to the store checks', async () => {
    const file = path.join(dir, 'accepted.db');
    const store = await SessionStore.open(file);
    try {
      const found = await storeFindings(store, { db: file, storeMinFreeMb: 1024 ** 3, acceptRisks: ['disk-space'] });
      expect(found.find((f) => f.id === 'disk-space')).toMatchObject({ status: 'ok', accepted: true });
    } finally {
      await store.close();
    }
  });
});

describe('PostgreSQL store checks', () => {
  it('every index the migrations create is found on a freshly migrated schema; a dropped one is named with its statement', async () => {
    const schema = await freshPostgresSchema();
    const store = await SessionStore.open(schema.url);
    try {
      const names = expectedIndexes().map((i) => i.name);
      expect(names).toEqual(expect.arrayContaining(['sessions_started', 'messages_session', 'messages_fts', 'turns_created', 'pairing_requests_code']));
      // Created by an early migration, dropped by a later one (migration 151): not expected.
      expect(names).not.toContain('turns_session');
      expect(names).not.toContain('turns_updated');
      const [healthy] = await checkPostgres(store.sql);
      expect(healthy).toMatchObject({ status: 'ok', detail: `all ${names.length} indexes the migrations create are there` });

      await store.sql.exec('DROP INDEX messages_session; DROP INDEX sessions_user');
      const [damaged] = await checkPostgres(store.sql);
      expect(damaged.status).toBe('warn');
      expect(damaged.detail).toBe(`missing 2 of ${names.length} indexes: sessions_user, messages_session`);
      expect(damaged.fix).toContain('CREATE INDEX messages_session ON messages (session_id, id);');
      // The statement it prints puts the index back.
      await store.sql.exec(damaged.fix!.replace(/^recreate them: /, ''));
      expect((await checkPostgres(store.sql))[0].status).toBe('ok');
    } finally {
      await store.close();
      await schema.drop();
    }
  });

  it("the server's version against the end of its community support", async () => {
    const schema = await freshPostgresSchema();
    const store = await SessionStore.open(schema.url);
    try {
      const [, today] = await checkPostgres(store.sql, new Date('2026-01-01T00:00:00Z'));
      expect(today.status).toBe('ok');
      expect(today.detail).toMatch(/^PostgreSQL \d+\.\d+.* \(supported until \d{4}-\d{2}-\d{2}\)$/);
      // The same server, ten years on.
      const [, later] = await checkPostgres(store.sql, new Date('2036-01-01T00:00:00Z'));
      expect(later.status).toBe('warn');
      expect(later.detail).toMatch(/: out of community support since \d{4}-11-\d{2}$/);
      expect(later.risk).toBe('no more security or data-corruption fixes are released for this version');
    } finally {
      await store.close();
      await schema.drop();
    }
  });
});
