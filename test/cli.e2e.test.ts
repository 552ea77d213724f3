/**
 * The `herald` command as a user runs it: `node apps/gateway/bin/herald.js …` with plain node (the bin registers
 * tsx itself), against the Telegram, Discord, Slack and OpenAI stand-ins, real Redis and a temp SQLite file.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../packages/agent-core/src/store/index.js';
import { freshPostgresSchema } from '../packages/agent-core/src/store/test-support.js';
import { PairingService } from '../apps/gateway/src/features/pairing/index.js';
import { startDiscordFake, type DiscordFake } from './fakes/discord/index.js';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { startWhatsAppFake } from './fakes/whatsapp/index.js';
import { startMatrixFake } from './fakes/matrix/index.js';
import { deleteRedisPrefix, uniquePrefix } from './helpers/cluster.js';
import { HERALD_BIN, runHerald, type CliRun } from './helpers/cli.js';
import { isolatedEnv } from './helpers/gateway.js';
import { freePort, waitFor } from './helpers/ports.js';

const dir = mkdtempSync(join(tmpdir(), 'herald-cli-'));
const prefix = uniquePrefix('cli');

function herald(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runHerald(args, { cwd: dir, env: { HERALD_REDIS_PREFIX: prefix, ...env } });
}

/** One Telegram conversation about sourdough; returns its session id. */
async function seedSourdough(store: SessionStore): Promise<string> {
  const { session } = await store.getOrCreateSession('agent:main:telegram:dm:42', { source: 'telegram', userId: '42', chatId: '42' });
  await store.appendMessages(session.id, [
    { role: 'user', content: 'how do I proof sourdough overnight?' },
    { role: 'assistant', content: 'Keep it in the fridge at 4 °C.' },
  ]);
  await store.addUsage(session.id, { input: 120, output: 40, cacheRead: 0, cacheWrite: 0, costUsd: 0.01, actualCostUsd: 0.02 });
  return session.id;
}

afterAll(async () => {
  await deleteRedisPrefix(prefix);
  rmSync(dir, { recursive: true, force: true });
});

