import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { sanitizeFtsQuery, tsQueryOf } from './fts-query.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

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
      const pieces = [
        'AND',
        'OR',
        'NOT',
        'NEAR',
        'NEAR(',
        '"',
        '*',
        '(',
        ')',
        '+',
        '-',
        '^',
        ':',
        '{',
        '}',
        ',',
        '.',
        'hello',
        'world',
        'chat-send',
        'C++',
        'col:',
        '\u200B',
        '😀',
        '\\',
        "'",
        '\n',
        '\t',
        '',
        ' ',
        '_',
        '#',
        '%',
        '\u0000',
        '\uD800',
        'é',
        '¿',
        '«',
        '—',
        '0',
        '1e5',
      ];
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

describe('tsQueryOf (PostgreSQL)', () => {
  it.each([
    ['hello AND', "'hello'"],
    ['deploy*', "'deploy':*"],
    ['chat-send', "('chat' <-> 'send')"],
    ['"exact phrase" here', "('exact' <-> 'phrase') & 'here'"],
    ['a AND NOT b', "'a' & ! 'b'"],
    ['deploy OR rollback now', "'deploy' | 'rollback' & 'now'"],
    ['***', ''],
    ["it's", "('it' <-> 's')"],
  ])('%j → %j', (input, expected) => {
    expect(tsQueryOf(input)).toBe(expected);
  });
});

describe.each(STORE_BACKENDS)('search on %s', (backend) => {
  const temp = useTempStores(backend);

  async function seeded() {
    const store = await temp.open();
    const tg = await store.startNewSession('tg', { source: 'telegram', userId: 'alice', title: 'Deploys' });
    const sl = await store.startNewSession('sl', { source: 'slack', userId: 'bob' });
    await store.appendMessages(tg.id, [user('how do I deploy the chat-send service?'), assistant('Run the deploy script.')]);
    await store.appendMessages(sl.id, [user('deploying to staging now'), assistant('C++ build is green')]);
    return { store, tg, sl };
  }

  it('finds messages with a highlighted snippet and the session they belong to', async () => {
    const { store, tg } = await seeded();
    const hits = await store.search('chat-send');
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ sessionId: tg.id, source: 'telegram', title: 'Deploys', role: 'user' });
    // FTS5 marks the phrase, ts_headline each of its words.
    expect(hits[0].snippet).toMatch(/>>>chat(<<<->>>|-)send<<</);
  });

  it('ranks the better match first', async () => {
    const store = await temp.open();
    const s = await store.startNewSession('k', { source: 'api' });
    await store.appendMessages(s.id, [user('one mention of kettle among many other unrelated words here'), assistant('kettle kettle kettle')]);
    const hits = await store.search('kettle');
    expect(hits.map((h) => h.role)).toEqual(['assistant', 'user']);
  });

  it('filters by platform and by user', async () => {
    const { store, tg, sl } = await seeded();
    expect(new Set((await store.search('deploy*')).map((h) => h.sessionId))).toEqual(new Set([tg.id, sl.id]));
    expect((await store.search('deploy*', { source: 'slack' })).map((h) => h.sessionId)).toEqual([sl.id]);
    const alice = await store.search('deploy*', { userId: 'alice' });
    expect(alice.length).toBeGreaterThan(0);
    expect(alice.every((h) => h.sessionId === tg.id)).toBe(true);
    expect(await store.search('deploy*', { source: 'discord' })).toEqual([]);
  });

  it('answers odd input with results or nothing, never an error', async () => {
    const { store, sl } = await seeded();
    expect((await store.search('C++')).map((h) => h.sessionId)).toEqual([sl.id]);
    expect(await store.search('***')).toEqual([]);
    expect(await store.search('   ')).toEqual([]);
    expect(await store.search('"unbalanced')).toEqual([]);
    expect((await store.search('(deploy')).map((h) => h.role).sort()).toEqual(['assistant', 'user']);
    for (const odd of ["it's", 'a\\b', 'x:*', '!', '<->', '& |', "'", '\u0000', '😀 deploy']) {
      await expect(store.search(odd)).resolves.toBeInstanceOf(Array);
    }
  });

  it('forgets deleted messages', async () => {
    const { store, tg } = await seeded();
    const [, reply] = await store.getMessages(tg.id);
    await store.deleteMessagesFrom(tg.id, reply.id);
    expect(await store.search('script')).toEqual([]);
    expect(await store.search('chat-send')).toHaveLength(1);
  });

  it('keeps the index in step when a message text is updated', async () => {
    const store = await temp.open();
    const s = await store.startNewSession('k', { source: 'cli' });
    await store.appendMessages(s.id, [user('old words')]);
    await store.sql.run(`UPDATE messages SET content = 'new words'`);
    expect(await store.search('old')).toEqual([]);
    expect(await store.search('new')).toHaveLength(1);
    await store.sql.run(`DELETE FROM messages`);
    expect(await store.search('words')).toEqual([]);
    if (backend === 'sqlite') {
      // The index itself agrees with the table (a desynchronised external-content index fails this check).
      await expect(store.sql.run(`INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')`)).resolves.toBeDefined();
    }
  });

  it('caps the number of hits', async () => {
    const store = await temp.open();
    const s = await store.startNewSession('k', { source: 'api' });
    await store.appendMessages(
      s.id,
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? user(`ping ${i}`) : assistant(`ping ${i}`))),
    );
    expect(await store.search('ping')).toHaveLength(20);
    expect(await store.search('ping', { limit: 5 })).toHaveLength(5);
  });
});
