import { describe, expect, it } from 'vitest';
import { DISCORD_EMPTY_TEXT_NOTE, DISCORD_THREAD_FALLBACK_NAME, DISCORD_THREAD_NAME_MAX } from './config.js';
import { cleanText, decide, placementOf, threadNameFor, toInbound, type DiscordPolicy, type MessageView } from './normalize.js';

const BOT = '900';
const ALICE = '101';
const BOB = '102';

function view(over: Partial<MessageView> = {}): MessageView {
  return {
    id: '5000',
    channelId: '300',
    guildId: '200',
    channelKind: 'text',
    parentId: null,
    type: 0,
    authorId: ALICE,
    authorName: 'Alice',
    authorIsBot: false,
    content: 'hello',
    mentionedUserIds: [],
    mentionedNames: {},
    botRoleIds: [],
    repliedTo: null,
    attachments: [],
    sentAt: 1_700_000_000_000,
    ...over,
  };
}

const policy: DiscordPolicy = {
  botId: BOT,
  requireMention: true,
  autoThread: true,
  freeResponseChannels: new Set(['333']),
  allowBots: 'none',
};

const mention = { content: `<@${BOT}> what is up`, mentionedUserIds: [BOT] };

describe('decide', () => {
  it.each<[string, Partial<MessageView>, Partial<DiscordPolicy>, boolean, { take: boolean; openThread?: boolean; joinThread?: boolean }]>([
    ['mention in a text channel opens a thread', mention, {}, false, { take: true, openThread: true }],
    ['nickname mention <@!id> counts', { content: `<@!${BOT}> hi` }, {}, false, { take: true, openThread: true }],
    ['mention of the bot role counts', { content: '<@&77> hi', botRoleIds: ['77'] }, {}, false, { take: true }],
    ['reply to the bot counts as a mention', { repliedTo: { messageId: '1', authorId: BOT, content: 'earlier' } }, {}, false, { take: true }],
    ['mention without autoThread stays in the channel', mention, { autoThread: false }, false, { take: true, openThread: false }],
    ['plain channel message is ignored', {}, {}, false, { take: false }],
    ['mentions of others only are ignored', { content: `<@${BOB}> look`, mentionedUserIds: [BOB] }, {}, false, { take: false }],
    ['others-only mention is ignored even without requireMention', { mentionedUserIds: [BOB] }, { requireMention: false }, false, { take: false }],
    [
      'reply to another person is ignored in a free channel',
      { channelId: '333', repliedTo: { messageId: '1', authorId: BOB, content: 'x' } },
      {},
      false,
      { take: false },
    ],
    ['requireMention false takes everything, without threads', {}, { requireMention: false }, false, { take: true, openThread: false }],
    ['free-response channel takes everything', { channelId: '333' }, {}, false, { take: true, openThread: false }],
    ['a mention in a free-response channel does not open a thread', { ...mention, channelId: '333' }, {}, false, { take: true, openThread: false }],
    [
      'thread the bot takes part in needs no mention',
      { channelKind: 'thread', parentId: '300', channelId: '400' },
      {},
      true,
      { take: true, joinThread: false },
    ],
    ['thread the bot is not in is ignored', { channelKind: 'thread', parentId: '300', channelId: '400' }, {}, false, { take: false }],
    [
      'mention in a foreign thread joins it and opens no thread',
      { ...mention, channelKind: 'thread', parentId: '300', channelId: '400' },
      {},
      false,
      { take: true, openThread: false, joinThread: true },
    ],
    ['thread under a free-response channel is free too', { channelKind: 'thread', parentId: '333', channelId: '401' }, {}, false, { take: true }],
    ['DM needs no mention', { channelKind: 'dm', guildId: null }, {}, false, { take: true, openThread: false }],
    ['own message is ignored', { ...mention, authorId: BOT }, {}, false, { take: false }],
    ['system message (pin) is ignored', { ...mention, type: 6 }, {}, false, { take: false }],
    ['thread-created notice is ignored', { ...mention, type: 18 }, {}, false, { take: false }],
    ['reply type is a normal message', { ...mention, type: 19 }, {}, false, { take: true }],
    ['other bot is ignored by default', { ...mention, authorIsBot: true }, {}, false, { take: false }],
    ['other bot mentioning us is taken in mentions mode', { ...mention, authorIsBot: true }, { allowBots: 'mentions' }, false, { take: true }],
    [
      'other bot in a DM without mention is ignored in mentions mode',
      { channelKind: 'dm', guildId: null, authorIsBot: true },
      { allowBots: 'mentions' },
      false,
      { take: false },
    ],
    [
      'other bot without mention in a free channel is ignored in mentions mode',
      { channelId: '333', authorIsBot: true },
      { allowBots: 'mentions' },
      false,
      { take: false },
    ],
    ['other bot without mention is taken in a free channel in all mode', { channelId: '333', authorIsBot: true }, { allowBots: 'all' }, false, { take: true }],
    ['all mode still needs a mention in a plain channel', { authorIsBot: true }, { allowBots: 'all' }, false, { take: false }],
  ])('%s', (_name, over, pol, participating, expected) => {
    const d = decide(view(over), { ...policy, ...pol }, participating);
    expect(d.take).toBe(expected.take);
    if (d.take) {
      if (expected.openThread !== undefined) expect(d.openThread).toBe(expected.openThread);
      if (expected.joinThread !== undefined) expect(d.joinThread).toBe(expected.joinThread);
    }
  });

  it('says why a message was ignored', () => {
    expect(decide(view({ type: 7 }), policy, false)).toEqual({ take: false, reason: 'system message type 7' });
  });
});

