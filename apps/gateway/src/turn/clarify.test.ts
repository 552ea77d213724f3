import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test/helpers/ports.js';
import { useTestRedis } from '../../../../test/helpers/redis.js';
import { ClarifyBroker, clarifyMarkerKey } from './clarify.js';

const { redis, prefix } = useTestRedis('clarify');

/** A broker over a fake steer intake that the test fills, as the worker does when messages arrive. */
function broker(sessionKey: string) {
  const intake: string[] = [];
  const sent: string[] = [];
  const pending = async (key: string): Promise<boolean> => (await redis.exists(clarifyMarkerKey(prefix, key))) === 1;
  const b = new ClarifyBroker({
    redis,
    prefix,
    sessionKey,
    pollMs: 10,
    send: async (q) => {
      // The router must already see the question as open when it reaches the chat.
      sent.push(`${q} (open: ${String(await pending(sessionKey))})`);
    },
    takeSteerMessages: () => intake.splice(0),
  });
  return { b, intake, sent, pending };
}

describe('ClarifyBroker', () => {
  it('sends the question, takes the next message as the answer, and keeps other messages for the loop', async () => {
    const { b, intake, sent, pending } = broker('k1');
    intake.push('sent before the question');
    const answer = b.ask('Which day?', new AbortController().signal);
    await waitFor(() => sent.length > 0, { what: 'the question sent' });
    expect(sent).toEqual(['Which day? (open: true)']);
    intake.push('Tuesday', 'and make it quick');
    expect(await answer).toBe('Tuesday');
    expect(await pending('k1')).toBe(false);
    intake.push('later');
    expect(b.takeSteerMessages()).toEqual(['sent before the question', 'and make it quick', 'later']);
  });

  it('gives up when the turn is aborted and closes the question', async () => {
    const { b, pending } = broker('k2');
    const controller = new AbortController();
    const answer = b.ask('Still there?', controller.signal);
    await waitFor(() => pending('k2'), { what: 'the question open' });
    expect(await redis.pttl(clarifyMarkerKey(prefix, 'k2'))).toBeGreaterThan(0);
    controller.abort(new Error('interrupted'));
    await expect(answer).rejects.toThrow('interrupted');
    expect(await pending('k2')).toBe(false);
  });
});
