import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LEARNT_WINDOW_TTL_MS, MemoryStore, SessionStore, SqliteSql, StoredWindowBook, createTodoTool, getTodos, type Sql } from '@herald/agent-core';
import { freshPostgresSchema, useTempStores } from '../../../../packages/agent-core/src/store/test-support.js';
import { PairingService } from '../features/pairing/index.js';
import { SessionCounters } from '../features/sessions/counters.js';
import { VoiceReplies } from '../features/sessions/voice-replies.js';
import { SpendStore } from '../features/budgets/spend-store.js';
import { ReasoningDisplay } from '../features/sessions/reasoning-display.js';
import { ScheduleStore } from '../features/schedules/store.js';
import { SkillStore } from '../features/skills/store.js';
import type { StoreConfig } from '../features/sessions/store-target.js';
import { CliError, type CliIo } from './io.js';
import { storeCommand } from './store.js';

// The copy's order: tables referred to first, else the source's creation order (migration 55 rebuilt `sessions`).
const ALL_TABLES = [
  'known_threads',
  'context_windows',
  'tool_approvals',
  'skills',
  'session_prompts',
  'sessions',
  'messages',
  'session_keys',
  'turns',
  'pairing_requests',
  'pairing_approved',
  'pairing_lockouts',
  'session_counters',
  'turn_files',
  'voice_replies',
  'schedules',
  'spend',
  'reasoning_display',
  'tool_memory',
  'tool_todos',
];

interface Captured extends CliIo {
  out: (line: string) => void;
  lines: string[];
  errors: string[];
}

function capture(): Captured {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => void lines.push(l), err: (l) => void errors.push(l), json: () => 0, ask: async () => null };
}

const sqlite = useTempStores('sqlite');
const schemas: Array<() => Promise<void>> = [];
const open: SessionStore[] = [];

async function freshTarget(): Promise<string> {
  const fresh = await freshPostgresSchema('herald_mig');
  schemas.push(fresh.drop);
  return fresh.url;
}

async function openStore(at: string): Promise<SessionStore> {
  const store = await SessionStore.open(at);
  open.push(store);
  return store;
}

afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});
afterAll(async () => {
  for (const drop of schemas.splice(0)) await drop();
});

function configFor(db: string): Pick<StoreConfig, 'db'> {
  return { db };
}

function migrate(from: string, to: string, ...extra: string[]): Promise<{ code: number; io: Captured }> {
  const io = capture();
  return storeCommand(['migrate', '--to', to, ...extra], configFor(from), io).then((code) => ({ code, io }));
}

/** Every row of `table`, as arrays in the source's column order, sorted: comparable across the two databases. */
async function rowsOf(sql: Sql, table: string, columns: readonly string[]): Promise<string[]> {
  const rows = await sql.all<Record<string, unknown>>(`SELECT ${columns.join(', ')} FROM ${table}`);
  return rows.map((r) => JSON.stringify(columns.map((c) => r[c]))).sort();
}

interface Seeded {
  file: string;
  first: string;
  second: string;
  other: string;
  maxMessageId: number;
}

