/**
 * The PostgreSQL store through real processes: workers that share no file (each in its own working directory)
 * answer Telegram conversations in order, with the sessions in PostgreSQL; a database that is not up yet at
 * start-up is waited for (readiness says so); wrong credentials stop start-up with one line.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { freshPostgresSchema, TEST_DATABASE_URL, urlWithSchema } from '../packages/agent-core/src/store/test-support.js';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { deleteRedisPrefix, uniquePrefix } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { taggedResponder } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function stand(): Promise<{ tg: TelegramFake; llm: FakeLLM; prefix: string }> {
  const tg = await startTelegramFake();
  cleanups.push(() => tg.close());
  const llm = await startFakeOpenAI();
  cleanups.push(() => llm.close());
  const prefix = uniquePrefix('pg');
  cleanups.push(() => deleteRedisPrefix(prefix));
  return { tg, llm, prefix };
}

async function schema(): Promise<string> {
  const fresh = await freshPostgresSchema('herald_e2e');
  cleanups.push(() => fresh.drop());
  return fresh.url;
}

function ownDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-pg-host-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function start(env: Record<string, string>, role: string, opts: { cwd?: string; waitReady?: boolean } = {}): Promise<GatewayProcess> {
  const gw = await startGateway({ env, args: ['--role', role], cwd: opts.cwd, waitReady: opts.waitReady });
  cleanups.push(() => gw.stop('SIGKILL'));
  return gw;
}

async function ready(gw: GatewayProcess): Promise<{ status: number; failed: string[]; checks: Record<string, string> }> {
  const res = await fetch(`${gw.url}/health/ready`);
  const body = (await res.json()) as { failed?: string[]; checks?: Record<string, string> };
  return { status: res.status, failed: body.failed ?? [], checks: body.checks ?? {} };
}

describe('the PostgreSQL store, end to end', () => {
  it('two workers in different directories, no file in common: every conversation answered in order, sessions in PostgreSQL with their source', async () => {
    const { tg, llm, prefix } = await stand();
    const url = await schema();
    llm.respondWith(taggedResponder({ delayMs: 50 }).respond);
    const env = telegramEnv(tg, llm, { HERALD_DATABASE_URL: url, HERALD_REDIS_PREFIX: prefix, HERALD_BUSY_INPUT_MODE: 'queue' });
    const ingress = await start(env, 'ingress', { cwd: ownDir() });
    // Debug level: each worker logs 'turn ended' for every turn it ran.
    const workerEnv = { ...env, HERALD_LOG_LEVEL: 'debug' };
    const workers = [await start(workerEnv, 'worker', { cwd: ownDir() }), await start(workerEnv, 'worker', { cwd: ownDir() })];

    for (const w of workers) await waitFor(async () => (await ready(w)).status === 200, { what: 'both workers taking jobs' });
    const chats = [4101, 4102, 4103, 4104, 4105, 4106];
    for (let n = 0; n < 5; n++) for (const chat of chats) tg.injectMessage({ chatId: chat, userId: chat, text: `c${chat} m${n}` });
    const answers = (chat: number) => repliesIn(tg, chat).filter((t) => t.startsWith('re:'));
    await waitFor(() => chats.every((c) => answers(c).length >= 5), { timeoutMs: 60_000, what: '30 answers' });
    for (const chat of chats) {
      expect(answers(chat)).toEqual(Array.from({ length: 5 }, (_, n) => `re: c${chat} m${n}`));
    }
    // Both workers ran turns: neither needed a file the other could see.
    for (const w of workers) await w.waitForLog((l) => l.msg === 'turn ended', 'a turn on each worker');
    for (const p of [ingress, ...workers]) expect(existsSync(p.dbPath)).toBe(false);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const sessions = await client.query<{ source: string; n: string }>('SELECT source, count(*) AS n FROM sessions GROUP BY source');
      expect(sessions.rows).toEqual([{ source: 'telegram', n: String(chats.length) }]);
      // Each session created once, with its prompt record (a burst's later turns found it: no second one).
      const prompts = await client.query<{ n: string }>('SELECT count(*) AS n FROM session_prompts p JOIN sessions s ON s.id = p.session_id');
      expect(Number(prompts.rows[0].n)).toBe(chats.length);
      const messages = await client.query<{ n: string }>(`SELECT count(*) AS n FROM messages WHERE role = 'user'`);
      expect(Number(messages.rows[0].n)).toBe(chats.length * 5);
      const hits = await client.query(`SELECT id FROM messages WHERE to_tsvector('simple', coalesce(content, '')) @@ to_tsquery('simple', 'm3')`);
      expect(hits.rowCount).toBeGreaterThanOrEqual(chats.length);
    } finally {
      await client.end();
    }
  });

  it("a person's saved notes reach the model with each turn, read with the turn's begin: in a new session and in an open one", async () => {
    const { tg, llm, prefix } = await stand();
    const url = await schema();
    llm.respondWith(taggedResponder({ delayMs: 0 }).respond);
    const gw = await start(telegramEnv(tg, llm, { HERALD_DATABASE_URL: url, HERALD_REDIS_PREFIX: prefix }), 'all');
    // /health answers before the store is migrated; ready means the tables are there.
    await waitFor(async () => (await ready(gw)).status === 200, { what: 'the gateway ready (its tables made)' });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    cleanups.push(() => client.end());
    // Notes as another worker's memory tool would have saved them (the gateway created the table at start).
    const note = (content: string) =>
      client.query(`INSERT INTO tool_memory (user_key, target, content, created_at, updated_at) VALUES ('telegram:4201', 'user', $1, 1, 1)`, [content]);
    await note('Name: Ana');
    const seenBy = (text: string) => llm.requests.filter((r) => JSON.stringify(r).includes(text)).map((r) => JSON.stringify(r));
    tg.injectMessage({ chatId: 4201, userId: 4201, text: 'first' });
    await waitFor(() => repliesIn(tg, 4201).some((t) => t.startsWith('re: first')), { what: 'the first answer' });
    expect(seenBy('first').some((r) => r.includes('Name: Ana'))).toBe(true);
    // Saved between the turns: the next turn, in the now open session, shows it.
    await note('Likes tea');
    tg.injectMessage({ chatId: 4201, userId: 4201, text: 'second' });
    await waitFor(() => repliesIn(tg, 4201).some((t) => t.startsWith('re: second')), { what: 'the second answer' });
    expect(seenBy('second').some((r) => r.includes('Name: Ana') && r.includes('Likes tea'))).toBe(true);
    // Someone else's notes are not shown.
    tg.injectMessage({ chatId: 4202, userId: 4202, text: 'third' });
    await waitFor(() => repliesIn(tg, 4202).some((t) => t.startsWith('re: third')), { what: 'the third answer' });
    expect(seenBy('third').some((r) => r.includes('Name: Ana'))).toBe(false);
    expect(gw.proc.exitCode).toBeNull();
  });

  it('a message with NUL characters is answered and kept (PostgreSQL text holds none: each is stored as U+FFFD)', async () => {
    const { tg, llm, prefix } = await stand();
    const url = await schema();
    llm.respondWith(taggedResponder({ delayMs: 0 }).respond);
    const gw = await start(telegramEnv(tg, llm, { HERALD_DATABASE_URL: url, HERALD_REDIS_PREFIX: prefix }), 'all');
    tg.injectMessage({ chatId: 4301, userId: 4301, text: 'nul\u0000here' });
    await waitFor(() => repliesIn(tg, 4301).some((t) => t.startsWith('re: nul')), { what: 'the answer' });
    // The next turn reads the stored history back: the first message is in it, its NUL as U+FFFD.
    tg.injectMessage({ chatId: 4301, userId: 4301, text: 'qqq second' });
    await waitFor(() => repliesIn(tg, 4301).some((t) => t.startsWith('re: qqq second')), { what: 'the second answer' });
    const second = llm.requests.map((r) => JSON.stringify(r)).find((r) => r.includes('qqq second'));
    expect(second).toContain('nul\uFFFDhere');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    cleanups.push(() => client.end());
    const { rows } = await client.query<{ content: string }>(`SELECT content FROM messages WHERE role = 'user' ORDER BY id`);
    expect(rows.map((r) => r.content)).toEqual(['nul\uFFFDhere', 'qqq second']);
    expect(gw.proc.exitCode).toBeNull();
  });

  it('a database that is not up yet: /health answers, /health/ready names postgres, and the gateway starts once it comes', async () => {
    const { tg, llm, prefix } = await stand();
    const url = await schema();
    const target = new URL(TEST_DATABASE_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) }, { startCut: true });
    cleanups.push(() => proxy.close());
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    viaProxy.password = 'relay-secret-pw'; // trust auth ignores it; the logs must not show it
    const gw = await start(telegramEnv(tg, llm, { HERALD_DATABASE_URL: viaProxy.toString(), HERALD_REDIS_PREFIX: prefix }), 'all');

    const waiting = await waitFor(
      async () => {
        const r = await ready(gw);
        return r.status === 503 && r.failed.includes('postgres') ? r : null;
      },
      { what: 'readiness to name postgres' },
    );
    expect(waiting.checks.postgres).toMatch(/unreachable/);
    const retry = await gw.waitForLog((l) => typeof l.msg === 'string' && l.msg.includes('cannot reach the database'), 'the retry line');
    // Where it looked, readable (host and port), without the password.
    expect(retry.msg).toContain(`postgres://postgres@127.0.0.1:${proxy.port}/test`);

    await proxy.restore();
    await waitFor(async () => (await ready(gw)).status === 200, { timeoutMs: 60_000, what: 'ready once the database answers' });
    tg.injectMessage({ chatId: 4201, userId: 4201, text: 'hello after the wait' });
    await waitFor(() => repliesIn(tg, 4201).length >= 1, { timeoutMs: 30_000, what: 'the reply' });
    expect(repliesIn(tg, 4201)).toEqual(['ok: hello after the wait']);
    expect(gw.output.join('\n')).not.toContain('relay-secret-pw');
  });

  it('wrong credentials or an unknown database: one line naming the store, exit 1, no retry loop', async () => {
    const { tg, llm, prefix } = await stand();
    const unknownRole = new URL(TEST_DATABASE_URL);
    unknownRole.username = 'no_such_role_herald';
    unknownRole.password = 'not-the-password';
    const unknownDb = new URL(TEST_DATABASE_URL);
    unknownDb.pathname = '/no_such_database_herald';
    for (const bad of [unknownRole.toString(), urlWithSchema(unknownDb.toString(), 'x')]) {
      const gw = await start(telegramEnv(tg, llm, { HERALD_DATABASE_URL: bad, HERALD_REDIS_PREFIX: prefix }), 'all', { waitReady: false });
      const code = await gw.exited;
      expect(code).toBe(1);
      const lines = gw.output.filter((l) => !l.startsWith('{'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^Cannot open the PostgreSQL store at postgres:\/\/\S+: .*(no_such_role_herald|no_such_database_herald).*HERALD_DATABASE_URL/);
      expect(gw.output.join('\n')).not.toContain('not-the-password');
    }
  });
});
