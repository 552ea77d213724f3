import { describe, expect, it } from 'vitest';
import { normalizeCallbackQuery, normalizeMessage, type NormalizeOptions, type TgCallbackQuery } from './normalize.js';
import type { TgMessage } from './wire.js';

const BOT = { id: 1000, username: 'herald_bot' };
const OPTS: NormalizeOptions = { bot: BOT, requireMention: true };
const GROUP = { id: -100555, type: 'supergroup' as const, title: 'Team' };
const ALICE = { id: 42, first_name: 'Alice', last_name: 'Liddell' };

function msg(partial: Partial<TgMessage>): TgMessage {
  return { message_id: 10, date: 1_700_000_000, chat: GROUP, from: ALICE, ...partial };
}

function mention(text: string, handle = '@herald_bot') {
  return { type: 'mention', offset: text.indexOf(handle), length: handle.length };
}

function accepted(m: TgMessage, opts = OPTS) {
  const r = normalizeMessage(m, opts);
  if (!r.accepted) throw new Error(`ignored: ${r.reason}`);
  return r;
}

describe('normalizeMessage', () => {
  it('strips a mention in the middle of a sentence without leaving a double space', () => {
    const text = 'hey @herald_bot what is up';
    expect(accepted(msg({ text, entities: [mention(text)] })).message.text).toBe('hey what is up');
  });

  it('strips an opening mention with its comma', () => {
    const text = '@herald_bot, summarise this';
    expect(accepted(msg({ text, entities: [mention(text)] })).message.text).toBe('summarise this');
  });

  it('counts a text_mention of the bot (a bot without a username link) as a mention', () => {
    const text = 'Herald please help';
    const r = accepted(msg({ text, entities: [{ type: 'text_mention', offset: 0, length: 6, user: { id: BOT.id } }] }));
    expect(r.message.text).toBe('please help');
  });

  it('ignores a mention of someone else', () => {
    const text = 'ask @someone_else about it';
    expect(normalizeMessage(msg({ text, entities: [mention(text, '@someone_else')] }), OPTS)).toEqual({
      accepted: false,
      reason: 'not-addressed',
    });
  });

  it('reads a mention in a photo caption and keeps the photo', () => {
    const caption = '@herald_bot what is in this picture?';
    const r = accepted(msg({ caption, caption_entities: [mention(caption)], photo: [{ file_id: 'small' }, { file_id: 'big', file_size: 9 }] }));
    expect(r.message.text).toBe('what is in this picture?');
    expect(r.message.attachments).toEqual([{ kind: 'image', url: 'tg-file:big', fileId: 'big', mimeType: 'image/jpeg', size: 9 }]);
    expect(r.joinable).toBe(false);
  });

  it('ignores reply-chain thread ids in groups that are not forums', () => {
    const text = '@herald_bot and this';
    const r = accepted(msg({ text, entities: [mention(text)], message_thread_id: 7 }));
    expect(r.message.threadId).toBeUndefined();
    expect(r.message.conversationId).toBe('telegram:-100555');
  });

  it('quotes only the part the user selected when replying with a quote', () => {
    const r = accepted(
      msg({
        text: 'why?',
        reply_to_message: msg({ message_id: 9, from: { id: BOT.id, is_bot: true }, text: 'Long answer. Key claim. More.' }),
        quote: { text: 'Key claim.' },
      }),
    );
    expect(r.message.quoted).toEqual({ platformMessageId: '9', text: 'Key claim.', fromBot: true });
  });

  it('takes a plain command in a group without a mention, and marks it not joinable', () => {
    const r = accepted(msg({ text: '/new', entities: [{ type: 'bot_command', offset: 0, length: 4 }] }));
    expect(r.message.text).toBe('/new');
    expect(r.joinable).toBe(false);
  });

  it('leaves a DM command addressed to another bot as text', () => {
    const dm = { id: 42, type: 'private' as const };
    const r = accepted(msg({ chat: dm, text: '/start@other_bot', entities: [{ type: 'bot_command', offset: 0, length: 16 }] }));
    expect(r.message.text).toBe('/start@other_bot');
    expect(r.message.chatType).toBe('dm');
  });

  it("ignores the bot's own messages, channel posts, and a bare mention", () => {
    expect(normalizeMessage(msg({ from: { id: BOT.id, is_bot: true }, text: 'echo' }), OPTS)).toMatchObject({ reason: 'own-message' });
    expect(normalizeMessage(msg({ chat: { id: -1001, type: 'channel' }, text: 'post' }), OPTS)).toMatchObject({
      reason: 'unsupported-chat',
    });
    const text = '@herald_bot';
    expect(normalizeMessage(msg({ text, entities: [mention(text)] }), OPTS)).toMatchObject({ reason: 'empty' });
  });

  it('names the user by username, else by full name', () => {
    const text = '@herald_bot hi';
    const entities = [mention(text)];
    expect(accepted(msg({ text, entities })).message.userName).toBe('Alice Liddell');
    expect(accepted(msg({ text, entities, from: { ...ALICE, username: 'alice' } })).message.userName).toBe('alice');
  });
});

describe('normalizeCallbackQuery', () => {
  it('a press becomes a message with the button data, in the chat of the message it is under, answered through its query id', () => {
    const m = normalizeCallbackQuery({
      id: 'q1',
      from: ALICE,
      data: 'hb1:abc:0',
      message: msg({ message_id: 77, from: { id: BOT.id, first_name: 'Herald' } }),
    });
    expect(m).toMatchObject({
      platform: 'telegram',
      messageId: 'cb:q1',
      conversationId: `telegram:${GROUP.id}`,
      chatType: 'group',
      userId: '42',
      userName: 'Alice Liddell',
      text: '',
      platformMessageId: '77',
      press: { data: 'hb1:abc:0' },
      interaction: { kind: 'press', id: 'q1' },
    });
  });

  it('drops what it cannot read instead of failing the update (which Telegram would deliver again)', () => {
    const bad = [
      { id: 'q2', from: ALICE, message: msg({}) },
      { id: 'q3', from: ALICE, data: 'x' },
      { id: 'q4', data: 'x', message: msg({}) },
      { id: 'q5', from: ALICE, data: 'x', message: { date: 1, chat: null } },
      null,
    ] as unknown as TgCallbackQuery[];
    for (const q of bad) expect(normalizeCallbackQuery(q)).toBeNull();
  });
});
