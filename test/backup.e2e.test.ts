/**
 * `herald store backup` while a real gateway process is in the middle of conversations (Telegram and OpenAI
 * stand-ins, real Redis, the SQLite file the gateway writes), and `herald store restore` of that backup: refused
 * while the gateway runs, then, with the gateway stopped and the answer typed, a store holding every message of
 * the backup, which the restarted gateway carries the conversation on from.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { runHerald } from './helpers/cli.js';
import { deleteRedisPrefix, uniquePrefix } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { readStoreFile } from './helpers/store-rows.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-backup-'));
const prefix = uniquePrefix('backup');
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await deleteRedisPrefix(prefix);
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Row {
  id: number;
  role: string;
  content: string | null;
}

/** Every message of a store file, read on a connection of its own (as any other process would). */
function messagesIn(file: string): Row[] {
  return readStoreFile(file, (db) => db.prepare('SELECT id, role, content FROM messages ORDER BY id').all() as Row[]);
}

describe('backup during a running conversation, then restore', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;
  const db = path.join(dir, 'herald.db');
  const backup = path.join(dir, 'herald-backup.db');
  let env: Record<string, string>;
  let release!: () => void;

  it('takes a consistent backup while turns are running and other chats keep writing', async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    cleanups.push(
      () => tg.close(),
      () => llm.close(),
    );
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const isHolding = new Promise<void>((resolve) => (holding = resolve));
    llm.respondWith(async (req) => {
      const text = lastUserText(req);
      if (text === 'hold this one') {
        holding();
        await held;
      }
      return { text: `ok: ${text}` };
    });
    env = telegramEnv(tg, llm, { HERALD_DB: db, HERALD_REDIS_PREFIX: prefix });
    gw = await startGateway({ env });
    cleanups.push(() => gw.stop());

    // Chat 91: a conversation answered turn by turn.
    for (const text of ['one', 'two', 'three']) {
      tg.injectMessage({ chatId: 91, userId: 91, text });
      await waitFor(() => repliesIn(tg, 91).includes(`ok: ${text}`), { timeoutMs: 20_000, what: `the reply to ${text}` });
    }
    // Chat 92: a turn held in the model call, so the backup runs in the middle of it.
    tg.injectMessage({ chatId: 92, userId: 92, text: 'hold this one' });
    await isHolding;
    // Chats 93-95: messages still arriving and being answered while the backup runs.
    for (let i = 0; i < 12; i++) tg.injectMessage({ chatId: 93 + (i % 3), userId: 93 + (i % 3), text: `busy ${i}` });

    const before = messagesIn(db);
    const run = await runHerald(['store', 'backup', backup], { cwd: dir, env: { HERALD_DB: db } });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.lines[0]).toMatch(new RegExp(`^backed up ${db} to ${backup} in \\d+\\.\\d s: \\d+ sessions, \\d+ messages, .* \\(schema version \\d+\\)$`));
    expect(run.lines[1]).toBe("checked: SQLite's integrity check passed on the copy");

    const copied = messagesIn(backup);
    // Every message written before the backup started is in it...
    expect(copied.slice(0, before.length)).toEqual(before);
    // ...and it is one moment of the live store: its first rows exactly, no holes, nothing half-written.
    // (Messages that pile up while a chat is busy are answered together, so wait for each chat's last one.)
    await waitFor(() => [93, 94, 95].every((chat, i) => repliesIn(tg, chat).some((r) => r.includes(`busy ${9 + i}`))), {
      timeoutMs: 30_000,
      what: 'the replies to the busy chats',
    });
    expect(messagesIn(db).slice(0, copied.length)).toEqual(copied);
    // The backup is a file of its own: no -wal beside it.
    expect(fs.existsSync(`${backup}-wal`)).toBe(false);

    // The turn held during the backup finishes normally.
    release();
    await waitFor(() => repliesIn(tg, 92).includes('ok: hold this one'), { timeoutMs: 20_000, what: 'the held reply' });
    // The backup does not overwrite a file by accident.
    const again = await runHerald(['store', 'backup', backup], { cwd: dir, env: { HERALD_DB: db } });
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toBe(`${backup} already exists; pass --force to replace it`);
  });

  it('restore is refused while the gateway has the store open, and changes nothing', async () => {
    const live = messagesIn(db);
    const run = await runHerald(['store', 'restore', backup, '--yes'], { cwd: dir, env: { HERALD_DB: db } });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `refusing to restore: ${db} is open in another process (a running gateway, or a herald command): stop it first; nothing was changed`,
    );
    expect(messagesIn(db)).toEqual(live);
    // The gateway never noticed.
    tg.injectMessage({ chatId: 91, userId: 91, text: 'after the refused restore' });
    await waitFor(() => repliesIn(tg, 91).includes('ok: after the refused restore'), { timeoutMs: 20_000, what: 'a reply after the refused restore' });
  });

  it('with the gateway stopped: asks, restores every message of the backup, and the gateway carries on from it', async () => {
    expect(await gw.stop()).toBe(0);
    const copied = messagesIn(backup);
    const newest = messagesIn(db);
    expect(newest.length).toBeGreaterThan(copied.length);

    const declined = await runHerald(['store', 'restore', backup], { cwd: dir, env: { HERALD_DB: db }, input: 'no\n' });
    expect(declined.code, declined.stdout + declined.stderr).toBe(1);
    expect(declined.stdout, declined.stderr).toContain('Type "restore" to replace the store: ');
    expect(declined.stderr.trim()).toBe('not restored (the answer was not "restore"; pass --yes to skip the question); nothing was changed');
    expect(messagesIn(db)).toEqual(newest);

    const run = await runHerald(['store', 'restore', backup], { cwd: dir, env: { HERALD_DB: db }, input: 'restore\n' });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.lines[0]).toMatch(new RegExp(`^backup: {2}${backup}: \\d+ sessions, ${copied.length} messages`));
    expect(run.lines[1]).toMatch(new RegExp(`^replaces: ${db}: \\d+ sessions, ${newest.length} messages`));
    const kept = /^the current store is kept as (.+)$/.exec(run.lines[2])?.[1];
    expect(kept).toMatch(/herald\.db\.before-restore-\d{8}T\d{6}Z$/);
    expect(run.lines.at(-1)).toMatch(new RegExp(`^restored ${db}: \\d+ sessions, ${copied.length} messages; start the gateway again$`));

    // Every message of the backup, and only those; what came later is in the kept file.
    expect(messagesIn(db)).toEqual(copied);
    expect(messagesIn(kept!)).toEqual(newest);

    // The gateway starts on the restored store and the conversation goes on from it: the model sees its history.
    gw = await startGateway({ env });
    tg.injectMessage({ chatId: 91, userId: 91, text: 'do you remember?' });
    await waitFor(() => repliesIn(tg, 91).includes('ok: do you remember?'), { timeoutMs: 20_000, what: 'the reply after the restore' });
    const request = llm.requests.findLast((r) => lastUserText(r) === 'do you remember?')!;
    const history = (request.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role !== 'system').map((m) => m.content);
    expect(history).toEqual(['one', 'ok: one', 'two', 'ok: two', 'three', 'ok: three', 'do you remember?']);
  });
});
