import { describe, expect, it } from 'vitest';
import { discordCodec, messageChannelOf, replyChannelOf, type DiscordConversation } from './codec.js';

describe('discord conversation codec', () => {
  const cases: [string, DiscordConversation, string][] = [
    ['guild channel', { channelId: '1234567890123456789' }, 'discord:1234567890123456789'],
    ['DM channel', { channelId: '42' }, 'discord:42'],
    ['thread under a channel', { channelId: '1111', threadId: '2222' }, 'discord:1111:2222'],
    ['largest snowflake', { channelId: '18446744073709551615', threadId: '18446744073709551615' }, 'discord:18446744073709551615:18446744073709551615'],
  ];

  it.each(cases)('round-trips a %s', (_name, conv, encoded) => {
    expect(discordCodec.encode(conv)).toBe(encoded);
    expect(discordCodec.decode(discordCodec.encode(conv))).toStrictEqual(conv);
  });

  it.each([
    ['another platform', 'telegram:123', /discord:" prefix/],
    ['slack id', 'slack:C123:1700000000.000100', /discord:" prefix/],
    ['no channel', 'discord:', /snowflake/],
    ['non-numeric channel', 'discord:general', /snowflake/],
    ['non-numeric thread', 'discord:1:abc', /snowflake/],
    ['too many parts', 'discord:1:2:3', /discord:<channel>\[:<thread>\]/],
    ['empty string', '', /discord:" prefix/],
    ['prefix only', 'discord', /discord:<channel>/],
  ])('refuses %s with a clear error', (_name, id, message) => {
    expect(() => discordCodec.decode(id)).toThrow(message);
  });

  it('refuses to encode ids that are not snowflakes', () => {
    expect(() => discordCodec.encode({ channelId: 'abc' })).toThrow(/snowflake/);
    expect(() => discordCodec.encode({ channelId: '1', threadId: '' })).toThrow(/snowflake/);
  });

  it('replies go to the thread, and the thread starter message is found in the parent channel', () => {
    const conv = { channelId: '10', threadId: '20' };
    expect(replyChannelOf(conv)).toBe('20');
    expect(messageChannelOf(conv, '20')).toBe('10');
    expect(messageChannelOf(conv, '30')).toBe('20');
    expect(messageChannelOf({ channelId: '10' }, '30')).toBe('10');
  });
});
