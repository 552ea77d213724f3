/** Prices, spend and budgets on SQLite and PostgreSQL: the same numbers, refusals and one-time notices on both. */
import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { PIPELINED_CONNECTIONS } from '../../../../../packages/agent-core/src/store/postgres-pipes.js';
import type { Budget } from '../../support/config/profile-schema.js';
import { BudgetGuard } from './guard.js';
import { SpendMeter } from './meter.js';
import { createFallbackProvider, ProviderError, type Provider, type Sql, type SqlWrite } from '@herald/agent-core';
import { PriceTable } from './prices.js';
import { runMigrations, allMigrations } from '../../../../../packages/agent-core/src/store/migrations.js';
import { openSql } from '../../../../../packages/agent-core/src/store/session-store.js';
import { SPEND_SHARDS, SPEND_SHARDS_MIGRATION_VERSION, SpendStore } from './spend-store.js';

const M = 1_000_000;
const usage = (input: number, output = 0, cacheRead = 0, cacheWrite = 0) => ({ input, output, cacheRead, cacheWrite });

describe('PriceTable', () => {
  const prices = new PriceTable({ 'my-model': { input: 1, output: 2, cache_read: 0.1, cache_write: 1.5 }, 'gpt-4.1-mini': { input: 10, output: 20 } });

  it('prices a call with input, output, cache-read and cache-write prices (USD per million tokens)', () => {
    expect(prices.costOf('my-model', usage(M, M, M, M))).toBeCloseTo(1 + 2 + 0.1 + 1.5, 10);
    // Family names cover snapshots and tags; a provider prefix is ignored.
    expect(prices.costOf('openai:my-model-2026-01-01', usage(M))).toBeCloseTo(1, 10);
  });

  it("the operator's price wins over the built-in table; unknown cache prices fall back to the input price", () => {
    expect(prices.costOf('gpt-4.1-mini', usage(M, 0, M))).toBeCloseTo(20, 10);
    expect(prices.costOf('gpt-4.1-nano', usage(M))).toBeCloseTo(0.1, 10); // built-in
    expect(prices.costOf('llama3.1:8b', usage(M, M))).toBe(0); // unknown: free, tokens still count
  });

  it('prices speech-to-text by the token or by the minute, not as the chat model whose name it starts with', () => {
    // gpt-4o-transcribe's audio input is $6 per million, not gpt-4o's $2.50.
    expect(prices.costOf('openai:gpt-4o-transcribe', usage(M, M))).toBeCloseTo(6 + 10, 10);
    expect(prices.costOf('gpt-4o-mini-transcribe-2025-03-20', usage(M))).toBeCloseTo(3, 10);
    // whisper-1 reports seconds of audio and no tokens: $0.006 a minute.
    expect(prices.costOf('whisper-1', usage(0), { audioSeconds: 90 })).toBeCloseTo(0.009, 10);
    // An operator's own model billed by duration.
    const own = new PriceTable({ 'my-stt': { input: 0, output: 0, per_minute: 0.01 } });
    expect(own.costOf('openai:my-stt', usage(0), { audioSeconds: 30 })).toBeCloseTo(0.005, 10);
    // Seconds of audio for a model without a per-minute price cost nothing more.
    expect(prices.costOf('my-model', usage(M), { audioSeconds: 600 })).toBeCloseTo(1, 10);
  });

  it('prices text-to-speech by the characters read out', () => {
    expect(prices.costOf('openai:tts-1', usage(0), { characters: 400 })).toBeCloseTo(0.006, 10);
    expect(prices.costOf('tts-1-hd', usage(0), { characters: M })).toBeCloseTo(30, 10);
    expect(prices.costOf('gpt-4o-mini-tts', usage(0), { characters: 1000 })).toBeCloseTo(0.015, 10);
    expect(new PriceTable({ 'my-tts': { input: 0, output: 0, per_million_chars: 20 } }).costOf('my-tts', usage(0), { characters: 500 })).toBeCloseTo(0.01, 10);
  });

  it("SpendMeter adds a call made without a provider (a transcription) like a provider's", () => {
    const seen: string[] = [];
    const meter = new SpendMeter(prices, (c) => seen.push(`${c.model}=${c.costUsd}`));
    meter.add({ by: { name: 'openai', model: 'whisper-1' }, usage: usage(0), audioSeconds: 60 });
    meter.add({ by: { name: 'openai', model: 'gpt-4o-mini-transcribe' }, usage: usage(M, 0) });
    expect(meter.calls).toBe(2);
    expect(meter.usage).toEqual(usage(M));
    expect(meter.costUsd).toBeCloseTo(3.006, 10);
    expect(seen).toEqual(['openai:whisper-1=0.006', 'openai:gpt-4o-mini-transcribe=3']);
  });

  it('SpendMeter prices each call with the model that answered and sums the turn', async () => {
    const meter = new SpendMeter(prices);
    const seen: string[] = [];
    const fake = (model: string) => ({
      name: 'openai' as const,
      model,
      apiMode: 'chat_completions' as const,
      complete: async (_req: unknown) => ({ message: { role: 'assistant' as const, content: 'x' }, finishReason: 'stop' as const, usage: usage(M), model }),
    });
    const meter2 = new SpendMeter(prices, (c) => seen.push(`${c.model}=${c.costUsd}`));
    const wrapped = meter2.wrap({ primary: fake('my-model'), fallbacks: [fake('gpt-4.1-mini')] });
    await wrapped.primary.complete({} as never);
    await wrapped.fallbacks[0].complete({} as never);
    expect(meter2.costUsd).toBeCloseTo(11, 10);
    expect(meter2.usage).toEqual(usage(2 * M));
    expect(seen).toEqual(['openai:my-model=1', 'openai:gpt-4.1-mini=10']);
    expect(meter.costUsd).toBe(0);
  });

  it('a side-task chain whose first model fails is labelled and priced with the fallback that answered', async () => {
    const asked: string[] = [];
    const model = (name: string, fails: boolean): Provider => ({
      name: 'openai',
      model: name,
      apiMode: 'chat_completions',
      complete: async () => {
        asked.push(name);
        if (fails) throw new ProviderError('server_error', 'the first model is down', { status: 500 });
        return { message: { role: 'assistant', content: 'summary' }, finishReason: 'stop', usage: usage(M), model: name };
      },
    });
    const seen: string[] = [];
    const meter = new SpendMeter(prices, (c) => seen.push(`${c.model}=${c.costUsd}`));
    const chain = meter.provider(createFallbackProvider([model('my-model', true), model('gpt-4.1-mini', false)]));
    expect(chain.model).toBe('my-model');
    await chain.complete({ systemPrompt: '', messages: [], tools: [], signal: new AbortController().signal });
    expect(asked).toEqual(['my-model', 'gpt-4.1-mini']);
    // gpt-4.1-mini's $10 per million input tokens, not my-model's $1.
    expect(seen).toEqual(['openai:gpt-4.1-mini=10']);
    expect(meter.costUsd).toBeCloseTo(10, 10);
    expect(meter.calls).toBe(1);
  });
});

