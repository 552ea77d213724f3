import { describe, expect, it } from 'vitest';
import type { PlatformEgress } from '@herald/adapters';
import { MAX_TYPING_IN_FLIGHT, sendTyping } from './typing.js';

/** An egress whose typing requests stay on their way until the test answers them. */
function slowEgress(): { egress: PlatformEgress; calls: string[]; answer: (fail?: boolean) => void } {
  const calls: string[] = [];
  const pending: Array<{ ok: () => void; no: (e: Error) => void }> = [];
  const egress = {
    typing: (conversationId: string) =>
      new Promise<void>((ok, no) => {
        calls.push(conversationId);
        pending.push({ ok, no });
      }),
  } as unknown as PlatformEgress;
  const answer = (fail = false): void => {
    for (const p of pending.splice(0)) fail ? p.no(new Error('429')) : p.ok();
  };
  return { egress, calls, answer };
}

const settled = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('sendTyping', () => {
  it(`sends at most ${MAX_TYPING_IN_FLIGHT} indicators at a time per client, skipping the rest, and sends again once they are answered`, async () => {
    const { egress, calls, answer } = slowEgress();
    const other = slowEgress();
    for (let i = 0; i < 100; i++) sendTyping(egress, `telegram:${i}`);
    expect(calls).toHaveLength(MAX_TYPING_IN_FLIGHT);
    expect(calls.slice(0, 3)).toEqual(['telegram:0', 'telegram:1', 'telegram:2']);
    // Another platform's client has its own bound.
    sendTyping(other.egress, 'discord:1');
    expect(other.calls).toEqual(['discord:1']);

    // Failed ones count as answered too (an indicator is never retried).
    answer(true);
    await settled();
    sendTyping(egress, 'telegram:100');
    expect(calls).toHaveLength(MAX_TYPING_IN_FLIGHT + 1);
    expect(calls.at(-1)).toBe('telegram:100');
  });
});
