/**
 * Stopping the real gateway process while work it started behind a reply is still running: /new answers at once
 * and saves what the conversation should leave behind (the memory flush, one model call) afterwards, then ends the
 * session. A SIGTERM in between must wait for that flush and the end of the session instead of closing the store
 * under them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore } from '@herald/agent-core';
import { startFakeOpenAI } from './fakes/llm/index.js';
import { startTelegramFake } from './fakes/telegram/index.js';
import { startCluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { lastUserText, offersOnlyMemory } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { readStoreFile } from './helpers/store-rows.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('SIGTERM while /new is still saving notes', () => {
  it('waits for the memory flush: the note is saved, then the process exits 0', async () => {
    const tg = await startTelegramFake();
    cleanups.push(() => tg.close());
    const llm = await startFakeOpenAI();
    cleanups.push(() => llm.close());
    let flushStarted!: () => void;
    const flushing = new Promise<void>((resolve) => (flushStarted = resolve));
    let finishFlush!: () => void;
    const flushMayAnswer = new Promise<void>((resolve) => (finishFlush = resolve));
    llm.respondWith(async (req) => {
      if (!offersOnlyMemory(req)) return { text: `ok: ${lastUserText(req)}` };
      flushStarted();
      await flushMayAnswer;
      return { toolCalls: [{ name: 'memory', arguments: JSON.stringify({ action: 'add', target: 'user', content: 'Prefers answers in French' }) }] };
    });
    const cluster = await startCluster({ workers: 0, env: telegramEnv(tg, llm) });
    cleanups.push(() => cluster.stop());
    const gw = cluster.ingress;

    tg.injectMessage({ chatId: 81, userId: 81, text: 'bonjour' });
    await waitFor(() => repliesIn(tg, 81).length === 1, { timeoutMs: 20_000, what: 'the first reply' });
    tg.injectMessage({ chatId: 81, userId: 81, text: '/new' });
    await waitFor(() => repliesIn(tg, 81).length === 2, { timeoutMs: 20_000, what: 'the reply to /new' });
    // The flush runs behind the reply, on the session still open: it ends after the flush.
    await flushing;
    expect(readStoreFile(cluster.dbPath, (db) => db.prepare('SELECT ended_at FROM sessions').all())).toEqual([{ ended_at: null }]);

    const exited = gw.stop('SIGTERM');
    await gw.waitForLog((l) => l.msg === 'waiting for background tasks before stopping', 'shutdown to wait for the flush');
    finishFlush();
    expect(await exited).toBe(0);

    const store = await SessionStore.open(cluster.dbPath);
    try {
      const notes = await store.sql.all<{ content: string }>('SELECT content FROM tool_memory');
      expect(notes.map((n) => n.content)).toEqual(['Prefers answers in French']);
      // …and the session still ended after the flush.
      const ended = await store.sql.all<{ end_reason: string | null }>('SELECT end_reason FROM sessions');
      expect(ended.map((r) => r.end_reason)).toEqual(['session_reset']);
    } finally {
      await store.close();
    }
  });
});
