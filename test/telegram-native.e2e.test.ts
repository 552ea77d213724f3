/**
 * Issue 21 on Telegram, end to end: the real gateway against the Telegram stand-in. Choices come as inline
 * keyboards; a press (callback_query) counts as typing the choice and is closed with answerCallbackQuery, which
 * carries the note for a stale or someone else's press.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startTelegramFake, type SentRecord, type TelegramFake } from './fakes/telegram/index.js';
import { CLARIFY_QUESTION, clarifyScript, STREAMED_ANSWER, STREAMED_BEFORE_QUESTION } from './helpers/clarify-script.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

const STALE = '⌛ This button is no longer active (already used, answered, or expired).';
const FOREIGN = '🙅 These buttons are for the person who asked; yours would not count.';

describe('telegram native interactions (issue 21)', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let cluster: Cluster;

  beforeAll(async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    llm.respondWith(async (req) => clarifyScript(req));
    // Interim messages off: the text streamed before the clarify question stays in the preview (with them on, it
    // becomes a message of its own: out/progress.ts showInterim, tested in draft-preview.test.ts and progress.test.ts).
    cluster = await startCluster({
      workers: 0,
      env: telegramEnv(tg, llm, {
        HERALD_TOOLSETS: 'full',
        HERALD_CONFIRM_RESET: 'true',
        TELEGRAM_STATUS_REACTIONS: 'on',
        HERALD_STREAMING: 'true',
        HERALD_INTERIM_MESSAGES: 'false',
      }),
    });
  });

  afterAll(async () => {
    await cluster?.stop();
    await tg?.close();
    await llm?.close();
  });

  /** The last message in a chat that carries an inline keyboard: its id and its buttons' data by label. */
  function keyboardIn(chatId: number): { messageId: number; data: Record<string, string> } | null {
    const sent = tg.sent.filter((s) => s.method === 'sendMessage' && s.chat_id === String(chatId) && keyboardOf(s).length > 0).at(-1);
    if (!sent) return null;
    return { messageId: sent.message_id ?? 0, data: Object.fromEntries(keyboardOf(sent).map((b) => [b.text, b.callback_data])) };
  }

  function keyboardOf(s: SentRecord): Array<{ text: string; callback_data: string }> {
    const markup = s.params.reply_markup as { inline_keyboard?: Array<Array<{ text: string; callback_data: string }>> } | undefined;
    return markup?.inline_keyboard?.flat() ?? [];
  }

  /** What the bot answered a callback query with: the note's text, '' for none. */
  async function callbackAnswer(queryId: string): Promise<string> {
    const answer = await tg.waitFor(() => tg.sent.find((s) => s.method === 'answerCallbackQuery' && s.params.callback_query_id === queryId), 20_000);
    return answer.text ?? '';
  }

  async function say(chatId: number, text: string, userId = chatId): Promise<void> {
    const before = repliesIn(tg, chatId).length;
    tg.injectMessage({ chatId, userId, text });
    await waitFor(() => repliesIn(tg, chatId).length > before, { what: `an answer to ${text}` });
  }

  it("a clarify question's choices are an inline keyboard: a press answers the running turn; a late press is stale", async () => {
    const chat = 2101;
    tg.injectMessage({ chatId: chat, userId: chat, text: 'book a table' });
    await waitFor(() => keyboardIn(chat) !== null, { what: 'the question with its keyboard' });
    const question = keyboardIn(chat);
    expect(repliesIn(tg, chat)).toEqual([`${CLARIFY_QUESTION}\n\n1. 2\n2. 4`]);
    expect(Object.keys(question?.data ?? {})).toEqual(['2', '4']);

    const press = tg.pressButton({ chatId: chat, userId: chat, messageId: question?.messageId ?? 0, data: question?.data['4'] ?? '' });
    expect(await callbackAnswer(press)).toBe('');
    await waitFor(() => repliesIn(tg, chat).includes('Booked. (The user answered: 4)'), { what: 'the turn finished with the pressed answer' });
    expect(llm.requests.filter((r) => lastUserText(r) === '4')).toHaveLength(0);

    const late = tg.pressButton({ chatId: chat, userId: chat, messageId: question?.messageId ?? 0, data: question?.data['2'] ?? '' });
    expect(await callbackAnswer(late)).toBe(STALE);
    expect(repliesIn(tg, chat)).toHaveLength(2);
  });

  it('/new asks first (HERALD_CONFIRM_RESET): "Keep this one" keeps the conversation, "Start over" resets, once', async () => {
    const chat = 2102;
    await say(chat, 'hello');
    await say(chat, '/new');
    const confirm = keyboardIn(chat);
    expect(Object.keys(confirm?.data ?? {})).toEqual(['✨ Start over', 'Keep this one']);

    tg.pressButton({ chatId: chat, userId: chat, messageId: confirm?.messageId ?? 0, data: confirm?.data['Keep this one'] ?? '' });
    await waitFor(() => repliesIn(tg, chat).at(-1) === '👍 Kept this conversation.', { what: 'the cancel' });
    // One press used the question up: the other button is stale now.
    const other = tg.pressButton({ chatId: chat, userId: chat, messageId: confirm?.messageId ?? 0, data: confirm?.data['✨ Start over'] ?? '' });
    expect(await callbackAnswer(other)).toBe(STALE);

    await say(chat, '/new');
    const again = keyboardIn(chat);
    tg.pressButton({ chatId: chat, userId: chat, messageId: again?.messageId ?? 0, data: again?.data['✨ Start over'] ?? '' });
    await waitFor(() => (repliesIn(tg, chat).at(-1) ?? '').startsWith('✨ Started a new conversation'), { what: 'the reset' });
  });

  it("/resume's picker in a group: someone else's press is refused with a toast, the asker's resumes", async () => {
    const group = -2103;
    const alice = 71;
    const bob = 72;
    await say(group, '/title Garden plans', alice);
    await say(group, '/new now', alice);
    await say(group, '/resume', alice);
    const picker = keyboardIn(group);
    expect(Object.keys(picker?.data ?? {})).toEqual(['Garden plans']);

    const foreign = tg.pressButton({ chatId: group, userId: bob, messageId: picker?.messageId ?? 0, data: picker?.data['Garden plans'] ?? '' });
    expect(await callbackAnswer(foreign)).toBe(FOREIGN);
    const own = tg.pressButton({ chatId: group, userId: alice, messageId: picker?.messageId ?? 0, data: picker?.data['Garden plans'] ?? '' });
    expect(await callbackAnswer(own)).toBe('');
    await waitFor(() => (repliesIn(tg, group).at(-1) ?? '').startsWith('▶️ Resumed “Garden plans”'), { what: 'the resume' });
    expect(repliesIn(tg, group).filter((t) => t.startsWith('▶️'))).toHaveLength(1);
  });

  it("status reactions (TELEGRAM_STATUS_REACTIONS=on) use Telegram's own set: 👀, ⚡ while tools run, then 👌", async () => {
    const chat = 2104;
    const asked = tg.injectMessage({ chatId: chat, userId: chat, text: 'book a table for two' });
    const messageId = (asked.message as { message_id: number }).message_id;
    await waitFor(() => keyboardIn(chat) !== null, { what: 'the question' });
    const question = keyboardIn(chat);
    tg.pressButton({ chatId: chat, userId: chat, messageId: question?.messageId ?? 0, data: question?.data['2'] ?? '' });
    const reactions = (): string[] =>
      tg.sent
        .filter((s) => s.method === 'setMessageReaction' && s.chat_id === String(chat) && s.message_id === messageId)
        .map((s) => (s.reaction as Array<{ emoji: string }>)[0]?.emoji ?? '-');
    await waitFor(() => reactions().at(-1) === '👌', { what: 'the done reaction' });
    // Telegram keeps one reaction per message: each stage replaces the last; the removals clear it before 👌.
    expect(reactions()).toEqual(['👀', '⚡', '-', '-', '👌']);
  });

  /** Calls of one method in one chat, in order. */
  const callsIn = (chat: number, method: string): SentRecord[] => tg.sent.filter((s) => s.method === method && s.chat_id === String(chat));

  it('streaming in a private chat shows a draft (sendMessageDraft), and the final answer is sent once, as a new message', async () => {
    const chat = 2105;
    tg.injectMessage({ chatId: chat, userId: chat, text: 'stream a booking' });
    // The turn now waits for the answer to its question: the text streamed before it must be showing as a draft.
    await waitFor(() => keyboardIn(chat) !== null, { what: 'the question' });
    await waitFor(() => callsIn(chat, 'sendMessageDraft').length > 0, { what: 'a draft' });
    const drafts = callsIn(chat, 'sendMessageDraft');
    expect(drafts.every((d) => d.params.draft_id === drafts[0].params.draft_id && Number(d.params.draft_id) !== 0)).toBe(true);
    expect(drafts.at(-1)?.text).toContain(STREAMED_BEFORE_QUESTION);

    const question = keyboardIn(chat);
    tg.pressButton({ chatId: chat, userId: chat, messageId: question?.messageId ?? 0, data: question?.data['2'] ?? '' });
    await waitFor(() => repliesIn(tg, chat).includes(STREAMED_ANSWER), { what: 'the final answer' });
    expect(repliesIn(tg, chat).filter((t) => t === STREAMED_ANSWER)).toHaveLength(1);
    expect(callsIn(chat, 'editMessageText')).toEqual([]);
  });

  it('without sendMessageDraft (an older Bot API server) the preview is a message edited in place, and the final text is its last edit', async () => {
    tg.supportDrafts(false);
    const chat = 2106;
    tg.injectMessage({ chatId: chat, userId: chat, text: 'stream another booking' });
    await waitFor(() => keyboardIn(chat) !== null, { what: 'the question' });
    await waitFor(() => repliesIn(tg, chat).some((t) => t.startsWith(STREAMED_BEFORE_QUESTION)), { what: 'the preview message' });
    const question = keyboardIn(chat);
    tg.pressButton({ chatId: chat, userId: chat, messageId: question?.messageId ?? 0, data: question?.data['4'] ?? '' });
    await waitFor(() => callsIn(chat, 'editMessageText').some((e) => e.text === STREAMED_ANSWER), { what: 'the final edit' });
    expect(repliesIn(tg, chat).filter((t) => t === STREAMED_ANSWER)).toEqual([]);
    expect(callsIn(chat, 'sendMessageDraft').filter((c) => c.text !== undefined)).toEqual([]);
  });
});
