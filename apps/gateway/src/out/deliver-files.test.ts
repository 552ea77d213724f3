/**
 * The files of a recorded reply, sent by sendReply after its text, against a real store (the outbox) and a
 * platform double that fails the way the adapters' typed errors say. The real uploads to each platform's stand-in
 * are in the adapters' upload tests and the end-to-end suite.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FileTooLargeError, NetworkError, RateLimitedError, type OutboundFile, type PlatformEgress, type SendOptions } from '@herald/adapters';
import type { NewTurnFile, SessionStore } from '@herald/agent-core';
import { useTempStores } from '../../../../packages/agent-core/src/store/test-support.js';
import type { TurnContext } from '../queue/worker.js';
import { LiveTurn } from './progress.js';
import { EARLIER_SEND_SETTLE_MS, sendReply } from './send-reply.js';

const temp = useTempStores('sqlite');
const log = pino({ level: 'silent' });

interface Platform extends PlatformEgress {
  texts: Array<{ text: string; opts?: SendOptions }>;
  uploads: OutboundFile[];
  /** Errors the next uploads throw, in order (undefined: that upload succeeds). */
  failures: Array<Error | undefined>;
}

function platform(): Platform {
  const texts: Platform['texts'] = [];
  const uploads: OutboundFile[] = [];
  const failures: Platform['failures'] = [];
  return {
    platform: 'discord',
    maxMessageLength: 2000,
    typingRefreshMs: 8000,
    duplicateSafety: 'idempotent',
    voiceFormat: 'mp3',
    texts,
    uploads,
    failures,
    async send(_conv, text, opts) {
      texts.push({ text, opts });
      const id = `m${texts.length}`;
      await opts?.onChunkSent?.(0, id, true);
      return { messageIds: [id] };
    },
    async sendFile(_conv, file) {
      const failure = failures.shift();
      if (failure) throw failure;
      uploads.push(file);
      return `f${uploads.length}`;
    },
    async edit() {},
    async typing() {},
    async react() {},
  };
}

const file = (name: string, size = 100): NewTurnFile => ({ kind: 'file', name, mimeType: 'application/pdf', data: Buffer.alloc(size, 1) });

async function setup(files: NewTurnFile[]) {
  const store = await temp.open();
  const { session } = await store.getOrCreateSession('agent:main:discord:dm:5', { source: 'discord', userId: '5' });
  await store.beginTurn('t1', session.id, 7);
  await store.recordReply('t1', 'Here are your files.', 7, files);
  const egress = platform();
  const signal = new AbortController().signal;
  const ctx = {
    sessionKey: 'agent:main:discord:dm:5',
    entries: [],
    turnId: 't1',
    fence: 7,
    signal,
    canDeliver: async () => true,
    deliveryCheck: async () => 'ok' as const,
    takeSteerMessages: () => [],
    touch: () => undefined,
    log,
  } as TurnContext;
  const live = new LiveTurn({ egress, conversationId: 'discord:5', platform: 'discord', chatType: 'dm', signal, canDeliver: ctx.canDeliver, log });
  const target = {
    store,
    egress,
    ctx,
    live,
    conversationId: 'discord:5',
    replyTo: '1',
    deliveryBaseDelayMs: 1,
    onPossibleDuplicate: () => undefined,
    sendAttemptsAtBegin: 0,
  };
  return { store, egress, target };
}

const filesOf = async (store: SessionStore) =>
  (await store.getTurnFiles('t1')).map((f) => ({ seq: f.seq, sentId: f.sentId, failure: f.failure, data: f.data === null ? null : 'bytes' }));

describe('files of a reply', () => {
  it('go after the text, in order, each recorded as it goes; the bytes leave the store', async () => {
    const { store, egress, target } = await setup([file('a.pdf'), file('b.pdf')]);
    expect(await sendReply(target, 'Here are your files.')).toBe('delivered');
    expect(egress.texts.map((t) => t.text)).toEqual(['Here are your files.']);
    expect(egress.uploads.map((f) => f.name)).toEqual(['a.pdf', 'b.pdf']);
    expect(await filesOf(store)).toEqual([
      { seq: 0, sentId: 'f1', failure: null, data: null },
      { seq: 1, sentId: 'f2', failure: null, data: null },
    ]);
    expect((await store.getTurn('t1'))?.status).toBe('delivered');
  });

  it('a re-run after a crash sends neither the text nor a file again, only what is still pending', async () => {
    const { store, egress, target } = await setup([file('a.pdf'), file('b.pdf')]);
    // The crashed run: the text went out and was recorded, so was the first file.
    await store.claimDelivery('t1', 7);
    await store.recordChunk('t1', 'm-old');
    await store.markFileSent('t1', 0, 'f-old');
    await store.sql.run('UPDATE turns SET updated_at = updated_at - ?', [EARLIER_SEND_SETTLE_MS + 1_000]);
    target.sendAttemptsAtBegin = 1;
    expect(await sendReply(target, 'Here are your files.')).toBe('delivered');
    expect(egress.texts[0].opts?.skipChunks).toBe(1);
    expect(egress.uploads.map((f) => f.name)).toEqual(['b.pdf']);
    expect((await store.getTurnFiles('t1')).map((f) => f.sentId)).toEqual(['f-old', 'f1']);
  });

  it('a file the platform refuses as too large: the user is told, the next file still goes, the turn is delivered', async () => {
    const { store, egress, target } = await setup([file('huge.pdf', 3_000_000), file('small.pdf')]);
    egress.failures.push(
      new FileTooLargeError('Discord POST /channels/5/messages failed: 413 Request entity too large (code 40005)', 'discord', 10 * 1024 * 1024),
    );
    expect(await sendReply(target, 'Here are your files.')).toBe('delivered');
    expect(egress.texts.map((t) => t.text)).toEqual([
      'Here are your files.',
      '⚠️ I could not send “huge.pdf” (2.9 MB): it is larger than Discord accepts from bots here (10.0 MB).',
    ]);
    expect(egress.texts[1].opts).toMatchObject({ plain: true });
    expect(egress.uploads.map((f) => f.name)).toEqual(['small.pdf']);
    expect(await filesOf(store)).toEqual([
      { seq: 0, sentId: null, failure: egress.texts[1].text, data: null },
      { seq: 1, sentId: 'f1', failure: null, data: null },
    ]);
    expect((await store.getTurn('t1'))?.status).toBe('delivered');
  });

  it('a short rate limit is waited out and network errors are retried; a long rate limit gives a notice saying when', async () => {
    const { egress, target } = await setup([file('a.pdf'), file('b.pdf')]);
    egress.failures.push(
      new RateLimitedError('discord', 5),
      new NetworkError('socket hang up', 'discord'),
      undefined,
      new RateLimitedError('discord', 600_000),
    );
    expect(await sendReply(target, 'Here are your files.')).toBe('delivered');
    expect(egress.uploads.map((f) => f.name)).toEqual(['a.pdf']);
    expect(egress.texts.at(-1)?.text).toBe('⚠️ I could not send “b.pdf” (100 B): Discord is limiting how fast I may upload; ask again in 10 min.');
  });

  it('a reply without files never looks for any', async () => {
    const { store, egress, target } = await setup([]);
    const read = store.getTurnFiles.bind(store);
    let looked = 0;
    store.getTurnFiles = async (id) => {
      looked++;
      return read(id);
    };
    expect(await sendReply(target, 'Here are your files.')).toBe('delivered');
    expect(looked).toBe(0);
    expect(egress.uploads).toEqual([]);
  });
});
