/** The split-text decision: which taken texts may be followed by a next part, and which one is that next part. */
import { describe, expect, it } from 'vitest';
import type { InboundMessage } from '../types.js';
import { TELEGRAM_SPLIT_MIN_PART } from './config.js';
import { IncomingParts, textPartOf, type OpenSplit, type TextCandidate } from './parts.js';
import type { TgMessage } from './wire.js';

const MIN = TELEGRAM_SPLIT_MIN_PART;
const open: OpenSplit = { id: '7:10', messageId: 10, date: 1_000 };
const next = (o: Partial<TextCandidate> = {}): TextCandidate => ({ messageId: 11, date: 1_000, length: 900, joinable: true, ...o });

describe('textPartOf', () => {
  it('the very next message, plain text, dated within 2 s, continues the split; a short one is its last part', () => {
    expect(textPartOf(open, next(), '7', MIN)).toEqual({ id: '7:10', kind: 'text', last: true });
    expect(textPartOf(open, next({ date: 1_002 }), '7', MIN)).toEqual({ id: '7:10', kind: 'text', last: true });
    expect(textPartOf(open, next({ length: 4096 }), '7', MIN)).toEqual({ id: '7:10', kind: 'text' });
  });

  it('a text longer than half the limit may start a split (Telegram Desktop cuts only past half); a shorter one may not', () => {
    expect(MIN).toBe(2049);
    expect(textPartOf(undefined, next({ length: 2049 }), '7', MIN)).toEqual({ id: '7:11', kind: 'text' });
    expect(textPartOf(undefined, next({ length: 2048 }), '7', MIN)).toBeUndefined();
  });

  it('a gap in the message ids, a later date or a command or file is not a next part', () => {
    expect(textPartOf(open, next({ messageId: 12 }), '7', MIN)).toBeUndefined();
    expect(textPartOf(open, next({ date: 1_003 }), '7', MIN)).toBeUndefined();
    expect(textPartOf(open, next({ joinable: false, length: 4096 }), '7', MIN)).toBeUndefined();
    // Long enough itself: not a part of the open split, but maybe the first of a new one.
    expect(textPartOf(open, next({ messageId: 12, length: 4096 }), '7', MIN)).toEqual({ id: '7:12', kind: 'text' });
  });
});

describe('IncomingParts', () => {
  const msg = (userId: string, messageId: number): InboundMessage => ({
    platform: 'telegram',
    messageId: `-5:${messageId}`,
    conversationId: 'telegram:-5',
    chatType: 'group',
    chatId: '-5',
    userId,
    text: '',
    attachments: [],
    platformMessageId: String(messageId),
    sentAt: 0,
  });
  const raw = (messageId: number, text: string): TgMessage => ({ message_id: messageId, date: 1_000, chat: { id: -5, type: 'supergroup' }, text });

  it('keeps splits apart per user: another user’s next message does not continue mine', async () => {
    const parts = new IncomingParts(MIN);
    expect((await parts.take(msg('1', 10), raw(10, 'a'.repeat(4096)), true)).partOf).toEqual({ id: '-5:10', kind: 'text' });
    expect(await parts.follows(msg('2', 11), raw(11, 'not mine'), true)).toBe(false);
    expect(await parts.follows(msg('1', 11), raw(11, 'mine'), true)).toBe(true);
    expect((await parts.take(msg('1', 11), raw(11, 'mine'), true)).partOf).toEqual({ id: '-5:10', kind: 'text', last: true });
    // The split is over: nothing continues it any more.
    expect(await parts.follows(msg('1', 12), raw(12, 'later'), true)).toBe(false);
  });
});