describe.each(STORE_BACKENDS)('budgets on %s', (backend) => {
  const temp = useTempStores(backend);
  const ana = { profile: 'support', platform: 'telegram', userId: '1' };
  const ben = { profile: 'support', platform: 'telegram', userId: '2' };
  const boss = { profile: 'support', platform: 'telegram', userId: '99' };

  async function guard(budgets: Budget[], clock = { t: Date.UTC(2026, 10, 26, 12) }): Promise<{ g: BudgetGuard; spend: SpendStore; clock: { t: number } }> {
    const spend = new SpendStore((await temp.open()).sql);
    return { g: new BudgetGuard(spend, { budgets, admins: ['telegram:99'], timeZone: 'UTC', now: () => clock.t }), spend, clock };
  }

  it('refuses at 100 % of a money cap, per user; the other user and admins go on', async () => {
    const { g } = await guard([{ scope: 'user', period: 'day', usd: 1 }]);
    expect(await g.refusal(ana)).toBeNull();
    await g.record(ana, usage(1000), 0.6);
    expect(await g.refusal(ana)).toBeNull();
    await g.record(ana, usage(1000), 0.4);
    expect(await g.refusal(ana)).toMatch(/^⛔ Your daily budget is used up \(\$1\.00 of \$1\.00\)\. Nothing more runs until it resets tomorrow/);
    expect(await g.refusal(ben)).toBeNull();
    await g.record(boss, usage(1000), 5);
    expect(await g.refusal(boss)).toBeNull();
  });

  it('the notice says the real share when one turn went past the budget (112 %, not 100 %)', async () => {
    const { g } = await guard([{ scope: 'user', period: 'day', tokens: 40 }]);
    await g.record(ana, usage(45), 0);
    expect(await g.notices(ana)).toEqual(['⚠️ Your daily budget is 112 % used (45 of 40 tokens).']);
  });

  it('tells at 80 % once per budget and period, whoever records first', async () => {
    const { g } = await guard([{ scope: 'global', period: 'month', tokens: 1000 }]);
    await g.record(ana, usage(700), 0);
    expect(await g.notices(ana)).toEqual([]);
    await g.record(ben, usage(150), 0);
    expect(await g.notices(ben)).toEqual(["⚠️ The team's monthly budget is 85 % used (850 of 1,000 tokens)."]);
    await g.record(ana, usage(50), 0);
    expect(await g.notices(ana)).toEqual([]);
    await g.record(ana, usage(100), 0);
    expect(await g.refusal(ana)).toMatch(/The team's monthly budget is used up/);
  });

  it('counts per profile, per user within a profile, and resets with a new day; an admin reset frees it at once', async () => {
    const { g, clock } = await guard([
      { scope: 'profile', period: 'day', usd: 2 },
      { scope: 'user', period: 'day', tokens: 100, profile: 'support' },
    ]);
    await g.record(ana, usage(100), 0.5);
    expect(await g.refusal(ana)).toMatch(/your daily budget for support is used up \(100 of 100 tokens\)/i);
    expect(await g.refusal({ ...ana, profile: 'default' })).toBeNull(); // the per-user cap is support's only
    await g.record(ben, usage(10), 1.5);
    expect(await g.refusal(ben)).toMatch(/the daily budget of support is used up/i);
    expect(await g.refusal({ ...ben, profile: 'sales' })).toBeNull(); // each profile has its own
    expect(await g.reset('profile:support', 'day')).toBe(1);
    expect(await g.refusal(ben)).toBeNull();
    clock.t += 24 * 3600_000;
    expect(await g.refusal(ana)).toBeNull();
  });

  it("/usage lines: the person's spend and what is left of each budget", async () => {
    const { g } = await guard([{ scope: 'user', period: 'month', usd: 10, tokens: 10_000 }]);
    await g.record(ana, usage(1500, 500), 2.5);
    expect(await g.usageLines(ana)).toEqual([
      'Your spend: today $2.50 · 2,000 tokens; this month $2.50 · 2,000 tokens',
      'Your monthly budget: $7.50 of $10.00 and 8,000 of 10,000 tokens left (25 % used)',
    ]);
    expect(await g.usageLines(boss)).toContain('You are an admin: budgets do not stop your turns.');
    expect((await g.spendNow('user:')).map((r) => `${r.scope} ${r.period} ${r.costUsd}`)).toEqual([
      'user:telegram:1 day:2026-11-26 2.5',
      'user:telegram:1 month:2026-11 2.5',
    ]);
  });

  it('one turn adds to every scope and period it counts in, in one statement, each row once', async () => {
    const spend = new SpendStore((await temp.open()).sql);
    const keys = [
      { scope: 'global', period: 'd2026-11-26' },
      { scope: 'global', period: 'm2026-11' },
      { scope: 'user:telegram:1', period: 'd2026-11-26' },
      { scope: 'user:telegram:1', period: 'd2026-11-26' },
    ];
    await spend.add(keys, 100, 0.5);
    await spend.add(keys.slice(0, 1), 10, 0.25);
    expect(await spend.get('global', 'd2026-11-26')).toMatchObject({ tokens: 110, costUsd: 0.75 });
    expect(await spend.get('global', 'm2026-11')).toMatchObject({ tokens: 100, costUsd: 0.5 });
    expect(await spend.get('user:telegram:1', 'd2026-11-26')).toMatchObject({ tokens: 100, costUsd: 0.5 });
    await spend.add([], 1, 1);
  });

  const day = 'day:2026-11-26';

  const rowsOf = async (sql: Sql, scope: string): Promise<number> =>
    Number((await sql.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM spend WHERE scope = ?', [scope]))?.n);

  it('turns recorded together add their spend in one upsert on PostgreSQL, the rows they share summed first', async () => {
    const store = await temp.open();
    const spend = new SpendStore(store.sql);
    const shared = [
      { scope: 'global', period: 'd1' },
      { scope: 'profile:support', period: 'd1' },
    ];
    const writes = [1, 2, 3].map((n) => spend.addWrite([...shared, { scope: `user:telegram:${n}`, period: 'd1' }], 10 * n, 0.25 * n));
    const [first] = writes;
    if (backend === 'sqlite') return void expect(first?.merge).toBeUndefined(); // SQLite writes each record on its own
    const merged = first?.merge?.merge(writes.map((w) => w as SqlWrite));
    await store.sql.run(merged?.sql ?? '', merged?.params ?? []);
    expect(await spend.get('global', 'd1')).toMatchObject({ tokens: 60, costUsd: 1.5 });
    expect(await spend.get('profile:support', 'd1')).toMatchObject({ tokens: 60, costUsd: 1.5 });
    for (const n of [1, 2, 3]) expect(await spend.get(`user:telegram:${n}`, 'd1')).toMatchObject({ tokens: 10 * n, costUsd: 0.25 * n });
    expect(await rowsOf(store.sql, 'global')).toBe(1);
  });

  /** A fresh store with its spend, and today's keys of `scopes`. */
  async function spendToday(scopes: string[]) {
    const store = await temp.open();
    return { store, spend: new SpendStore(store.sql), keys: scopes.map((scope) => ({ scope, period: day })) };
  }

  it('turns adding at once all count (spread over shards on PostgreSQL); one notice mark; a reset clears every shard', async () => {
    const { store, spend, keys } = await spendToday(['global', 'profile:support']);
    await Promise.all(Array.from({ length: 40 }, (_, i) => store.transaction(() => spend.add(keys, 10, i % 2 ? 0.5 : 0.25))));
    expect(await spend.get('global', day)).toEqual({ scope: 'global', period: day, tokens: 400, costUsd: 15, warned: false });
    const rows = await rowsOf(store.sql, 'global');
    if (backend === 'sqlite') expect(rows).toBe(1);
    // 40 transactions at once on the pool's connections, each adding to its server process's shard: one shard would
    // need every process's id to agree modulo 16.
    else expect(rows).toBeGreaterThan(1);
    expect(rows).toBeLessThanOrEqual(SPEND_SHARDS);

    const marks = await Promise.all([spend.markWarned('global', day), spend.markWarned('global', day), spend.markWarned('global', day)]);
    expect(marks.filter(Boolean)).toHaveLength(1);
    expect(await spend.get('global', day)).toMatchObject({ tokens: 400, costUsd: 15, warned: true });
    expect(await spend.list([day])).toEqual([
      { scope: 'global', period: day, tokens: 400, costUsd: 15, warned: true },
      { scope: 'profile:support', period: day, tokens: 400, costUsd: 15, warned: false },
    ]);

    expect(await spend.reset('global', [day, 'month:2026-11'])).toBe(1);
    expect(await spend.get('global', day)).toEqual({ scope: 'global', period: day, tokens: 0, costUsd: 0, warned: false });
    expect(await spend.markWarned('global', day)).toBe(true); // given again after a reset
    expect(await spend.get('profile:support', day)).toMatchObject({ tokens: 400, costUsd: 15 });
  });

  it('a server process adds to one row a scope and period: 20 turns one after another keep a row a connection', async () => {
    const scopes = ['global', 'user:telegram:7', 'profile-user:support:telegram:7'];
    const { store, spend, keys } = await spendToday(scopes);
    for (let i = 0; i < 20; i++) await spend.add(keys, 10, 0.25);
    // Statements on their own share the pipelined connections on PostgreSQL (postgres-pipes.ts), one on SQLite.
    const connections = backend === 'postgres' ? PIPELINED_CONNECTIONS : 1;
    for (const scope of scopes) {
      expect(await spend.get(scope, day)).toMatchObject({ tokens: 200, costUsd: 5 });
      const rows = await rowsOf(store.sql, scope);
      expect(rows).toBeGreaterThanOrEqual(1);
      expect(rows).toBeLessThanOrEqual(connections);
    }
  });

  it("every scope's spend goes to the shard of the server process that adds it (SQLite: shard 0)", async () => {
    const { store, spend, keys } = await spendToday(['global', 'user:telegram:9']);
    const pid = await store.transaction(async () => {
      await spend.add(keys, 10, 0.25);
      return backend === 'postgres' ? Number((await store.sql.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))?.pid) : 0;
    });
    const shards = await store.sql.all<{ scope: string; shard: number }>('SELECT scope, shard FROM spend ORDER BY scope');
    expect(shards).toEqual([
      { scope: 'global', shard: pid % SPEND_SHARDS },
      { scope: 'user:telegram:9', shard: pid % SPEND_SHARDS },
    ]);
  });

  it('spend recorded before the shards stays: its rows become shard 0 and go on counting', async () => {
    const sql = await openSql(await temp.location());
    try {
      await runMigrations(
        sql,
        allMigrations().filter((m) => m.version < SPEND_SHARDS_MIGRATION_VERSION),
      );
      await sql.run('INSERT INTO spend (scope, period, tokens, cost_usd, warned_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [
        'global',
        'month:2026-11',
        500,
        1.25,
        7,
        1,
      ]);
      expect(await runMigrations(sql)).toContain(SPEND_SHARDS_MIGRATION_VERSION);
      const spend = new SpendStore(sql);
      expect(await spend.get('global', 'month:2026-11')).toEqual({ scope: 'global', period: 'month:2026-11', tokens: 500, costUsd: 1.25, warned: true });
      expect(await spend.markWarned('global', 'month:2026-11')).toBe(false);
      await spend.add([{ scope: 'global', period: 'month:2026-11' }], 10, 0.25);
      await spend.add([{ scope: 'global', period: 'month:2026-11' }], 10, 0.25);
      expect(await spend.get('global', 'month:2026-11')).toMatchObject({ tokens: 520, costUsd: 1.75, warned: true });
    } finally {
      await sql.close();
    }
  });

  it('periods follow the configured time zone', async () => {
    const spend = new SpendStore((await temp.open()).sql);
    const late = Date.UTC(2026, 10, 30, 23, 30);
    const tokyo = new BudgetGuard(spend, { budgets: [], admins: [], timeZone: 'Asia/Tokyo', now: () => late });
    expect([tokyo.periodKey('day'), tokyo.periodKey('month')]).toEqual(['day:2026-12-01', 'month:2026-12']);
  });
});
