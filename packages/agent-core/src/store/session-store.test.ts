import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { InvalidCursorError, StoreNotFoundError } from './errors.js';
import { SessionStore } from './session-store.js';
import { useTempStores } from './test-support.js';

const temp = useTempStores();
const KEY = 'agent:main:discord:group:123:u9';

describe('SessionStore.open', () => {
  it('creates the file and its directory in WAL mode, and answers ping until closed', () => {
    const file = path.join(temp.dir, 'data', 'herald.db');
    const store = SessionStore.open(file);
    expect(fs.existsSync(file)).toBe(true);
    const probe = new Database(file, { readonly: true });
    expect(probe.pragma('journal_mode', { simple: true })).toBe('wal');
    probe.close();
    expect(store.ping()).toBe(true);
    store.close();
    expect(store.ping()).toBe(false);
    store.close();
  });

  it('works in memory', () => {
    const store = SessionStore.open(':memory:');
    try {
      const { session } = store.getOrCreateSession(KEY, { source: 'api' });
      expect(store.getSession(session.id)?.source).toBe('api');
    } finally {
      store.close();
    }
  });

  it('keeps everything across a close and re-open', () => {
    const file = temp.file();
    const first = temp.open(file);
    const { session } = first.getOrCreateSession(KEY, { source: 'discord' });
    first.appendMessages(session.id, [{ role: 'user', content: 'remember me' }]);
    first.close();
    const second = temp.open(file);
    expect(second.currentSession(KEY)?.id).toBe(session.id);
    expect(second.getHistory(session.id)).toEqual([{ role: 'user', content: 'remember me' }]);
  });
});

describe('session keys', () => {
  it('returns the same open session for a key, and a new one once it has ended', () => {
    const store = temp.open();
    const init = {
      source: 'discord' as const,
      userId: 'u9',
      chatId: '123',
      model: 'openai:gpt-4.1-mini',
      systemPrompt: 'be brief',
    };
    const first = store.getOrCreateSession(KEY, init);
    expect(first.created).toBe(true);
    expect(first.session).toMatchObject({ ...init, key: KEY, endedAt: null, messageCount: 0, toolCallCount: 0 });
    const again = store.getOrCreateSession(KEY, init);
    expect(again).toEqual({ session: first.session, created: false });

    store.appendMessages(first.session.id, [{ role: 'user', content: 'old chat' }]);
    store.endSession(first.session.id, 'idle');
    const fresh = store.getOrCreateSession(KEY, init);
    expect(fresh.created).toBe(true);
    expect(fresh.session.id).not.toBe(first.session.id);
    expect(store.currentSession(KEY)?.id).toBe(fresh.session.id);
    // The old row keeps its transcript.
    expect(store.getHistory(first.session.id)).toEqual([{ role: 'user', content: 'old chat' }]);
  });

  it('/new moves the key to a new session, optionally ending the old one in the same step', () => {
    const store = temp.open();
    const old = store.getOrCreateSession(KEY, { source: 'discord' }).session;
    const next = store.startNewSession(KEY, { source: 'discord', endPreviousReason: 'session_reset' });
    expect(store.currentSession(KEY)?.id).toBe(next.id);
    expect(store.getSession(old.id)).toMatchObject({ endReason: 'session_reset' });
    expect(store.getSession(old.id)?.endedAt).not.toBeNull();
    expect(store.getOrCreateSession(KEY, { source: 'discord' }).session.id).toBe(next.id);
  });

  it('records compression lineage', () => {
    const store = temp.open();
    const parent = store.getOrCreateSession(KEY, { source: 'slack' }).session;
    const child = store.startNewSession(KEY, { source: 'slack', parentSessionId: parent.id, endPreviousReason: 'compression' });
    expect(child.parentSessionId).toBe(parent.id);
    expect(store.getSession(parent.id)?.endReason).toBe('compression');
    expect(() => store.startNewSession(KEY, { source: 'slack', parentSessionId: 'ghost' })).toThrow(StoreNotFoundError);
    expect(store.currentSession(KEY)?.id).toBe(child.id);
  });

  it('knows nothing about keys it has never seen', () => {
    const store = temp.open();
    expect(store.currentSession('nobody')).toBeNull();
    expect(store.getSession('nothing')).toBeNull();
  });
});

