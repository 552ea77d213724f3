import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../types.js';
import { StoreDb } from './db.js';
import { sanitizeFtsQuery, searchMessages } from './fts.js';
import { runMigrations } from './migrations.js';
import { useTempStores } from './test-support.js';

const temp = useTempStores();

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

describe('sanitizeFtsQuery', () => {
  it.each([
    ['hello AND', 'hello'],
    ['OR world', 'world'],
    ['***', ''],
    ['deploy*', 'deploy*'],
    ['chat-send', '"chat-send"'],
    ['C++', 'C'],
    ['say "hello', 'say hello'],
    ['"exact phrase" here', '"exact phrase" here'],
    ['a AND NOT b', 'a NOT b'],
    ['NOT', ''],
    ['cats and dogs', 'cats and dogs'],
    ['(deploy OR rollback)', 'deploy OR rollback'],
    ['title:secret', '"title:secret"'],
    ['-x ^y {z}', 'x y z'],
    ['""', ''],
    ['naïve café', 'naïve café'],
  ])('%j → %j', (input, expected) => {
    expect(sanitizeFtsQuery(input)).toBe(expected);
  });

  it('never produces a query FTS5 rejects, whatever is typed', () => {
    const db = new Database(':memory:');
    try {
      db.exec(`CREATE VIRTUAL TABLE f USING fts5(content); INSERT INTO f VALUES ('hello world chat-send C deploy');`);
      const match = db.prepare('SELECT count(*) FROM f WHERE f MATCH ?').pluck();
      const pieces = ['AND', 'OR', 'NOT', 'NEAR', 'NEAR(', '"', '*', '(', ')', '+', '-', '^', ':', '{', '}', ',', '.',
        'hello', 'world', 'chat-send', 'C++', 'col:', '\u200B', '😀', '\\', "'", '\n', '\t', '', ' ', '_', '#', '%',
        '\u0000', '\uD800', 'é', '¿', '«', '—', '0', '1e5'];
      let seed = 12345;
      const random = (n: number): number => {
        seed = (seed * 1103515245 + 12345) % 2147483648; // deterministic, so a failure can be replayed
        return seed % n;
      };
      for (let i = 0; i < 500; i++) {
        const parts = Array.from({ length: 1 + random(8) }, () => pieces[random(pieces.length)]);
        const raw = parts.join(random(3) === 0 ? '' : ' ');
        const query = sanitizeFtsQuery(raw);
        if (query === '') continue;
        expect(() => match.get(query), `raw ${JSON.stringify(raw)} → ${JSON.stringify(query)}`).not.toThrow();
      }
    } finally {
      db.close();
    }
  });
});

describe('search', () => {
  function seeded() {
    const store = temp.open();
    const tg = store.startNewSession('tg', { source: 'telegram', userId: 'alice', title: 'Deploys' });
    const sl = store.startNewSession('sl', { source: 'slack', userId: 'bob' });
    store.appendMessages(tg.id, [user('how do I deploy the chat-send service?'), assistant('Run the deploy script.')]);
    store.appendMessages(sl.id, [user('deploying to staging now'), assistant('C++ build is green')]);
    return { store, tg, sl };
  }

  it('finds messages with a highlighted snippet and the session they belong to', () => {
    const { store, tg } = seeded();
    const hits = store.search('chat-send');
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ sessionId: tg.id, source: 'telegram', title: 'Deploys', role: 'user' });
    expect(hits[0].snippet).toContain('>>>chat-send<<<');
  });

  it('filters by platform and by user', () => {
    const { store, tg, sl } = seeded();
    expect(new Set(store.search('deploy*').map((h) => h.sessionId))).toEqual(new Set([tg.id, sl.id]));
    expect(store.search('deploy*', { source: 'slack' }).map((h) => h.sessionId)).toEqual([sl.id]);
    expect(store.search('deploy*', { userId: 'alice' }).every((h) => h.sessionId === tg.id)).toBe(true);
    expect(store.search('deploy*', { source: 'discord' })).toEqual([]);
  });

  it('answers odd input with results or nothing, never an error', () => {
    const { store, sl } = seeded();
    expect(store.search('C++').map((h) => h.sessionId)).toEqual([sl.id]);
    expect(store.search('***')).toEqual([]);
    expect(store.search('   ')).toEqual([]);
    expect(store.search('"unbalanced')).toEqual([]);
    expect(store.search('(deploy').map((h) => h.role).sort()).toEqual(['assistant', 'user']);
  });

  it('forgets deleted messages', () => {
    const { store, tg } = seeded();
    const [, reply] = store.getMessages(tg.id);
    store.deleteMessagesFrom(tg.id, reply.id);
    expect(store.search('script')).toEqual([]);
    expect(store.search('chat-send')).toHaveLength(1);
  });

  it('keeps the index in step when a message text is updated', () => {
    const db = StoreDb.open(':memory:');
    try {
      runMigrations(db);
      db.raw.prepare(`INSERT INTO sessions (id, key, source, started_at) VALUES ('s', 'k', 'cli', 0)`).run();
      db.raw.prepare(`INSERT INTO messages (session_id, role, content, created_at) VALUES ('s', 'user', 'old words', 0)`).run();
      db.raw.prepare(`UPDATE messages SET content = 'new words'`).run();
      expect(searchMessages(db, 'old')).toEqual([]);
      expect(searchMessages(db, 'new')).toHaveLength(1);
      db.raw.prepare(`DELETE FROM messages`).run();
      expect(searchMessages(db, 'words')).toEqual([]);
      // The index itself agrees with the table (a desynchronised external-content index fails this check).
      expect(() => db.raw.prepare(`INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')`).run()).not.toThrow();
    } finally {
      db.close();
    }
  });

  it('caps the number of hits', () => {
    const store = temp.open();
    const s = store.startNewSession('k', { source: 'api' });
    store.appendMessages(s.id, Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? user(`ping ${i}`) : assistant(`ping ${i}`))));
    expect(store.search('ping')).toHaveLength(20);
    expect(store.search('ping', { limit: 5 })).toHaveLength(5);
  });
});
