/** A platform for the send tests: what a real adapter's egress looks like to the fenced send and its retries. */
import type { DuplicateSafety, PlatformEgress, SendOptions } from '@herald/adapters';

export type RecordingEgress = PlatformEgress & { sends: Array<{ text: string; opts?: SendOptions }> };

/**
 * Records every send; throws the next of `failures` (a real adapter's typed errors) while any are left, else takes the
 * chunk, numbering its messages `m1`, `m2`, … and reporting each as sent (`onChunkSent`).
 */
export function recordingEgress(opts: { duplicateSafety?: DuplicateSafety; failures?: Error[] } = {}): RecordingEgress {
  const sends: Array<{ text: string; opts?: SendOptions }> = [];
  const failures = opts.failures ?? [];
  return {
    platform: 'telegram',
    maxMessageLength: 4096,
    typingRefreshMs: 4000,
    duplicateSafety: opts.duplicateSafety ?? 'none',
    sends,
    async send(_conv, text, sendOpts) {
      sends.push({ text, opts: sendOpts });
      const failure = failures.shift();
      if (failure) throw failure;
      const id = `m${sends.length}`;
      await sendOpts?.onChunkSent?.(0, id, true);
      return { messageIds: [id] };
    },
    async edit() {},
    async typing() {},
    async react() {},
    voiceFormat: 'ogg_opus',
    async sendFile() {
      throw new Error('this test sends no files');
    },
  };
}