describe('session fields', () => {
  it('keeps the first end reason when a session is ended twice', () => {
    const store = temp.open();
    const s = store.getOrCreateSession(KEY, { source: 'cli' }).session;
    const ended = store.endSession(s.id, 'daily');
    expect(store.endSession(s.id, 'idle')).toEqual(ended);
    expect(() => store.endSession('ghost', 'idle')).toThrow(StoreNotFoundError);
  });

  it('accumulates usage and overwrites the last prompt size', () => {
    const store = temp.open();
    const s = store.getOrCreateSession(KEY, { source: 'cli' }).session;
    store.addUsage(s.id, { input: 100, output: 20, cacheRead: 50, cacheWrite: 10, costUsd: 0.25, lastPromptTokens: 150 });
    store.addUsage(s.id, { input: 300, output: 40, cacheRead: 0, cacheWrite: 5, costUsd: 0.5, lastPromptTokens: 400 });
    store.addUsage(s.id, { input: 1, output: 1, cacheRead: 1, cacheWrite: 1 });
    expect(store.getSession(s.id)).toMatchObject({
      inputTokens: 401,
      outputTokens: 61,
      cacheReadTokens: 51,
      cacheWriteTokens: 16,
      estimatedCostUsd: 0.75,
      lastPromptTokens: 400,
    });
    expect(() => store.addUsage('ghost', { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 })).toThrow(StoreNotFoundError);
  });

  it('changes the model and the system prompt', () => {
    const store = temp.open();
    const s = store.getOrCreateSession(KEY, { source: 'cli', model: 'openai:a' }).session;
    store.setModel(s.id, 'anthropic:claude-sonnet-4-5');
    store.setSystemPrompt(s.id, 'You are Herald.');
    expect(store.getSession(s.id)).toMatchObject({ model: 'anthropic:claude-sonnet-4-5', systemPrompt: 'You are Herald.' });
    expect(() => store.setModel('ghost', 'x')).toThrow(StoreNotFoundError);
  });
});

describe('listSessions', () => {
  it('pages newest first with a cursor, without repeats or gaps', () => {
    const store = temp.open();
    const ids = Array.from({ length: 7 }, (_, i) => store.startNewSession(`k${i}`, { source: 'telegram' }).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = store.listSessions({ limit: 3, cursor });
      seen.push(...page.sessions.map((s) => s.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  it('filters by platform, user and whether the session is still open', () => {
    const store = temp.open();
    const a = store.startNewSession('a', { source: 'telegram', userId: 'u1' });
    const b = store.startNewSession('b', { source: 'slack', userId: 'u1' });
    const c = store.startNewSession('c', { source: 'slack', userId: 'u2' });
    store.endSession(b.id, 'idle');
    const ids = (opts: Parameters<SessionStore['listSessions']>[0]) => store.listSessions(opts).sessions.map((s) => s.id);
    expect(ids({ source: 'slack' })).toEqual([c.id, b.id]);
    expect(ids({ userId: 'u1' })).toEqual([b.id, a.id]);
    expect(ids({ active: true })).toEqual([c.id, a.id]);
    expect(ids({ active: false })).toEqual([b.id]);
    expect(ids({ source: 'slack', userId: 'u2', active: true })).toEqual([c.id]);
    expect(store.listSessions({ source: 'slack' }).nextCursor).toBeNull();
  });

  it('rejects a cursor it did not issue', () => {
    const store = temp.open();
    expect(() => store.listSessions({ cursor: 'bm90IGEgY3Vyc29y' })).toThrow(InvalidCursorError);
    expect(() => store.listSessions({ cursor: '%%%' })).toThrow(InvalidCursorError);
  });
});
describe('batch and lastMessageAt', () => {
  it('commits several calls as one transaction, all or nothing', () => {
    const store = SessionStore.open(':memory:');
    try {
      const { session } = store.getOrCreateSession(KEY, { source: 'telegram' });
      store.beginTurn('t1', session.id);
      expect(() =>
        store.batch(() => {
          store.appendMessages(session.id, [{ role: 'user', content: 'kept?' }], { turnId: 't1' });
          store.recordReply('t1', 'answer');
          throw new Error('crash between the writes');
        }),
      ).toThrow('crash between the writes');
      expect(store.getHistory(session.id)).toEqual([]);
      expect(store.getTurn('t1')?.status).toBe('running');

      store.batch(() => {
        store.appendMessages(session.id, [{ role: 'user', content: 'kept' }], { turnId: 't1' });
        store.recordReply('t1', 'answer');
      });
      expect(store.getHistory(session.id).map((m) => m.content)).toEqual(['kept']);
      expect(store.getTurn('t1')?.status).toBe('replied');
    } finally {
      store.close();
    }
  });

  it('gives the time of the newest message, or null for an empty session', () => {
    const store = SessionStore.open(':memory:');
    try {
      const { session } = store.getOrCreateSession(KEY, { source: 'telegram' });
      expect(store.lastMessageAt(session.id)).toBeNull();
      const before = Date.now();
      store.appendMessages(session.id, [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }]);
      const at = store.lastMessageAt(session.id);
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBe(store.getMessages(session.id).at(-1)?.createdAt);
    } finally {
      store.close();
    }
  });
});

describe('ancestry', () => {
  it('lists the session and its ancestors, newest first, in one query', () => {
    const store = SessionStore.open(':memory:');
    try {
      const a = store.getOrCreateSession(KEY, { source: 'telegram' }).session;
      const b = store.startNewSession(KEY, { source: 'telegram', parentSessionId: a.id, endPreviousReason: 'compression' });
      const c = store.startNewSession(KEY, { source: 'telegram', parentSessionId: b.id, endPreviousReason: 'compression' });
      expect(store.ancestry(c.id).map((s) => s.id)).toEqual([c.id, b.id, a.id]);
      expect(store.ancestry(a.id).map((s) => s.id)).toEqual([a.id]);
      expect(store.ancestry('no-such-session')).toEqual([]);
    } finally {
      store.close();
    }
  });
});
