/**
 * Issue 49 item 5, the review after a turn, through the real gateway, Telegram stand-in and LLM stand-in: every
 * second turn the side-task model (HERALD_AUXILIARY_MODEL) reviews the conversation only after the reply was
 * delivered; its memory note is saved (apply: auto) or offered with a button that saves it (apply: offer), and the
 * next conversation's request carries it; its skill edit is written to the profile's skills in the store (auto) or
 * offered with a button that writes it (offer); its call is priced; a profile with the review off makes no call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { PROPOSE_NOTE_TOOL, PROPOSE_SKILL_TOOL, REVIEW_SYSTEM_PROMPT } from '../apps/gateway/src/features/llm/post-turn-review.js';
import { OFFER_HEADING } from '../apps/gateway/src/turn/stages/review.js';

const SIDE_MODEL = 'side-reviewer';
const NOTE = 'Prefers green tea in the afternoon';
const SKILL = '---\nname: tea-timer\ndescription: How long to steep green tea\n---\nSteep 3 minutes at 80 °C.';
const AUTO_CHAT = 9301;
const OFFER_CHAT = 9302;
const OFF_CHAT = 9303;

const isReview = (r: RecordedRequest): boolean => r.rawBody.includes(REVIEW_SYSTEM_PROMPT.slice(0, 60));
const reviewOf = (chat: number) => (r: RecordedRequest) => isReview(r) && r.rawBody.includes(`c${chat} `);
/** A conversation request (not a side task) for this user text. */
/** The user's own text of a request: without the saved notes that follow it. */
const ownText = (req: RecordedRequest): string => lastUserText(req).replace(/\s*<memory>[\s\S]*<\/memory>$/, '');
const asked = (llm: FakeLLM, text: string): RecordedRequest | undefined => llm.requests.find((r) => !isReview(r) && ownText(r).endsWith(text));

