/**
 * Property tests: reading a Slack event (normalize.ts) and the interactions (slash commands, presses, App Home)
 * checks every id by the codec's rules, so a malformed id is skipped as such and never throws out of the
 * listener (which Bolt logged at error level with a stack trace, nine times a fuzz run, before).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSlackId, isSlackTs, slackCodec } from './codec.js';
import { homeOpenedToMessage } from './home.js';
import { classifySlackEvent } from './normalize.js';
import { pressToMessage } from './press.js';
import { slashCommandToMessage } from './slash-command.js';

const ME = { botUserId: 'U0HERALDBOT' };
/** Ids as they go wrong: prototype names, a bot's name, lone surrogates, colons, numbers, empty, other types. */
const EDGE_IDS: unknown[] = [
  '__proto__',
  'constructor',
  'herald bot',
  '@herald',
  '\ud800',
  'C1\udc00',
  'C1:2',
  'C 1',
  '-C1',
  '_C1',
  'C0GENERAL',
  'D0DM',
  'U0USER',
  '1700000000.000100',
  '1700000000',
  '.5',
  '1.',
  '1700000000.000100\ud800',
  '',
  0,
  -1,
  1.5,
  2 ** 60,
  null,
  true,
  [],
  {},
  undefined,
];
const edgeId: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom(...EDGE_IDS), weight: 4 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 1 },
  { arbitrary: fc.stringMatching(/^[A-Z0-9]{1,12}$/), weight: 1 },
  { arbitrary: fc.tuple(fc.nat(), fc.nat()).map(([s, u]) => `${s}.${u}`), weight: 1 },
);

const present = (v: unknown): boolean => typeof v === 'string' && v !== '';

describe('Slack ids are checked by the codec rules at the edge', () => {
  it('takes a message exactly when its channel, user, ts and thread_ts are ones the codec accepts, and never throws', () => {
    fc.assert(
      fc.property(edgeId, edgeId, edgeId, edgeId, fc.boolean(), (channel, user, ts, thread_ts, dm) => {
        const event = { type: 'message', text: 'hello', channel, user, ts, thread_ts, ...(dm && { channel_type: 'im' }) };
        const c = classifySlackEvent(event, ME);
        const allPresent = present(channel) && present(user) && present(ts);
        const valid = isSlackId(channel) && isSlackId(user) && isSlackTs(ts) && (!present(thread_ts) || isSlackTs(thread_ts));
        if (!allPresent) expect(c.action).toBe('ignore');
        else expect(c.action).toBe(valid ? 'take' : 'refuse');
        if (c.action === 'take') expect(slackCodec.decode(c.message.conversationId).channel).toBe(channel);
      }),
      { numRuns: 2_000 },
    );
  });

  it('drops a slash command, a press or an App Home visit with a malformed id instead of throwing', () => {
    fc.assert(
      fc.property(edgeId, edgeId, edgeId, (channel, user, ts) => {
        const slash = slashCommandToMessage({ channel_id: channel, user_id: user, trigger_id: '1.2.3', text: 'status' });
        expect(slash === null).toBe(!(isSlackId(channel) && isSlackId(user)));
        const press = pressToMessage(
          { user: { id: user }, channel: { id: channel }, message: { ts: '1700000000.000100', thread_ts: ts } },
          { value: 'v', action_ts: '1.2' },
        );
        expect(press === null).toBe(!(isSlackId(channel) && isSlackId(user) && (!present(ts) || isSlackTs(ts))));
        const home = homeOpenedToMessage({ tab: 'home', user, channel });
        expect(home === null).toBe(!(isSlackId(channel) && isSlackId(user)));
      }),
      { numRuns: 2_000 },
    );
  });
});
