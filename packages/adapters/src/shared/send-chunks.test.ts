import { describe, expect, it } from 'vitest';
import { NetworkError } from '../errors.js';
import { sendChunks } from './send-chunks.js';

describe('sendChunks', () => {
  it('sends in order, and a failure names the chunks that did go out', async () => {
    const sent: string[] = [];
    const err = await sendChunks(['a', 'b', 'c'], 0, async (chunk, i) => {
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
    const ids = await sendChunks(['a', 'b', 'c'], 1, async (chunk, i) => {
      sent.push(`${i}:${chunk}`);
      return `id-${chunk}`;
    });
    expect(sent).toEqual(['1:b', '2:c']);
    expect(ids).toEqual(['id-b', 'id-c']);
  });
});
