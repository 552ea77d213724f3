/**
 * The send loop every adapter shares: chunks go out in order, the ones an earlier attempt delivered are
 * skipped, each accepted chunk is reported as it goes, and a failure carries the ids of what did go out, so a
 * retry continues instead of repeating.
 */
import { PlatformError } from '../errors.js';
import type { SendOptions } from '../types.js';

/**
 * `skipChunks`: leading chunks the caller knows were delivered, not sent. `onChunkSent`: awaited as each chunk is
 * accepted (or found), in order, with its index in the whole answer.
 */
export interface SendChunksOptions extends Pick<SendOptions, 'skipChunks' | 'onChunkSent'> {
  /**
   * Chunks an earlier attempt sent that the caller never recorded but the platform still shows (index → id):
   * not sent again, their ids returned in their place.
   */
  found?: ReadonlyMap<number, string>;
}

/** `sendOne` gets the chunk and its index in the whole answer (index 0 is the one that replies to the user). */
export async function sendChunks<C>(
  chunks: readonly C[],
  opts: SendChunksOptions,
  sendOne: (chunk: C, index: number) => Promise<string | undefined>,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = Math.max(0, opts.skipChunks ?? 0); i < chunks.length; i++) {
    try {
      const id = opts.found?.get(i) ?? (await sendOne(chunks[i], i));
      if (id === undefined) continue;
      // Pushed before the callback: if recording fails, the chunk still went out and a retry must not repeat it.
      ids.push(id);
      await opts.onChunkSent?.(i, id, i === chunks.length - 1);
    } catch (err) {
      if (err instanceof PlatformError) err.sentIds = [...ids];
      throw err;
    }
  }
  return ids;
}
