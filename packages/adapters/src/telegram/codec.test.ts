import { describe, expect, it } from 'vitest';
import { telegramCodec, type TelegramConversation } from './codec.js';

describe('telegramCodec', () => {
  const cases: [string, TelegramConversation][] = [
    ['private chat', { chatId: '123456789' }],
    ['basic group (negative id)', { chatId: '-4012345678' }],
    ['supergroup', { chatId: '-1001234567890' }],
    ['forum topic', { chatId: '-1001234567890', threadId: '42' }],
    ['forum General topic', { chatId: '-1001234567890', threadId: '1' }],
  ];

  it.each(cases)('round-trips a %s', (_name, parts) => {
    const id = telegramCodec.encode(parts);
    expect(id.startsWith('telegram:')).toBe(true);
    expect(telegramCodec.decode(id)).toEqual(parts);
  });

  it('encodes to the documented shape', () => {
    expect(telegramCodec.encode({ chatId: '-100777', threadId: '5' })).toBe('telegram:-100777:5');
    expect(telegramCodec.encode({ chatId: '42' })).toBe('telegram:42');
  });

  it.each([
    ['discord:123', /not a Telegram conversation id/],
    ['slack:C123:1700000000.000100', /not a Telegram conversation id/],
    ['telegram', /malformed/],
    ['telegram:', /malformed/],
    ['telegram:abc', /malformed/],
    ['telegram:-100123:', /malformed/],
    ['telegram:-100123:0', /malformed/],
    ['telegram:-100123:-5', /malformed/],
    ['telegram:-100123:5:6', /malformed/],
    ['telegram:12.5', /malformed/],
  ])('rejects "%s" with a clear error', (id, message) => {
    expect(() => telegramCodec.decode(id)).toThrow(message);
  });

  it('refuses to encode ids Telegram cannot have', () => {
    expect(() => telegramCodec.encode({ chatId: 'a:b' })).toThrow(/chat id/);
    expect(() => telegramCodec.encode({ chatId: '1', threadId: '0' })).toThrow(/topic id/);
  });
});
