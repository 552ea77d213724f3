/**
 * Property tests: the wire check (wire.ts) and the conversation codec (codec.ts) agree on every id, so whatever
 * the edge lets in can be normalised and encoded, and whatever breaks an id rule is refused at the edge instead of
 * failing later (a 500 and an endless resend from Telegram, before).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTelegramChatId, isTelegramTopicId, telegramCodec } from './codec.js';
import { isRead, normalizeMessage, readUpdate } from './normalize.js';
import { isCallbackQuery, isMessageId, isMessageUpdate, isUpdateId, isUserId } from './wire.js';

type Path = ReadonlyArray<string | number>;
type Rule = (v: unknown) => boolean;

/** The values ids go wrong with: 0, negative, huge, non-integer, wrong type; `undefined` stands for a missing field. */
const EDGE_VALUES: unknown[] = [
  0,
  -0,
  -1,
  -3,
  1,
  7,
  2 ** 31,
  2 ** 53,
  2 ** 60,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  1e21,
  -1e300,
  0.5,
  -1.5,
  '1',
  '0',
  '',
  'abc',
  null,
  true,
  false,
  [],
  [1],
  {},
  { id: 1 },
  undefined,
];
const edgeValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom(...EDGE_VALUES), weight: 4 },
  { arbitrary: fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), weight: 2 },
  { arbitrary: fc.maxSafeInteger(), weight: 1 },
  { arbitrary: fc.double({ noNaN: true }), weight: 1 },
  { arbitrary: fc.string({ maxLength: 6 }), weight: 1 },
);

const encodes = (chatId: string, threadId?: string): boolean => {
  try {
    telegramCodec.encode({ chatId, threadId });
    return true;
  } catch {
    return false;
  }
};

const BOT = { id: 999, username: 'herald_bot' };
const USER = { id: 42, is_bot: false, first_name: 'Ann' };
const FORUM = { id: -1001234567890, type: 'supergroup', title: 'Forum', is_forum: true };
/** A forum-topic message with every id field present, so the topic id goes into the conversation id too. */
function baseMessage(): Record<string, unknown> {
  return {
    message_id: 10,
    date: 1_700_000_000,
    chat: { ...FORUM },
    from: { ...USER },
    message_thread_id: 5,
    is_topic_message: true,
    text: 'hi @herald_bot',
    entities: [{ type: 'text_mention', offset: 0, length: 2, user: { ...USER } }],
    reply_to_message: { message_id: 9, date: 1_700_000_000, chat: { ...FORUM }, from: { ...USER }, message_thread_id: 5, text: 'earlier' },
  };
}

function withValue(base: Record<string, unknown>, path: Path, value: unknown): Record<string, unknown> {
  const copy = structuredClone(base);
  let parent = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return copy;
}

/** Every id field of a message update, the rule it must meet, and whether it may be absent. */
const MESSAGE_IDS: Array<[Path, Rule, boolean]> = [
  [['update_id'], isUpdateId, false],
  [['message', 'message_id'], isMessageId, false],
  [['message', 'chat', 'id'], isTelegramChatId, false],
  [['message', 'from', 'id'], isUserId, false],
  [['message', 'message_thread_id'], isTelegramTopicId, true],
  [['message', 'entities', 0, 'user', 'id'], isUserId, false],
  [['message', 'reply_to_message', 'message_id'], isMessageId, false],
  [['message', 'reply_to_message', 'chat', 'id'], isTelegramChatId, false],
  [['message', 'reply_to_message', 'from', 'id'], isUserId, false],
  [['message', 'reply_to_message', 'message_thread_id'], isTelegramTopicId, true],
];

/** Every id field of a callback_query update (the press is under `callback_query`). */
const PRESS_IDS: Array<[Path, Rule, boolean]> = [
  [['callback_query', 'id'], (v) => typeof v === 'string' && v !== '', false],
  [['callback_query', 'from', 'id'], isUserId, false],
  [['callback_query', 'message', 'message_id'], isMessageId, false],
  [['callback_query', 'message', 'chat', 'id'], isTelegramChatId, false],
  [['callback_query', 'message', 'from', 'id'], isUserId, false],
  [['callback_query', 'message', 'message_thread_id'], isTelegramTopicId, true],
];

describe('the Telegram wire check agrees with the codec', () => {
  it('takes a number as a chat id exactly when the codec can encode it, and a topic id likewise', () => {
    fc.assert(
      fc.property(edgeValue, (v) => {
        if (typeof v !== 'number') return;
        expect(isTelegramChatId(v)).toBe(encodes(String(v)));
        expect(isTelegramTopicId(v)).toBe(encodes('-100123', String(v)));
      }),
      { numRuns: 2_000 },
    );
  });

  it('round-trips every conversation id the wire lets in', () => {
    fc.assert(
      fc.property(edgeValue, edgeValue, (chat, topic) => {
        if (!isTelegramChatId(chat)) return;
        const parts = isTelegramTopicId(topic) ? { chatId: String(chat), threadId: String(topic) } : { chatId: String(chat) };
        expect(telegramCodec.decode(telegramCodec.encode(parts))).toEqual(parts);
      }),
      { numRuns: 1_000 },
    );
  });

  it.each(MESSAGE_IDS)('refuses a message update whose %j breaks its rule, and normalises every one it takes', (path, rule, optional) => {
    const update = { update_id: 1, message: baseMessage() };
    fc.assert(
      fc.property(edgeValue, (v) => {
        const changed = withValue(update, path, v);
        const valid = v === undefined ? optional : rule(v);
        expect(isMessageUpdate(changed), `${path.join('.')} = ${String(v)}`).toBe(valid);
        const read = readUpdate(changed);
        expect(isRead(read)).toBe(valid);
        if (!isMessageUpdate(changed)) return;
        const result = normalizeMessage(changed.message, { bot: BOT, requireMention: false });
        expect(result.accepted).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it.each(PRESS_IDS)('drops a press whose %j breaks its rule as malformed, and normalises every other one', (path, rule, optional) => {
    const update = {
      update_id: 1,
      callback_query: {
        id: 'q1',
        from: { ...USER },
        data: 'choice:1',
        message: { ...baseMessage(), from: { id: BOT.id, is_bot: true, first_name: 'Herald' } },
      },
    };
    fc.assert(
      fc.property(edgeValue, (v) => {
        const changed = withValue(update, path, v);
        const valid = v === undefined ? optional : rule(v);
        expect(isCallbackQuery(changed.callback_query), `${path.join('.')} = ${String(v)}`).toBe(valid);
        const read = readUpdate(changed);
        if (valid) expect(read).toMatchObject({ id: 1, type: 'callback_query', payload: { press: { data: 'choice:1' } } });
        else expect(read).toEqual({ refused: 'dropped', id: 1, malformed: true });
      }),
      { numRuns: 300 },
    );
  });
});
