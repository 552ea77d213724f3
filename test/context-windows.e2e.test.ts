/**
 * A context window learnt from a provider's error outlives the process that learnt it and reaches every worker,
 * on SQLite and on PostgreSQL: gateway 1 is told "maximum context length is 4000 tokens" and stores it; gateway 2
 * — a fresh process on the same store, which never saw the error — budgets a long conversation against 4,000
 * tokens (not the 1M of the model table) and compresses it before answering.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SUMMARIZER_SYSTEM_PROMPT, SessionStore } from '@herald/agent-core';
import { freshPostgresSchema } from '../packages/agent-core/src/store/test-support.js';
import { startFakeOpenAI, type RecordedRequest } from './fakes/llm/index.js';
import { startTelegramFake } from './fakes/telegram/index.js';
import { deleteRedisPrefix, uniquePrefix } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

const LIMIT = 4_000;
const OVERFLOW = `This model's maximum context length is ${LIMIT} tokens. However, your messages resulted in 5120 tokens. Please reduce the length of the messages.`;
const isSummary = (r: RecordedRequest): boolean => r.rawBody.includes(SUMMARIZER_SYSTEM_PROMPT.slice(0, 40));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function storeLocation(backend: 'sqlite' | 'postgres'): Promise<Record<string, string>> {
  if (backend === 'postgres') {
    const fresh = await freshPostgresSchema('herald_windows');
    cleanups.push(fresh.drop);
    return { HERALD_DATABASE_URL: fresh.url };
  }
  const dir = mkdtempSync(join(tmpdir(), 'herald-windows-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return { HERALD_DB: join(dir, 'herald.db') };
}

describe.each(['sqlite', 'postgres'] as const)('learnt context windows on %s', (backend) => {
  it('a limit one gateway learnt is the window of the next one on the same store', async () => {
    const tg = await startTelegramFake();
    cleanups.push(() => tg.close());
    const llm = await startFakeOpenAI();
    cleanups.push(() => llm.close());
    const prefix = uniquePrefix('windows');
    cleanups.push(() => deleteRedisPrefix(prefix));
    const where = await storeLocation(backend);
    const env = telegramEnv(tg, llm, { HERALD_REDIS_PREFIX: prefix, HERALD_COMPRESSION_THRESHOLD: '0.5', ...where });
    llm.respondWith((req) => {
      if (isSummary(req)) return { text: 'SUMMARY-W4: the user counted to fifteen.' };
      if (lastUserText(req) === 'too big') return { error: { status: 400, kind: 'context_length', message: OVERFLOW } };
      return { text: `re: ${lastUserText(req).slice(0, 12)}` };
    });
    const say = async (chat: number, text: string, expect: (t: string) => boolean): Promise<void> => {
      const before = repliesIn(tg, chat).length;
      tg.injectMessage({ chatId: chat, userId: chat, text });
      await waitFor(() => repliesIn(tg, chat).slice(before).some(expect), { timeoutMs: 30_000, what: `an answer to "${text.slice(0, 20)}"` });
    };

    const first = await startGateway({ env });
    cleanups.push(async () => void (await first.stop()));
    // A long conversation: about 3,500 tokens, nothing for the model table's 1M-token window of gpt-4.1-mini.
    const CHAT = 701;
    for (let i = 0; i < 14; i++) await say(CHAT, `n${i} ${'w'.repeat(480)}`, (t) => t.startsWith(`re: n${i} `));
    expect(llm.requests.filter(isSummary)).toHaveLength(0);
    // Another chat runs into the server's real limit, which names it.
    await say(702, 'too big', () => true);
    // The operator sees it too.
    const health = (await (await fetch(`${first.url}/health/detailed`)).json()) as {
      context_windows: Array<{ model: string; context_limit: number; learnt_at: string }>;
    };
    expect(health.context_windows.map((w) => [w.model, w.context_limit])).toEqual([['openai:gpt-4.1-mini', LIMIT]]);
    expect(Date.parse(health.context_windows[0]!.learnt_at)).toBeGreaterThan(0);
    await first.stop();

    const store = await SessionStore.open(where.HERALD_DATABASE_URL ?? where.HERALD_DB!);
    cleanups.push(() => store.close());
    const rows = await store.sql.all<{ model_ref: string; context_limit: number | string }>('SELECT model_ref, context_limit FROM context_windows');
    expect(rows.map((r) => [r.model_ref, Number(r.context_limit)])).toEqual([['openai:gpt-4.1-mini', LIMIT]]);

    const second = await startGateway({ env });
    cleanups.push(async () => void (await second.stop()));
    const seenBefore = llm.requests.length;
    await say(CHAT, 'n14 and one more', (t) => t.startsWith('re: n14'));
    const after = llm.requests.slice(seenBefore);
    // Gateway 2 never saw the error, yet compressed first: the conversation is over the learnt window's threshold.
    expect(after.filter(isSummary)).toHaveLength(1);
    const answer = after.filter((r) => !isSummary(r)).at(-1)!;
    // The summary stands in for the middle (booleans: the request body is long).
    expect(answer.rawBody.includes('SUMMARY-W4')).toBe(true);
    expect(answer.rawBody.includes('"n3 www')).toBe(false);
    expect(answer.rawBody.includes('"n13 www')).toBe(true);
  });
});