/** A store a gateway could have written: lineage and titles, tool calls, a turn, pairing, memory, todos, counters. */
async function seedSqlite(): Promise<Seeded> {
  const file = await sqlite.location();
  const store = await SessionStore.open(file);
  try {
    const key = 'agent:main:telegram:dm:42';
    const first = (await store.getOrCreateSession(key, { source: 'telegram', userId: '42', chatId: '42', model: 'openai:gpt-4.1-mini' })).session;
    await store.setTitle(first.id, 'Sourdough');
    await store.appendMessages(first.id, [
      { role: 'user', content: 'how long should sourdough proof overnight?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'memory', arguments: '{"action":"add","content":"bakes bread"}' } }],
      },
      { role: 'tool', content: 'saved', tool_call_id: 'call_1', tool_name: 'memory' },
      { role: 'assistant', content: 'About 12 hours in the fridge at 4 °C.', finish_reason: 'stop' },
    ]);
    await store.addUsage(first.id, { input: 1200, output: 80, cacheRead: 300, cacheWrite: 0, costUsd: 0.00125, lastPromptTokens: 1500 });
    // Compression: the conversation continues in a child session that carries the lineage title.
    const second = await store.startNewSession(key, {
      source: 'telegram',
      userId: '42',
      chatId: '42',
      parentSessionId: first.id,
      title: 'Sourdough #2',
      endPreviousReason: 'compression',
    });
    await store.beginTurn('turn-1', second.id, 1_795_600_000_000_001);
    await store.appendMessages(
      second.id,
      [
        { role: 'user', content: 'and the rye starter?' },
        { role: 'assistant', content: 'Feed it twice a day.' },
      ],
      { turnId: 'turn-1' },
    );
    // The reply carried two files: one sent, one still pending with its bytes.
    await store.recordReply('turn-1', 'Feed it twice a day.', 1_795_600_000_000_001, [
      { kind: 'image', name: 'rye.png', mimeType: 'image/png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47]), caption: 'Rye' },
      { kind: 'voice', name: 'reply.ogg', mimeType: 'audio/ogg', data: Buffer.from('OggS\0\x02', 'latin1') },
    ]);
    await store.markFileSent('turn-1', 0, 'tg-msg-10');
    await store.markDelivered('turn-1', ['tg-msg-9']);
    await new VoiceReplies(store.sql).set(key, true);
    await new ReasoningDisplay(store.sql).set(key, true);
    // A scheduled task: `herald store migrate` must carry it over like every other table.
    await new ScheduleStore(store.sql).create({
      origin: { platform: 'telegram', ownerId: '42', conversationId: 'telegram:42', chatType: 'dm', chatId: '42', sessionKey: key },
      sessionMode: 'origin',
      when: { kind: 'cron', cron: '0 8 * * *' },
      timeZone: 'Europe/Berlin',
      prompt: 'remind me to feed the starter',
    });
    const other = (await store.getOrCreateSession('agent:main:discord:thread:7:8', { source: 'discord', userId: '7' })).session;
    await store.appendMessages(other.id, [{ role: 'user', content: 'a message with a NUL\u0000 from a binary tool result' }]);
    await store.rememberThread('discord', '7:8');

    const pairing = new PairingService(store.sql);
    const issued = await pairing.request('telegram', '99', 'Dana');
    if (issued.status !== 'issued') throw new Error(`no code: ${issued.status}`);
    await pairing.approve('telegram', issued.code);
    await pairing.request('slack', 'U1', 'Sam');
    await pairing.approve('slack', 'WRONGCODE');

    await new MemoryStore(store).add('telegram:42', 'memory', 'Bakes sourdough on weekends');
    await new MemoryStore(store).add('telegram:42', 'user', 'Prefers metric units');
    await createTodoTool(store).execute({ action: 'add', texts: ['Feed the starter', 'Bake'] }, { signal: new AbortController().signal, sessionId: second.id });
    // API calls: one on the session row, two in the older session_counters table (both move; the count adds them).
    await store.addUsage(second.id, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, apiCalls: 1 });
    await store.sql.run('INSERT INTO session_counters (session_id, api_calls, updated_at) VALUES (?, ?, ?)', [second.id, 2, Date.now()]);
    // Budget spend (money as a fraction, tokens, the 80 % notice given) moves with the store.
    const spend = new SpendStore(store.sql);
    await spend.add(
      [
        { scope: 'user:telegram:42', period: 'day:2026-11-26' },
        { scope: 'global', period: 'month:2026-11' },
      ],
      1580,
      0.00125,
    );
    await spend.markWarned('global', 'month:2026-11');
    // A context window a provider named: every worker of the new store should know it too.
    await new StoredWindowBook(store.sql, LEARNT_WINDOW_TTL_MS).save({ key: 'vllm:qwen3-8b', limit: 32_768, learntAt: 1_795_600_000_000 });
    // A skill the agent wrote, how the session's prompt was built, and an approval decision move with the store too.
    await new SkillStore(store.sql).put(
      'default',
      'proofing',
      'How long dough proofs',
      '---\nname: proofing\ndescription: How long dough proofs\n---\n12 h cold.',
    );
    await store.sql.run('INSERT INTO session_prompts (session_id, personality, layers, created_at) VALUES (?, ?, ?, ?)', [
      second.id,
      'concise',
      '[{"name":"profile","chars":12}]',
      1_795_600_000_000,
    ]);
    await store.sql.run(
      `INSERT INTO tool_approvals (id, request_id, session_id, session_key, platform, chat_id, tool, args, asked_by, decision, decided_by, asked_at, decided_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ['ap-1', 'req-1', second.id, key, 'telegram', '42', 'execute_code', '{}', '42', 'denied', 'telegram:42', 1_795_600_000_000, 1_795_600_000_001],
    );

    const maxMessageId = (await store.sql.get<{ id: number }>('SELECT max(id) AS id FROM messages'))!.id;
    return { file, first: first.id, second: second.id, other: other.id, maxMessageId };
  } finally {
    await store.close();
  }
}

describe('herald store migrate', () => {
  let seeded: Seeded;
  beforeAll(async () => {
    seeded = await seedSqlite();
  });

  it('copies every table into PostgreSQL row for row, and the copy works as a store', async () => {
    const to = await freshTarget();
    const { code, io } = await migrate(seeded.file, to);
    expect(io.errors).toEqual([]);
    expect(code).toBe(0);
    expect(io.lines[0]).toMatch(/^copying .+ into postgres:\/\/postgres@127\.0\.0\.1:5432\/test/);
    expect(io.lines.slice(1, 1 + ALL_TABLES.length).map((l) => l.split(':')[0])).toEqual(ALL_TABLES);
    expect(io.lines).toContain('messages: 7 rows (1 value held NUL characters, which PostgreSQL text cannot store: copied as U+FFFD)');
    expect(io.lines).toContain('pairing_approved: 1 row');
    expect(io.lines).toContain(`checked: all ${ALL_TABLES.length} tables have as many rows in the target as in the source`);
    expect(io.lines.at(-2)).toMatch(/^copied \d+ rows in [\d.]+ s \(\d+ rows\/s\) into postgres:/);

    const source = await openStore(seeded.file);
    const target = await openStore(to);
    for (const table of ALL_TABLES) {
      const columns = (await source.sql.all<{ name: string }>('SELECT name FROM pragma_table_info(?)', [table])).map((c) => c.name);
      const want = (await rowsOf(source.sql, table, columns)).map((r) => r.replace('\\u0000', '\uFFFD'));
      expect(await rowsOf(target.sql, table, columns), table).toEqual(want);
      expect(want.length, `${table} was seeded`).toBeGreaterThan(0);
    }

    // Through the store's own API: history with tool calls, lineage, titles, search, the turn outbox.
    expect(await target.getHistory(seeded.first)).toEqual(await source.getHistory(seeded.first));
    expect((await target.ancestry(seeded.second)).map((s) => s.id)).toEqual([seeded.second, seeded.first]);
    expect((await target.resolveTitle('Sourdough'))?.id).toBe(seeded.second);
    expect((await target.getTurn('turn-1'))?.status).toBe('delivered');
    const hits = await target.search('sourdough proof');
    expect(hits.map((h) => h.sessionId)).toEqual([seeded.first]);
    expect(hits[0].snippet).toContain('should >>>sourdough<<< >>>proof<<< overnight');
    expect(await new PairingService(target.sql).isApproved('telegram', '99')).toBe(true);
    expect(await new MemoryStore(target).snapshot('telegram:42')).toEqual({ memory: ['Bakes sourdough on weekends'], user: ['Prefers metric units'] });
    expect((await getTodos(target, seeded.second)).map((t) => t.text)).toEqual(['Feed the starter', 'Bake']);
    expect(await new SessionCounters(target).apiCalls(seeded.second)).toBe(3);
    expect((await target.getTurnFiles('turn-1')).map((f) => [f.sentId, f.data?.toString('latin1') ?? null])).toEqual([
      ['tg-msg-10', null],
      [null, 'OggS\0\x02'],
    ]);
    expect(await new VoiceReplies(target.sql).isOn('agent:main:telegram:dm:42')).toBe(true);
    expect(await new ReasoningDisplay(target.sql).isOn('agent:main:telegram:dm:42')).toBe(true);
    expect(await new StoredWindowBook(target.sql, LEARNT_WINDOW_TTL_MS).since(0)).toEqual([
      { key: 'vllm:qwen3-8b', limit: 32_768, learntAt: 1_795_600_000_000 },
    ]);

    // The copied ids stay taken: a new message gets the next one, and new memory rows do too.
    const [added] = await target.appendMessages(seeded.second, [{ role: 'user', content: 'one more question' }]);
    expect(added.id).toBe(seeded.maxMessageId + 1);
    const memory = await new MemoryStore(target).add('telegram:42', 'memory', 'Owns a Dutch oven');
    expect(memory.at(-1)?.id).toBe(3);
  });

  it('refuses a target that already holds data, changing nothing; --force adds only what is missing', async () => {
    const to = await freshTarget();
    const existing = await openStore(to);
    await existing.getOrCreateSession('agent:main:slack:dm:U5', { source: 'slack', userId: 'U5' });

    const refused = await migrate(seeded.file, to);
    expect(refused.code).toBe(1);
    expect(refused.io.errors.join('\n')).toMatch(
      /the target already holds data \(sessions: 1 row, session_keys: 1 row\), so nothing was copied\. .*run again with --force/,
    );
    expect((await existing.listSessions()).sessions).toHaveLength(1);

    const forced = await migrate(seeded.file, to, '--force');
    expect(forced.io.errors).toEqual([]);
    expect(forced.code).toBe(0);
    expect(forced.io.lines).toContain('sessions: 3 rows');
    expect((await existing.listSessions()).sessions).toHaveLength(4);

    // Run again: everything is there already, nothing is added twice.
    const again = await migrate(seeded.file, to, '--force');
    expect(again.code).toBe(0);
    expect(again.io.lines.find((l) => l.startsWith('messages:'))).toMatch(/^messages: 0 rows \(7 already there, skipped[;)]/);
    expect(again.io.lines).toContain(`checked: every row of the ${ALL_TABLES.length} tables was copied, or skipped because its key was already in the target`);
    expect((await existing.listSessions()).sessions).toHaveLength(4);
    expect(await existing.getMessages(seeded.first)).toHaveLength(4);
  });

  it('usage mistakes are CliErrors (exit 2), never echoing the URL; a file that is not a Herald store is refused', async () => {
    const to = await freshTarget();
    await expect(migrate(seeded.file, 'mysql://root:hunter22@db/herald')).rejects.toThrow(new CliError('--to: must be a postgres:// (or postgresql://) URL'));
    await expect(storeCommand(['migrate'], configFor(seeded.file), capture())).rejects.toThrow(/--to: the PostgreSQL database to copy into is required/);
    await expect(migrate(`${sqlite.dir}/missing.db`, to)).rejects.toThrow(/^no SQLite store at .*missing\.db \(name it with --from, or set HERALD_DB\)$/);
    await expect(storeCommand(['copy'], configFor(seeded.file), capture())).rejects.toThrow(/^usage: npx herald store migrate/);

    const foreign = await sqlite.location('foreign.db');
    const other = await SqliteSql.open(foreign);
    await other.exec('CREATE TABLE recipes (id INTEGER PRIMARY KEY, name TEXT)');
    await other.close();
    const notHerald = await migrate(foreign, to);
    expect(notHerald.code).toBe(1);
    expect(notHerald.io.errors).toEqual([`${foreign} is not a Herald store (it has no schema_migrations table); nothing was copied`]);
  });

  it('a database that cannot be reached: exit 1 naming it without the password', async () => {
    const { code, io } = await migrate(seeded.file, 'postgres://herald:s3cret-pw@127.0.0.1:1/herald');
    expect(code).toBe(1);
    expect(io.errors.join('\n')).toMatch(/^cannot open postgres:\/\/herald@127\.0\.0\.1:1\/herald: .*ECONNREFUSED.*; nothing was copied$/);
    expect(io.errors.join('\n')).not.toContain('s3cret-pw');
  });
});
