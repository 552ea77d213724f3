import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { InvalidCursorError, StoreNotFoundError } from './errors.js';
import { SessionStore } from './session-store.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

const KEY = 'agent:main:discord:group:123:u9';

describe('SessionStore.open on SQLite', () => {
  const temp = useTempStores('sqlite');

  it('creates the file and its directory in WAL mode, and answers ping until closed', async () => {
    const file = path.join(temp.dir, 'data', 'herald.db');
    const store = await SessionStore.open(file);
    expect(fs.existsSync(file)).toBe(true);
    const probe = new Database(file, { readonly: true });
    expect(probe.pragma('journal_mode', { simple: true })).toBe('wal');
    probe.close();
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    await expect(store.ping()).rejects.toThrow();
    await store.close();
  });

  it('works in memory', async () => {
    const store = await SessionStore.open(':memory:');
    try {
      const { session } = await store.getOrCreateSession(KEY, { source: 'api' });
      expect((await store.getSession(session.id))?.source).toBe('api');
    } finally {
      await store.close();
    }
  });
});

describe.each(STORE_BACKENDS)('the store contract on %s', (backend) => {
  const temp = useTempStores(backend);

  describe('open', () => {
    it('keeps everything across a close and re-open', async () => {
      const at = await temp.location();
      const first = await SessionStore.open(at);
      const { session } = await first.getOrCreateSession(KEY, { source: 'discord' });
      await first.appendMessages(session.id, [{ role: 'user', content: 'remember me' }]);
      await first.close();
      const second = await temp.open(at);
      expect((await second.currentSession(KEY))?.id).toBe(session.id);
      expect(await second.getHistory(session.id)).toEqual([{ role: 'user', content: 'remember me' }]);
    });
  });

  describe('session keys', () => {
    it('returns the same open session for a key, and a new one once it has ended', async () => {
      const store = await temp.open();
      const init = {
        source: 'discord' as const,
        userId: 'u9',
        chatId: '123',
        model: 'openai:gpt-4.1-mini',
        systemPrompt: 'be brief',
      };
      const first = await store.getOrCreateSession(KEY, init);
      expect(first.created).toBe(true);
      expect(first.session).toMatchObject({ ...init, key: KEY, endedAt: null, messageCount: 0, toolCallCount: 0 });
      const again = await store.getOrCreateSession(KEY, init);
      expect(again).toEqual({ session: first.session, created: false });

      await store.appendMessages(first.session.id, [{ role: 'user', content: 'old chat' }]);
      await store.endSession(first.session.id, 'idle');
      const fresh = await store.getOrCreateSession(KEY, init);
      expect(fresh.created).toBe(true);
      expect(fresh.session.id).not.toBe(first.session.id);
      expect((await store.currentSession(KEY))?.id).toBe(fresh.session.id);
      // The old row keeps its transcript.
      expect(await store.getHistory(first.session.id)).toEqual([{ role: 'user', content: 'old chat' }]);
    });

    it('builds the fields of a session from a function only when it creates the session', async () => {
      const store = await temp.open();
      let built = 0;
      const init = () => {
        built++;
        return { source: 'telegram' as const, systemPrompt: `prompt ${built}` };
      };
      const first = await store.getOrCreateSession('k:lazy', init);
      expect(first.session.systemPrompt).toBe('prompt 1');
      expect((await store.getOrCreateSession('k:lazy', init)).created).toBe(false);
      expect(built).toBe(1);
    });

    it('/new moves the key to a new session, optionally ending the old one in the same step', async () => {
      const store = await temp.open();
      const old = (await store.getOrCreateSession(KEY, { source: 'discord' })).session;
      const next = await store.startNewSession(KEY, { source: 'discord', endPreviousReason: 'session_reset' });
      expect((await store.currentSession(KEY))?.id).toBe(next.id);
      expect(await store.getSession(old.id)).toMatchObject({ endReason: 'session_reset' });
      expect((await store.getSession(old.id))?.endedAt).not.toBeNull();
      expect((await store.getOrCreateSession(KEY, { source: 'discord' })).session.id).toBe(next.id);
    });

    it('records compression lineage', async () => {
      const store = await temp.open();
      const parent = (await store.getOrCreateSession(KEY, { source: 'slack' })).session;
      const child = await store.startNewSession(KEY, { source: 'slack', parentSessionId: parent.id, endPreviousReason: 'compression' });
      expect(child.parentSessionId).toBe(parent.id);
      expect((await store.getSession(parent.id))?.endReason).toBe('compression');
      await expect(store.startNewSession(KEY, { source: 'slack', parentSessionId: 'ghost' })).rejects.toThrow(StoreNotFoundError);
      expect((await store.currentSession(KEY))?.id).toBe(child.id);
    });

    it('knows nothing about keys it has never seen', async () => {
      const store = await temp.open();
      expect(await store.currentSession('nobody')).toBeNull();
      expect(await store.getSession('nothing')).toBeNull();
    });
  });

  describe('session fields', () => {
    it('keeps the first end reason when a session is ended twice', async () => {
      const store = await temp.open();
      const s = (await store.getOrCreateSession(KEY, { source: 'cli' })).session;
      const ended = await store.endSession(s.id, 'daily');
      expect(await store.endSession(s.id, 'idle')).toEqual(ended);
      await expect(store.endSession('ghost', 'idle')).rejects.toThrow(StoreNotFoundError);
    });

    it('accumulates usage and overwrites the last prompt size', async () => {
      const store = await temp.open();
      const s = (await store.getOrCreateSession(KEY, { source: 'cli' })).session;
      await store.addUsage(s.id, { input: 100, output: 20, cacheRead: 50, cacheWrite: 10, costUsd: 0.25, lastPromptTokens: 150 });
      await store.addUsage(s.id, { input: 300, output: 40, cacheRead: 0, cacheWrite: 5, costUsd: 0.5, lastPromptTokens: 400 });
      await store.addUsage(s.id, { input: 1, output: 1, cacheRead: 1, cacheWrite: 1 });
      expect(await store.getSession(s.id)).toMatchObject({
        inputTokens: 401,
        outputTokens: 61,
        cacheReadTokens: 51,
        cacheWriteTokens: 16,
        estimatedCostUsd: 0.75,
        lastPromptTokens: 400,
      });
      await expect(store.addUsage('ghost', { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 })).rejects.toThrow(StoreNotFoundError);
    });

    it('keeps total tokens, the last activity and the cost providers reported (null until one does) — migration 52', async () => {
      const store = await temp.open();
      const s = (await store.getOrCreateSession(KEY, { source: 'cli' })).session;
      expect(s).toMatchObject({ totalTokens: 0, actualCostUsd: null, lastActive: s.startedAt });
      await store.addUsage(s.id, { input: 100, output: 20, cacheRead: 50, cacheWrite: 10, costUsd: 0.25 });
      expect(await store.getSession(s.id)).toMatchObject({ totalTokens: 180, actualCostUsd: null });
      await store.addUsage(s.id, { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, actualCostUsd: 0.0125 });
      await store.addUsage(s.id, { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, actualCostUsd: 0.0075 });
      await store.addUsage(s.id, { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 });
      const used = await store.getSession(s.id);
      expect(used).toMatchObject({ totalTokens: 186 });
      expect(used?.actualCostUsd).toBeCloseTo(0.02, 10);
      const before = used?.lastActive ?? 0;
      await waitForClockPast(before);
      await store.appendMessages(s.id, [{ role: 'user', content: 'later' }]);
      expect((await store.getSession(s.id))?.lastActive).toBeGreaterThan(before);
    });

    it("appends a turn's messages with its usage: counts and tokens in one write, added once when the turn is persisted again", async () => {
      const store = await temp.open();
      const s = (await store.getOrCreateSession(KEY, { source: 'cli' })).session;
      const usage = { input: 120, output: 30, cacheRead: 60, cacheWrite: 0, costUsd: 0.5, lastPromptTokens: 180 };
      const turn = [
        { role: 'user' as const, content: 'hi' },
        { role: 'assistant' as const, content: null, tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'echo', arguments: '{}' } }] },
        { role: 'tool' as const, content: 'ok', tool_call_id: 'c1' },
        { role: 'assistant' as const, content: 'hello' },
      ];
      await store.appendMessages(s.id, turn, { turnId: 't1', usage });
      expect(await store.getSession(s.id)).toMatchObject({
        messageCount: 4,
        toolCallCount: 1,
        inputTokens: 120,
        outputTokens: 30,
        cacheReadTokens: 60,
        estimatedCostUsd: 0.5,
        lastPromptTokens: 180,
      });
      // The same turn again (a re-run): its messages are not counted twice.
      await store.appendMessages(s.id, turn, { turnId: 't1' });
      expect(await store.getSession(s.id)).toMatchObject({ messageCount: 4, toolCallCount: 1, inputTokens: 120 });
      await expect(store.appendMessages('ghost', turn, { turnId: 't2', usage })).rejects.toThrow(StoreNotFoundError);
    });

    it('changes the model and the system prompt', async () => {
      const store = await temp.open();
      const s = (await store.getOrCreateSession(KEY, { source: 'cli', model: 'openai:a' })).session;
      await store.setModel(s.id, 'anthropic:claude-sonnet-4-5');
      await store.setSystemPrompt(s.id, 'You are Herald.');
      expect(await store.getSession(s.id)).toMatchObject({ model: 'anthropic:claude-sonnet-4-5', systemPrompt: 'You are Herald.' });
      await expect(store.setModel('ghost', 'x')).rejects.toThrow(StoreNotFoundError);
    });
  });

  describe('listSessions', () => {
    it('pages newest first with a cursor, without repeats or gaps', async () => {
      const store = await temp.open();
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push((await store.startNewSession(`k${i}`, { source: 'telegram' })).id);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.listSessions({ limit: 3, cursor });
        seen.push(...page.sessions.map((s) => s.id));
        cursor = page.nextCursor ?? undefined;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual([...ids].reverse());
    });

    it('filters by platform, user and whether the session is still open', async () => {
      const store = await temp.open();
      const a = await store.startNewSession('a', { source: 'telegram', userId: 'u1' });
      const b = await store.startNewSession('b', { source: 'slack', userId: 'u1' });
      const c = await store.startNewSession('c', { source: 'slack', userId: 'u2' });
      await store.endSession(b.id, 'idle');
      const ids = async (opts: Parameters<SessionStore['listSessions']>[0]) => (await store.listSessions(opts)).sessions.map((s) => s.id);
      expect(await ids({ source: 'slack' })).toEqual([c.id, b.id]);
      expect(await ids({ userId: 'u1' })).toEqual([b.id, a.id]);
      expect(await ids({ active: true })).toEqual([c.id, a.id]);
      expect(await ids({ active: false })).toEqual([b.id]);
      expect(await ids({ source: 'slack', userId: 'u2', active: true })).toEqual([c.id]);
      expect((await store.listSessions({ source: 'slack' })).nextCursor).toBeNull();
    });

    it('rejects a cursor it did not issue', async () => {
      const store = await temp.open();
      await expect(store.listSessions({ cursor: 'bm90IGEgY3Vyc29y' })).rejects.toThrow(InvalidCursorError);
      await expect(store.listSessions({ cursor: '%%%' })).rejects.toThrow(InvalidCursorError);
    });
  });
  describe('transaction and lastMessageAt', () => {
    it('commits several calls as one transaction, all or nothing', async () => {
      const store = await temp.open();
      const { session } = await store.getOrCreateSession(KEY, { source: 'telegram' });
      await store.beginTurn('t1', session.id, 1);
      await expect(
        store.transaction(async () => {
          await store.appendMessages(session.id, [{ role: 'user', content: 'kept?' }], { turnId: 't1' });
          await store.recordReply('t1', 'answer', 1);
          throw new Error('crash between the writes');
        }),
      ).rejects.toThrow('crash between the writes');
      expect(await store.getHistory(session.id)).toEqual([]);
      expect((await store.getTurn('t1'))?.status).toBe('running');

      await store.transaction(async () => {
        await store.appendMessages(session.id, [{ role: 'user', content: 'kept' }], { turnId: 't1' });
        await store.recordReply('t1', 'answer', 1);
      });
      expect((await store.getHistory(session.id)).map((m) => m.content)).toEqual(['kept']);
      expect((await store.getTurn('t1'))?.status).toBe('replied');
    });

    it('keeps other calls out of a running transaction: they see all of it or none of it', async () => {
      const store = await temp.open();
      const { session } = await store.getOrCreateSession(KEY, { source: 'telegram' });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let inside!: () => void;
      const entered = new Promise<void>((r) => (inside = r));
      const tx = store.transaction(async () => {
        await store.appendMessages(session.id, [{ role: 'user', content: 'one' }]);
        inside();
        await gate;
        await store.appendMessages(session.id, [{ role: 'assistant', content: 'two' }]);
      });
      await entered;
      // A call from outside the transaction, made while it is open.
      const outside = store.getHistory(session.id);
      release();
      await tx;
      // SQLite's one connection makes the call wait for the commit; PostgreSQL reads the last committed state.
      expect([[], ['one', 'two']]).toContainEqual((await outside).map((m) => m.content));
    });

    it('gives the time of the newest message, or null for an empty session', async () => {
      const store = await temp.open();
      {
        const { session } = await store.getOrCreateSession(KEY, { source: 'telegram' });
        expect(await store.lastMessageAt(session.id)).toBeNull();
        const before = Date.now();
        await store.appendMessages(session.id, [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
        ]);
        const at = await store.lastMessageAt(session.id);
        expect(at).toBeGreaterThanOrEqual(before);
        expect(at).toBe((await store.getMessages(session.id)).at(-1)?.createdAt);
      }
    });

    it("gives the key's session with its last activity in one read: the newest message, else when it started", async () => {
      const store = await temp.open();
      {
        expect(await store.currentSessionActivity(KEY)).toBeNull();
        const { session } = await store.getOrCreateSession(KEY, { source: 'telegram' });
        expect(await store.currentSessionActivity(KEY)).toEqual({ session, lastActivity: session.startedAt });
        await store.appendMessages(session.id, [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
        ]);
        const found = await store.currentSessionActivity(KEY);
        expect(found?.session.id).toBe(session.id);
        expect(found?.lastActivity).toBe(await store.lastMessageAt(session.id));
        await store.endSession(session.id, 'idle');
        expect((await store.currentSessionActivity(KEY))?.session.endedAt).not.toBeNull();
      }
    });
  });

  describe('ancestry', () => {
    it('lists the session and its ancestors, newest first, in one query', async () => {
      const store = await temp.open();
      {
        const a = (await store.getOrCreateSession(KEY, { source: 'telegram' })).session;
        const b = await store.startNewSession(KEY, { source: 'telegram', parentSessionId: a.id, endPreviousReason: 'compression' });
        const c = await store.startNewSession(KEY, { source: 'telegram', parentSessionId: b.id, endPreviousReason: 'compression' });
        expect((await store.ancestry(c.id)).map((s) => s.id)).toEqual([c.id, b.id, a.id]);
        expect((await store.ancestry(a.id)).map((s) => s.id)).toEqual([a.id]);
        expect(await store.ancestry('no-such-session')).toEqual([]);
      }
    });
  });
});

/** Returns once Date.now() is past `ms` (a clock tick, not a sleep for a guessed duration). */
async function waitForClockPast(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((resolve) => setImmediate(resolve));
}