describe('the review after a turn', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;
  /** What each chat had received when its review request reached the model. */
  const repliesAtReview = new Map<number, string[]>();

  function respond(req: RecordedRequest): Step {
    // The answer names the user's own text (without the saved notes after it).
    if (!isReview(req)) return { text: `re: ${ownText(req)}` };
    const chat = [AUTO_CHAT, OFFER_CHAT, OFF_CHAT].find((c) => req.rawBody.includes(`c${c} `)) ?? 0;
    repliesAtReview.set(chat, repliesIn(tg, chat));
    return {
      toolCalls: [
        { name: PROPOSE_NOTE_TOOL, arguments: JSON.stringify({ target: 'user', content: NOTE }) },
        {
          name: PROPOSE_SKILL_TOOL,
          arguments: JSON.stringify({ name: 'tea-timer', content: SKILL, reason: 'brewing tea' }),
        },
      ],
    };
  }

  async function turn(chat: number, text: string): Promise<void> {
    tg.injectMessage({ chatId: chat, userId: chat, text: `c${chat} ${text}` });
    await waitFor(() => repliesIn(tg, chat).includes(`re: c${chat} ${text}`), { timeoutMs: 30_000, what: `the answer to "${text}"` });
  }

  async function newConversation(chat: number): Promise<void> {
    tg.injectMessage({ chatId: chat, userId: chat, text: '/new' });
    await waitFor(() => repliesIn(tg, chat).some((t) => t.startsWith('✨ Started a new conversation')), { timeoutMs: 30_000, what: '/new' });
  }

  beforeAll(async () => {
    [tg, llm] = await Promise.all([startTelegramFake(), startFakeOpenAI()]);
    llm.respondWith(respond);
    gw = await startGateway({
      env: telegramEnv(tg, llm, {
        HERALD_AUXILIARY_MODEL: `openai:${SIDE_MODEL}`,
        HERALD_AUTO_TITLE: 'false',
        HERALD_REVIEW: 'true',
        HERALD_REVIEW_EVERY_TURNS: '2',
        HERALD_REVIEW_APPLY: 'auto',
        HERALD_PROFILES: JSON.stringify({ asker: { review: { apply: 'offer' } }, quiet: { review: { enabled: false } } }),
        HERALD_ROUTES: JSON.stringify([
          { chat: String(OFFER_CHAT), profile: 'asker' },
          { chat: String(OFF_CHAT), profile: 'quiet' },
        ]),
      }),
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await Promise.all([tg?.close(), llm?.close()]);
  });

  it('apply auto: after the second turn the side model reviews behind the delivered reply; the note reaches the next request', async () => {
    await turn(AUTO_CHAT, 'I would like some tea');
    expect(llm.requests.filter(reviewOf(AUTO_CHAT))).toHaveLength(0);
    await turn(AUTO_CHAT, 'green tea please, it is afternoon');
    await waitFor(() => gw.logs().some((l) => l.msg === 'post-turn review saved notes'), { timeoutMs: 30_000, what: 'the note saved' });

    const reviews = llm.requests.filter(reviewOf(AUTO_CHAT));
    expect(reviews).toHaveLength(1);
    // On the side-task model, never the conversation's, and only once the reply was in the chat.
    expect(reviews[0].body.model).toBe(SIDE_MODEL);
    expect(repliesAtReview.get(AUTO_CHAT)).toContain(`re: c${AUTO_CHAT} green tea please, it is afternoon`);
    // The skill edit is written to the profile's own skills (the store), as /skills then shows.
    await waitFor(() => repliesIn(tg, AUTO_CHAT).some((t) => t.startsWith('📚 Skill "tea-timer" saved')), { timeoutMs: 30_000, what: 'the skill saved' });
    tg.injectMessage({ chatId: AUTO_CHAT, userId: AUTO_CHAT, text: '/skills' });
    await waitFor(() => repliesIn(tg, AUTO_CHAT).some((t) => t.includes('• tea-timer — How long to steep green tea [agent]')), {
      timeoutMs: 30_000,
      what: '/skills listing the saved skill',
    });

    // Saved notes show from the next session on (the system prompt and first message stay byte-stable within one).
    await newConversation(AUTO_CHAT);
    await turn(AUTO_CHAT, 'what do you know about me?');
    const third = asked(llm, `c${AUTO_CHAT} what do you know about me?`);
    expect(JSON.stringify(third?.body.messages)).toContain(NOTE);
    expect(third?.body.model).not.toBe(SIDE_MODEL);
    // Priced like the other side tasks: the review's tokens are in the spend metrics under the side model.
    await waitFor(
      async () =>
        new RegExp(`herald_llm_profile_tokens_total\\{profile="default",model="openai:${SIDE_MODEL}",kind="input"\\} [1-9]`).test(
          await (await fetch(`${gw.url}/metrics`)).text(),
        ),
      { timeoutMs: 30_000, what: 'the review call in the spend metrics' },
    );
  });

  it('apply offer: the note comes with a button; pressing it saves the note for the next turn', async () => {
    await turn(OFFER_CHAT, 'I would like some tea');
    await turn(OFFER_CHAT, 'green tea please, it is afternoon');
    const offer = await waitFor(
      () => tg.sent.find((s) => s.method === 'sendMessage' && s.chat_id === String(OFFER_CHAT) && s.text?.startsWith(OFFER_HEADING)),
      { timeoutMs: 30_000, what: 'the offered note' },
    );
    expect(offer.text).toContain(`1. ${NOTE} (about you)`);
    expect(offer.text).toContain('/remember');
    const keyboard = (offer.params.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }).inline_keyboard;
    const button = keyboard.flat().find((b) => b.text === '💾 Save 1');
    expect(button).toBeDefined();
    // Not saved until pressed: nothing of it in the offer's own turn.
    expect(JSON.stringify(asked(llm, `c${OFFER_CHAT} green tea please, it is afternoon`)?.body.messages)).not.toContain(NOTE);

    tg.pressButton({ chatId: OFFER_CHAT, userId: OFFER_CHAT, messageId: offer.message_id ?? 0, data: button?.callback_data ?? '' });
    await waitFor(() => repliesIn(tg, OFFER_CHAT).includes(`💾 Saved (about you): ${NOTE}`), { timeoutMs: 30_000, what: 'the note saved by the press' });
    // The skill edit is offered too, and written only when its button is pressed.
    expect(offer.text).toContain('📚 Skill idea "tea-timer": brewing tea.');
    const skillButton = keyboard.flat().find((b) => b.text === '📚 Save skill tea-timer');
    expect(skillButton).toBeDefined();
    expect(repliesIn(tg, OFFER_CHAT).some((t) => t.startsWith('📚 Skill "tea-timer" saved'))).toBe(false);
    tg.pressButton({ chatId: OFFER_CHAT, userId: OFFER_CHAT, messageId: offer.message_id ?? 0, data: skillButton?.callback_data ?? '' });
    await waitFor(() => repliesIn(tg, OFFER_CHAT).includes('📚 Skill "tea-timer" saved.'), { timeoutMs: 30_000, what: 'the skill saved by the press' });
    await newConversation(OFFER_CHAT);
    await turn(OFFER_CHAT, 'what do you know about me?');
    expect(JSON.stringify(asked(llm, `c${OFFER_CHAT} what do you know about me?`)?.body.messages)).toContain(NOTE);
  });

  it('a profile with the review off makes no review call', async () => {
    await turn(OFF_CHAT, 'I would like some tea');
    await turn(OFF_CHAT, 'green tea please, it is afternoon');
    // The review would start the moment the second reply was delivered; a whole turn later it would have been asked.
    await turn(OFF_CHAT, 'thanks');
    expect(llm.requests.filter(reviewOf(OFF_CHAT))).toEqual([]);
    expect(llm.requests.filter((r) => r.body.model === SIDE_MODEL && r.rawBody.includes(`c${OFF_CHAT} `))).toEqual([]);
  });
});
