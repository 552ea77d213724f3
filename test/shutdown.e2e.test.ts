/**
 * Stopping the real gateway process while work it started behind a reply is still running: /new answers at once
 * and saves what the conversation should leave behind (the memory flush, one model call) afterwards. A SIGTERM
 * in between must wait for that flush instead of closing the store under it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore } from '@herald/agent-core';
import { startFakeOpenAI } from './fakes/llm/index.js';
import { startTelegramFake } from './fakes/telegram/index.js';
import { startCluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { lastUserText, offersOnlyMemory } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

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
    await flushing;

    const exited = gw.stop('SIGTERM');
    await gw.waitForLog((l) => l.msg === 'waiting for background tasks before stopping', 'shutdown to wait for the flush');
    finishFlush();
    expect(await exited).toBe(0);

    const store = await SessionStore.open(cluster.dbPath);
    try {
      const notes = await store.sql.all<{ content: string }>('SELECT content FROM tool_memory');
      expect(notes.map((n) => n.content)).toEqual(['Prefers answers in French']);
    } finally {
      await store.close();
    }
  });
});