describe('herald doctor', () => {
  let tg: TelegramFake;
  let discord: DiscordFake;
  let slack: SlackFake;
  let llm: FakeLLM;
  let env: Record<string, string>;

  beforeAll(async () => {
    [tg, discord, slack, llm] = await Promise.all([startTelegramFake(), startDiscordFake(), startSlackFake(), startFakeOpenAI({ apiKey: 'sk-right' })]);
    env = {
      HERALD_DB: join(dir, 'doctor.db'),
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.url,
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiRoot,
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_APP_TOKEN: slack.appToken,
      SLACK_API_URL: slack.apiUrl,
      HERALD_MODEL: 'openai:gpt-4.1-mini',
      OPENAI_API_KEY: 'sk-right',
      OPENAI_BASE_URL: llm.url,
      // The shared test Redis runs without persistence (a known risk here), and the disk may be small.
      HERALD_ACCEPT_RISKS: 'redis-persistence',
      HERALD_STORE_MIN_FREE_MB: '0',
    };
  });
  afterAll(async () => {
    await Promise.all([tg?.close(), discord?.close(), slack?.close(), llm?.close()]);
  });

  it('reports one passing line per check, with real calls to every platform and the model, and exits 0', async () => {
    const run = await herald(['doctor'], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const names = run.lines.slice(0, -1).map((l) => l.slice(2, 19).trim());
    expect(names).toEqual([
      'config',
      'redis',
      'redis persistence',
      'redis eviction',
      'redis version',
      'sqlite',
      'sqlite filesystem',
      'sqlite disk',
      'telegram',
      'discord',
      'slack',
      'slack app',
      'model',
    ]);
    expect(run.lines.slice(0, -1).every((l) => l.startsWith('✓ '))).toBe(true);
    expect(run.stdout).toContain('getMe: @herald_test_bot');
    expect(run.stdout).toMatch(/users\/@me: herald/);
    expect(run.stdout).toContain('auth.test: herald in Herald Fake');
    expect(run.stdout).toMatch(/openai:gpt-4\.1-mini answered in \d+ ms/);
    expect(run.stdout).toContain('accepted risk (HERALD_ACCEPT_RISKS=redis-persistence): queued messages are lost if Redis restarts');
    expect(run.lines.at(-1)).toBe('doctor: all 13 checks passed');
    // The calls really happened.
    expect(tg.callsOf('getMe')).not.toHaveLength(0);
    expect(llm.requests.at(-1)?.body.max_tokens ?? llm.requests.at(-1)?.body.max_completion_tokens).toBe(16);
  });

  it('probes the side-task models too: one that refuses is named, and the doctor fails', async () => {
    const side = await startFakeOpenAI();
    try {
      side.respondWith((req) => (req.body.model === 'spent-model' ? { error: { status: 402 } } : { text: 'OK' }));
      const run = await herald(['doctor'], {
        ...env,
        HERALD_ENDPOINTS: JSON.stringify([{ name: 'cheap', base_url: side.url }]),
        HERALD_AUXILIARY_MODEL: 'cheap:spent-model',
        HERALD_AUXILIARY_FALLBACK_MODELS: 'cheap:gpt-4.1-nano',
      });
      expect(run.code).toBe(1);
      expect(run.lines.find((l) => l.includes('side model cheap:spent-model'))).toMatch(/^✗ side model cheap:spent-model\s+.*Insufficient credits/);
      expect(run.lines.find((l) => l.includes('side model cheap:gpt-4.1-nano'))).toMatch(
        /^✓ side model cheap:gpt-4\.1-nano\s+cheap:gpt-4\.1-nano answered in \d+ ms$/,
      );
      expect(run.lines.at(-1)).toBe('doctor: 1 of 15 checks failed: side model cheap:spent-model');
    } finally {
      await side.close();
    }
  });

  it('warns, without failing, while the turn queue is paused in the dashboard', async () => {
    const queue = new Queue('turns', { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    try {
      await queue.pause();
      const run = await herald(['doctor'], env);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.lines.find((l) => l.includes('turn queue'))).toBe(
        '! turn queue        paused: messages wait and no turn starts until it is resumed (Resume in the queue dashboard, /admin/queues)',
      );
      await queue.resume();
      expect((await herald(['doctor'], env)).lines.some((l) => l.includes('turn queue'))).toBe(false);
    } finally {
      await queue.close();
    }
  });

  it("probes each agent profile's own model like HERALD_MODEL", async () => {
    const run = await herald(['doctor'], { ...env, HERALD_PROFILES: JSON.stringify({ support: { model: 'openai:gpt-4.1-nano' } }) });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.lines.find((l) => l.includes('model openai:gpt-4.1-nano'))).toMatch(/^✓ model openai:gpt-4\.1-nano\s+openai:gpt-4\.1-nano answered in \d+ ms$/);
    expect(run.lines.at(-1)).toBe('doctor: all 14 checks passed');
  });

  it('with WhatsApp set, checks the access token and the phone number ID against Graph; a wrong token fails that check', async () => {
    const wa = await startWhatsAppFake();
    try {
      const whatsapp = {
        WHATSAPP_ACCESS_TOKEN: wa.accessToken,
        WHATSAPP_PHONE_NUMBER_ID: wa.phoneNumberId,
        WHATSAPP_APP_SECRET: wa.appSecret,
        WHATSAPP_VERIFY_TOKEN: wa.verifyToken,
        WHATSAPP_API_URL: wa.apiUrl,
      };
      const ok = await herald(['doctor'], { ...env, ...whatsapp });
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(ok.stdout).toContain(`phone number ${wa.displayPhone} (Herald Test)`);
      expect(ok.lines.at(-1)).toBe('doctor: all 14 checks passed');
      const wrong = await herald(['doctor'], { ...env, ...whatsapp, WHATSAPP_ACCESS_TOKEN: 'EAAGwrong' });
      expect(wrong.code).toBe(1);
      expect(wrong.lines.find((l) => l.includes('whatsapp'))).toMatch(/^✗ whatsapp\s+401 Unauthorized: the token was refused/);
      expect(wrong.lines.at(-1)).toBe('doctor: 1 of 14 checks failed: whatsapp');
      expect(wrong.stdout + ok.stdout).not.toContain(wa.accessToken);
    } finally {
      await wa.close();
    }
  });

  it('with Matrix set, checks the access token with whoami; a wrong token fails that check', async () => {
    const hs = await startMatrixFake();
    try {
      const matrix = { MATRIX_HOMESERVER_URL: hs.url, MATRIX_ACCESS_TOKEN: hs.accessToken, MATRIX_USER_ID: hs.userId };
      const ok = await herald(['doctor'], { ...env, ...matrix });
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(ok.stdout).toContain(`signed in as ${hs.userId}`);
      const wrong = await herald(['doctor'], { ...env, ...matrix, MATRIX_ACCESS_TOKEN: 'syt_wrong' });
      expect(wrong.code).toBe(1);
      expect(wrong.lines.find((l) => l.includes('matrix'))).toMatch(/^✗ matrix\s+401 Unauthorized: the token was refused/);
      expect(wrong.lines.at(-1)).toBe('doctor: 1 of 14 checks failed: matrix');
      expect(wrong.stdout + ok.stdout).not.toContain(hs.accessToken);
    } finally {
      await hs.close();
    }
  });

  it('a wrong Telegram token: that check fails with the reason, the others still run, exit 1 naming it', async () => {
    const run = await herald(['doctor'], { ...env, TELEGRAM_BOT_TOKEN: '999:wrong-token' });
    expect(run.code).toBe(1);
    const telegram = run.lines.find((l) => l.includes('telegram'));
    expect(telegram).toMatch(/^✗ telegram\s+401 Unauthorized: the token was refused \(check TELEGRAM_BOT_TOKEN\)$/);
    expect(run.lines.filter((l) => l.startsWith('✓ '))).toHaveLength(12);
    expect(run.lines.at(-1)).toBe('doctor: 1 of 13 checks failed: telegram');
    expect(run.stdout).not.toContain('wrong-token');
  });

  it('a wrong model key and a wrong Discord token: both named; an unreachable Redis too', async () => {
    const run = await herald(['doctor'], { ...env, OPENAI_API_KEY: 'sk-wrong', DISCORD_BOT_TOKEN: 'not-the-token', REDIS_URL: 'redis://127.0.0.1:1' });
    expect(run.code).toBe(1);
    expect(run.lines.find((l) => l.includes(' redis '))).toMatch(/^✗ redis\s+Cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    expect(run.lines.find((l) => l.includes(' discord '))).toMatch(/^✗ discord\s+401/);
    expect(run.lines.find((l) => l.includes(' model '))).toMatch(/^✗ model\s+/);
    // No Redis, so no Redis settings to check.
    expect(run.lines.some((l) => l.includes('redis persistence'))).toBe(false);
    expect(run.lines.at(-1)).toBe('doctor: 3 of 10 checks failed: redis, discord, model');
  });

  it('checks the PostgreSQL store instead of the file when HERALD_DATABASE_URL is set, without showing its password', async () => {
    const fresh = await freshPostgresSchema('herald_doctor');
    try {
      const withPassword = new URL(fresh.url);
      withPassword.password = 'doctor-secret-pw';
      const ok = await herald(['doctor'], { ...env, HERALD_DATABASE_URL: withPassword.toString() });
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(ok.lines.find((l) => l.includes(' postgres '))).toMatch(
        /^✓ postgres\s+postgres:\/\/postgres@127\.0\.0\.1:5432\/test\S* opened \(migrations applied\)$/,
      );
      expect(ok.lines.some((l) => l.includes(' sqlite'))).toBe(false);
      expect(ok.lines.find((l) => l.includes(' postgres indexes '))).toMatch(/^✓ postgres indexes\s+all \d+ indexes the migrations create are there$/);
      expect(ok.lines.find((l) => l.includes(' postgres version '))).toMatch(/^✓ postgres version\s+PostgreSQL \d+/);
      const down = await herald(['doctor'], { ...env, HERALD_DATABASE_URL: 'postgres://postgres:doctor-secret-pw@127.0.0.1:1/test' });
      expect(down.code).toBe(1);
      expect(down.lines.find((l) => l.includes(' postgres '))).toMatch(/^✗ postgres\s+postgres:\/\/postgres@127\.0\.0\.1:1\/test: .*ECONNREFUSED/);
      expect(down.lines.at(-1)).toBe('doctor: 1 of 11 checks failed: postgres');
      expect(ok.stdout + ok.stderr + down.stdout + down.stderr).not.toContain('doctor-secret-pw');
    } finally {
      await fresh.drop();
    }
  });

  it('lists each pooled key by fingerprint with its state, never the key', async () => {
    const run = await herald(['doctor'], { ...env, OPENAI_API_KEY_2: 'sk-second-pooled-key' });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.lines.find((l) => l.includes(' keys openai '))).toMatch(
      /^✓ keys openai\s+2 keys, fill_first: sha256:[0-9a-f]{8} ready \(\d+ uses\); sha256:[0-9a-f]{8} ready \(\d+ uses\)$/,
    );
    expect(run.stdout + run.stderr).not.toContain('sk-second-pooled-key');
  });

  it('a bad setting fails the config check with the variable named, exit 1', async () => {
    const run = await herald(['doctor'], { ...env, HERALD_PORT: 'eighty' });
    expect(run.code).toBe(1);
    expect(run.lines[0]).toBe('✗ config            HERALD_PORT: must be a whole number (got "eighty")');
    expect(run.lines.at(-1)).toBe('doctor: 1 of 1 checks failed: config');
  });
});

describe('herald sessions and pairing', () => {
  const db = join(dir, 'herald.db');
  let sessionId: string;

  beforeAll(async () => {
    const store = await SessionStore.open(db);
    try {
      sessionId = await seedSourdough(store);
      await store.getOrCreateSession('agent:main:discord:thread:7:8', { source: 'discord', userId: '7' });
    } finally {
      await store.close();
    }
  });

  it('sessions list (with filters), show and search', async () => {
    const all = await herald(['sessions', 'list'], { HERALD_DB: db });
    expect(all.code, all.stderr).toBe(0);
    expect(all.lines).toHaveLength(2);
    const tgOnly = await herald(['sessions', 'list', '--source', 'telegram'], { HERALD_DB: db });
    expect(tgOnly.lines).toHaveLength(1);
    // With its last activity, total tokens and cost (M1: the cost providers reported is shown when there is one).
    expect(tgOnly.lines[0]).toMatch(
      new RegExp(
        `^${sessionId}  telegram  user 42  started \\S+  active  2 msgs  last active \\S+  160 tokens  \\$0\\.0100 \\(billed \\$0\\.0200\\)  agent:main:telegram:dm:42$`,
      ),
    );

    const json = await herald(['sessions', 'list', '--source', 'discord', '--json'], { HERALD_DB: db });
    expect(JSON.parse(json.stdout)).toMatchObject({ sessions: [{ source: 'discord', user_id: '7', ended_at: null }], next_cursor: null });

    const show = await herald(['sessions', 'show', sessionId], { HERALD_DB: db });
    expect(show.code).toBe(0);
    expect(show.lines.slice(2).map((l) => l.replace(/^\[[^\]]+\] /, ''))).toEqual([
      'user: how do I proof sourdough overnight?',
      'assistant: Keep it in the fridge at 4 °C.',
    ]);

    const search = await herald(['sessions', 'search', 'sourdough'], { HERALD_DB: db });
    expect(search.lines).toEqual([`${sessionId}  telegram  user  how do I proof >>>sourdough<<< overnight?`]);

    const missing = await herald(['sessions', 'show', 'no-such-session'], { HERALD_DB: db });
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toBe('no session no-such-session');
    const badSource = await herald(['sessions', 'list', '--source', 'fax'], { HERALD_DB: db });
    expect(badSource.code).toBe(2);
    expect(badSource.stderr).toContain('--source: must be one of telegram, discord, slack, whatsapp, matrix, cli, api');
  });

  it('pairing list, approve (by the code the user got) and revoke', async () => {
    const store = await SessionStore.open(db);
    const issued = await new PairingService(store.sql).request('discord', '555', 'Dana');
    await store.close();
    if (issued.status !== 'issued') throw new Error(`no code: ${issued.status}`);

    const listed = await herald(['pairing', 'list'], { HERALD_DB: db });
    expect(listed.code).toBe(0);
    expect(listed.lines[0]).toBe('pending (1):');
    expect(listed.lines[1]).toMatch(/^ {2}discord {2}555 {2}Dana {2}expires /);
    expect(listed.stdout).not.toContain(issued.code);

    const wrong = await herald(['pairing', 'approve', 'discord', 'NOTACODE'], { HERALD_DB: db });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('no pending request with code NOTACODE on discord');
    const approved = await herald(['pairing', 'approve', 'discord', issued.code], { HERALD_DB: db });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout.trim()).toBe('approved discord user 555 (Dana)');
    const check = await SessionStore.open(db);
    expect(await new PairingService(check.sql).isApproved('discord', '555')).toBe(true);
    await check.close();

    const revoked = await herald(['pairing', 'revoke', 'discord', '555'], { HERALD_DB: db });
    expect(revoked.stdout.trim()).toBe('revoked discord user 555');
    const again = await herald(['pairing', 'revoke', 'discord', '555'], { HERALD_DB: db });
    expect(again.code).toBe(1);
    const badPlatform = await herald(['pairing', 'approve', 'icq', 'X'], { HERALD_DB: db });
    expect(badPlatform.code).toBe(2);
    expect(badPlatform.stderr).toContain('unknown platform "icq"');
  });

  it('an unknown command or option exits 2 with a hint; help lists every command', async () => {
    const bogus = await herald(['bogus']);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr.trim()).toBe('unknown command "bogus"; run `npx herald help`');
    const badOption = await herald(['sessions', 'list', '--colour']);
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toContain("Unknown option '--colour'");
    const help = await herald(['help']);
    expect(help.code).toBe(0);
    for (const c of ['npx herald start', 'npx herald doctor', 'npx herald pairing approve', 'npx herald sessions search', 'npx herald store migrate'])
      expect(help.stdout).toContain(c);
  });
});