describe('cleanText', () => {
  it('strips the bot mention in both forms and keeps the rest', () => {
    expect(cleanText(view({ content: `<@${BOT}>  summarise <@!${BOT}> this` }), BOT)).toBe('summarise this');
  });

  it('turns other mentions into readable names and strips the bot role', () => {
    const v = view({ content: `<@&77> ask <@${BOB}> and <@555>`, botRoleIds: ['77'], mentionedNames: { [BOB]: 'Bob' } });
    expect(cleanText(v, BOT)).toBe('ask @Bob and <@555>');
  });

  it('keeps line breaks', () => {
    expect(cleanText(view({ content: `<@${BOT}> line one\n  line two` }), BOT)).toBe('line one\nline two');
  });

  it('replaces an empty message with a note', () => {
    expect(cleanText(view({ content: `<@${BOT}>` }), BOT)).toBe(DISCORD_EMPTY_TEXT_NOTE);
    expect(cleanText(view({ content: '' }), BOT)).toBe(DISCORD_EMPTY_TEXT_NOTE);
  });
});

describe('threadNameFor', () => {
  it('uses the first line without the mention', () => {
    expect(threadNameFor(view({ content: `<@${BOT}> How do I bake bread?\nDetails follow` }), BOT)).toBe('How do I bake bread?');
  });

  it('shortens long names to the limit with an ellipsis', () => {
    const name = threadNameFor(view({ content: `<@${BOT}> ${'word '.repeat(40)}` }), BOT);
    expect(name.length).toBeLessThanOrEqual(DISCORD_THREAD_NAME_MAX);
    expect(name.endsWith('…')).toBe(true);
  });

  it('never splits an emoji at the cut', () => {
    const name = threadNameFor(view({ content: `${'a'.repeat(78)}😀😀😀` }), BOT);
    expect(name).toBe(`${'a'.repeat(78)}…`);
  });

  it('falls back when nothing is left', () => {
    expect(threadNameFor(view({ content: `<@${BOT}>` }), BOT)).toBe(DISCORD_THREAD_FALLBACK_NAME);
  });
});

describe('toInbound', () => {
  it('a DM is its own chat', () => {
    const v = view({ channelKind: 'dm', guildId: null, channelId: '600' });
    const msg = toInbound(v, BOT, placementOf(v));
    expect(msg).toMatchObject({ platform: 'discord', chatType: 'dm', chatId: '600', conversationId: 'discord:600', text: 'hello' });
    expect(msg).not.toHaveProperty('threadId');
  });

  it('a thread message belongs to the parent channel with the thread as threadId', () => {
    const v = view({ channelKind: 'thread', channelId: '400', parentId: '300' });
    expect(toInbound(v, BOT, placementOf(v))).toMatchObject({ chatType: 'thread', chatId: '300', threadId: '400', conversationId: 'discord:300:400' });
  });

  it('a message answered in a new thread points at the thread', () => {
    const v = view(mention);
    expect(toInbound(v, BOT, placementOf(v, '5000'))).toMatchObject({
      chatType: 'thread',
      chatId: '300',
      threadId: '5000',
      conversationId: 'discord:300:5000',
      text: 'what is up',
      messageId: '5000',
      platformMessageId: '5000',
      userId: ALICE,
      userName: 'Alice',
    });
  });

  it('a plain channel message stays in the channel, and the quoted message says whether it was the bot', () => {
    const v = view({ repliedTo: { messageId: '4000', authorId: BOT, content: 'my earlier answer' } });
    const msg = toInbound(v, BOT, placementOf(v));
    expect(msg).toMatchObject({ chatType: 'channel', chatId: '300', conversationId: 'discord:300' });
    expect(msg.quoted).toEqual({ platformMessageId: '4000', text: 'my earlier answer', fromBot: true });
  });

  it('a message with only files has no text (no "sent no text" note): the files speak for it', () => {
    const file = { kind: 'audio' as const, url: 'https://cdn.example/v.ogg', fileId: '77', mimeType: 'audio/ogg', voice: true };
    expect(toInbound(view({ content: '', attachments: [file] }), BOT, placementOf(view())).text).toBe('');
    expect(toInbound(view({ content: '' }), BOT, placementOf(view())).text).toBe('(the user sent no text)');
  });

  it('survives a JSON round trip unchanged (it travels through Redis)', () => {
    const v = view({ attachments: [{ kind: 'image', url: 'https://cdn.example/a.png', mimeType: 'image/png', name: 'a.png', size: 3 }] });
    const msg = toInbound(v, BOT, placementOf(v));
    expect(JSON.parse(JSON.stringify(msg))).toStrictEqual(msg);
  });
});
