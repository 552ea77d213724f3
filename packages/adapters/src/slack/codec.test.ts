import { describe, expect, it } from 'vitest';
import { slackCodec, type SlackConversation } from './codec.js';

describe('slackCodec', () => {
  const cases: [string, SlackConversation][] = [
    ['a DM as a whole', { channel: 'D0123ABCD' }],
    ['a thread in a public channel', { channel: 'C0123ABCD', threadTs: '1700000000.000100' }],
    ['a thread in a private channel', { channel: 'G0123ABCD', threadTs: '1355517523.000005' }],
    ['a reply thread inside a DM', { channel: 'D0123ABCD', threadTs: '1700000001.123456' }],
  ];

  it.each(cases)('round-trips %s', (_name, parts) => {
    const id = slackCodec.encode(parts);
    expect(id.startsWith('slack:')).toBe(true);
    expect(slackCodec.decode(id)).toEqual(parts);
  });

  it('encodes the documented shapes', () => {
    expect(slackCodec.encode({ channel: 'C1', threadTs: '1.2' })).toBe('slack:C1:1.2');
    expect(slackCodec.encode({ channel: 'D1' })).toBe('slack:D1');
  });

  it.each([
    ['telegram:123', /Not a Slack conversation id/],
    ['discord:1:2', /Not a Slack conversation id/],
    ['slack', /expected slack:<channel>/],
    ['slack:C1:1.2:extra', /expected slack:<channel>/],
    ['slack::1.2', /bad channel id/],
    ['slack:C1:not-a-ts', /thread_ts/],
    ['', /Not a Slack conversation id/],
  ])('rejects %j with a clear error', (id, message) => {
    expect(() => slackCodec.decode(id)).toThrow(message);
  });

  it('refuses to encode a channel id that would break decoding', () => {
    expect(() => slackCodec.encode({ channel: 'C1:evil' })).toThrow(/bad channel id/);
  });
});
