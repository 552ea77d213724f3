import { describe, expect, it } from 'vitest';
import { NetworkError } from '../errors.js';
import { sendChunks } from './send-chunks.js';

describe('sendChunks', () => {
  it('sends in order, and a failure names the chunks that did go out', async () => {
    const sent: string[] = [];
    const err = await sendChunks(['a', 'b', 'c'], {}, async (chunk, i) => {
      if (chunk === 'b') throw new NetworkError('reset', 'test');
      sent.push(`${i}:${chunk}`);
      return `id-${chunk}`;
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).sentIds).toEqual(['id-a']);
    expect(sent).toEqual(['0:a']);
  });

  it('skips what an earlier attempt delivered, keeping each chunk its index', async () => {
    const sent: string[] = [];
    const ids = await sendChunks(['a', 'b', 'c'], { skipChunks: 1 }, async (chunk, i) => {
      sent.push(`${i}:${chunk}`);
      return `id-${chunk}`;
    });
    expect(sent).toEqual(['1:b', '2:c']);
    expect(ids).toEqual(['id-b', 'id-c']);
  });

  it('reports each accepted chunk with its index before sending the next, and waits for the report', async () => {
    const events: string[] = [];
    const ids = await sendChunks(
      ['a', 'b', 'c'],
      {
        skipChunks: 1,
        onChunkSent: async (i, id, last) => {
          await Promise.resolve();
          events.push(`recorded ${i}=${id}${last ? ' (last)' : ''}`);
        },
      },
      async (chunk) => {
        events.push(`send ${chunk}`);
        return `id-${chunk}`;
      },
    );
    expect(ids).toEqual(['id-b', 'id-c']);
    expect(events).toEqual(['send b', 'recorded 1=id-b', 'send c', 'recorded 2=id-c (last)']);
  });

  it('returns found chunks in their place without sending them, and reports them in order', async () => {
    const sent: number[] = [];
    const recorded: [number, string][] = [];
    const ids = await sendChunks(
      ['a', 'b', 'c', 'd'],
      {
        found: new Map([
          [0, 'old-a'],
          [2, 'old-c'],
        ]),
        onChunkSent: (i, id) => void recorded.push([i, id]),
      },
      async (chunk, i) => {
        sent.push(i);
        return `id-${chunk}`;
      },
    );
    expect(sent).toEqual([1, 3]);
    expect(ids).toEqual(['old-a', 'id-b', 'old-c', 'id-d']);
    expect(recorded).toEqual([
      [0, 'old-a'],
      [1, 'id-b'],
      [2, 'old-c'],
      [3, 'id-d'],
    ]);
  });

  it('counts a chunk as gone out even when recording it fails, so a retry does not repeat it', async () => {
    const err = await sendChunks(
      ['a', 'b'],
      {
        onChunkSent: (i) => {
          if (i === 1) throw new NetworkError('store down', 'test');
        },
      },
      async (chunk) => `id-${chunk}`,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).sentIds).toEqual(['id-a', 'id-b']);
  });
});
