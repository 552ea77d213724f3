import { describe, expect, it } from 'vitest';
import { FencedOutError } from './errors.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';
import type { NewTurnFile } from './turn-files.js';

describe.each(STORE_BACKENDS)('files in the turn outbox on %s', (backend) => {
  const temp = useTempStores(backend);

  async function turnWithSession(fence = 5) {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:9', { source: 'telegram' });
    await store.beginTurn('t1', session.id, fence);
    return { store, sessionId: session.id };
  }

  const bytes = Buffer.from([0, 1, 2, 250, 255, 0x27, 0x5c]); // NULs, high bytes, a quote and a backslash
  const files: NewTurnFile[] = [
    { kind: 'image', name: 'chart.png', mimeType: 'image/png', data: bytes, caption: 'The chart' },
    { kind: 'voice', name: 'reply.ogg', mimeType: 'audio/ogg', data: Buffer.alloc(3000, 7), durationSec: 2.5 },
  ];

  it('records the files with the reply, in order, bytes intact, and counts them on the turn', async () => {
    const { store } = await turnWithSession();
    const turn = await store.recordReply('t1', 'Here it is.', 5, files);
    expect(turn).toMatchObject({ status: 'replied', reply: 'Here it is.', fileCount: 2 });
    const stored = await store.getTurnFiles('t1');
    expect(stored.map((f) => [f.seq, f.kind, f.name, f.mimeType, f.size, f.caption, f.durationSec, f.sentId, f.failure])).toEqual([
      [0, 'image', 'chart.png', 'image/png', bytes.length, 'The chart', undefined, null, null],
      [1, 'voice', 'reply.ogg', 'audio/ogg', 3000, undefined, 2.5, null, null],
    ]);
    expect(stored[0].data?.equals(bytes)).toBe(true);
    expect(stored[1].data?.equals(files[1].data)).toBe(true);
    // A reply without files counts none (and a re-run then never looks).
    const { store: other } = await turnWithSession();
    expect((await other.recordReply('t1', 'text only', 5)).fileCount).toBe(0);
    expect(await other.getTurnFiles('t1')).toEqual([]);
  });

  it('a sent file keeps its platform id and loses its bytes; it cannot be sent or failed again', async () => {
    const { store } = await turnWithSession();
    await store.recordReply('t1', 'r', 5, files);
    expect(await store.markFileSent('t1', 0, 'msg-41')).toBe(true);
    expect(await store.markFileSent('t1', 0, 'msg-42')).toBe(false);
    expect(await store.markFileFailed('t1', 0, 'too large')).toBe(false);
    expect(await store.markFileFailed('t1', 1, 'Telegram refused it')).toBe(true);
    const [sent, failed] = await store.getTurnFiles('t1');
    expect(sent).toMatchObject({ sentId: 'msg-41', failure: null, data: null });
    expect(failed).toMatchObject({ sentId: null, failure: 'Telegram refused it', data: null });
  });

  it('a fenced-out worker records neither the reply nor its files', async () => {
    const { store, sessionId } = await turnWithSession(5);
    await store.beginTurn('t1', sessionId, 6);
    await expect(store.recordReply('t1', 'late', 5, files)).rejects.toThrow(FencedOutError);
    expect(await store.getTurnFiles('t1')).toEqual([]);
    expect((await store.getTurn('t1'))?.fileCount).toBe(0);
  });

  it('the files go when the turn is deleted (retention)', async () => {
    const { store } = await turnWithSession();
    await store.recordReply('t1', 'r', 5, files);
    await store.sql.run('DELETE FROM turns WHERE id = ?', ['t1']);
    expect(await store.getTurnFiles('t1')).toEqual([]);
  });
});
