/**
 * The send loop every adapter shares: chunks go out in order, the ones an earlier attempt delivered are
 * skipped, and a failure carries the ids of what did go out, so a retry continues instead of repeating.
 */
import { PlatformError } from '../errors.js';

/** `sendOne` gets the chunk and its index in the whole answer (index 0 is the one that replies to the user). */
export async function sendChunks<C>(
  chunks: readonly C[],
  skip: number,
  sendOne: (chunk: C, index: number) => Promise<string | undefined>,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = Math.max(0, skip); i < chunks.length; i++) {
    try {
      const id = await sendOne(chunks[i], i);
      if (id !== undefined) ids.push(id);
    } catch (err) {
      if (err instanceof PlatformError) err.sentIds = [...ids];
      throw err;
    }
  }
  return ids;
}
