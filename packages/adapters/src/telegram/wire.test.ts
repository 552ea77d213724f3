import { describe, expect, it } from 'vitest';
import { isMessageId, isMessageUpdate } from './wire.js';

const update = (message_id: unknown) => ({
  update_id: 1,
  message: { message_id, date: 1_700_000_000, chat: { id: 7, type: 'private' }, text: 'hi' },
});

describe('Telegram wire checks', () => {
  it('takes a positive integer as a message id, and nothing else', () => {
    expect([1, 42, 2 ** 31].map(isMessageId)).toEqual([true, true, true]);
    expect([0, -1, 1.5, '1', null, Number.MAX_SAFE_INTEGER + 1].map(isMessageId)).toEqual([false, false, false, false, false, false]);
  });

  it('refuses a message update whose message id is not one (the webhook answers 400), so no reply is ever aimed at it', () => {
    expect(isMessageUpdate(update(1))).toBe(true);
    expect(isMessageUpdate(update(0))).toBe(false);
    expect(isMessageUpdate(update(-5))).toBe(false);
  });

  it('checks the replied-to message the same way', () => {
    const u = update(2);
    expect(isMessageUpdate({ ...u, message: { ...u.message, reply_to_message: { ...u.message, message_id: 0 } } })).toBe(false);
    expect(isMessageUpdate({ ...u, message: { ...u.message, reply_to_message: { ...u.message, message_id: 1 } } })).toBe(true);
  });
});