describe('herald store migrate', () => {
  const db = join(dir, 'migrate.db');
  const password = 'pw-never-printed';
  let target: Awaited<ReturnType<typeof freshPostgresSchema>>;
  let url: string;
  let sessionId: string;

  beforeAll(async () => {
    target = await freshPostgresSchema('herald_cli');
    // Trust authentication ignores the password; it is there to prove it never reaches the output.
    const u = new URL(target.url);
    u.password = password;
    url = u.toString();
    const store = await SessionStore.open(db);
    try {
      sessionId = await seedSourdough(store);
    } finally {
      await store.close();
    }
  });
  afterAll(async () => {
    await target?.drop();
  });

  it('copies the configured SQLite store into PostgreSQL, where the CLI then finds it; a second run is refused', async () => {
    const run = await herald(['store', 'migrate', '--to', url], { HERALD_DB: db });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.lines).toContain('sessions: 1 row');
    expect(run.lines).toContain('messages: 2 rows');
    // Every table the gateway creates, scheduled tasks and budget spend included.
    expect(run.lines).toContain('schedules: 0 rows');
    expect(run.lines).toContain('spend: 0 rows');
    expect(run.lines).toContain('reasoning_display: 0 rows');
    expect(run.lines).toContain('checked: all 20 tables have as many rows in the target as in the source');
    expect(run.stdout + run.stderr).not.toContain(password);

    const search = await herald(['sessions', 'search', 'sourdough'], { HERALD_DATABASE_URL: url });
    expect(search.code, search.stderr).toBe(0);
    expect(search.lines).toHaveLength(1);
    expect(search.lines[0]).toMatch(new RegExp(`^${sessionId}  telegram  user  how do I proof >>>sourdough<<< overnight`));

    const again = await herald(['store', 'migrate', '--to', url, '--from', db]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('the target already holds data (sessions: 1 row, messages: 2 rows, session_keys: 1 row), so nothing was copied');
    expect(again.stderr).toContain('run again with --force');
    expect(again.stdout + again.stderr).not.toContain(password);

    const usage = await herald(['store', 'migrate', '--from', db]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--to: the PostgreSQL database to copy into is required');
  });
});

describe('herald start', () => {
  it('runs the gateway with the given role until SIGTERM', async () => {
    const port = await freePort();
    const proc = spawn(process.execPath, [HERALD_BIN, 'start', '--role', 'worker'], {
      cwd: dir,
      env: isolatedEnv({ HERALD_REDIS_PREFIX: prefix, HERALD_PORT: String(port), HERALD_DB: join(dir, 'start.db') }),
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    try {
      const detailed = await waitFor(
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/health/detailed`);
          if (!res.ok) return null;
          const body = (await res.json()) as { role: string; workers: Array<{ pid: number }> };
          // The first heartbeat lands just after the server starts answering.
          return body.workers.some((w) => w.pid === proc.pid) ? body : null;
        },
        // As long as the other gateway tests give a start (helpers/gateway.ts): a loaded machine starts slowly.
        { timeoutMs: 90_000, what: 'herald start to serve /health/detailed with its own heartbeat' },
      );
      expect(detailed.role).toBe('worker');
      expect(detailed.workers.map((w) => w.pid)).toContain(proc.pid);
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
