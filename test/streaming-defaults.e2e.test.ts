/**
 * Issue 49 item 6, streaming on by default, through the real gateway with the Telegram and Slack stand-ins and the
 * OpenAI stand-in, with no streaming or progress setting at all: the reply streams as a draft (Telegram private chat)
 * or as one message edited in place (Slack); while the model writes a tool call's arguments the preview shows
 * "🔧 current_time …" (the tool_call_delta event); the tool's progress line is shown; the answer arrives once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { turnStep } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { allSlackRepliesIn, slackEnv } from './helpers/slack.js';

const ANSWER = 'It is a quarter past noon in Amsterdam, which leaves plenty of time for lunch before the afternoon meeting starts.';
/** Arguments long enough to stream for a few seconds (8 characters a fragment, a pause between fragments). */
const PADDED_ARGS = `{"timezone":${' '.repeat(160)}"Europe/Amsterdam"}`;
const STREAM_TIMEOUT_MS = 30_000;

function respond(req: RecordedRequest): Step {
  if (turnStep(req) === 0) return { text: 'Let me check.', toolCalls: [{ name: 'current_time', arguments: PADDED_ARGS }], chunkDelayMs: 120 };
  return { text: ANSWER, chunkDelayMs: 120 };
}

describe('streaming by default (no setting)', () => {
  let tg: TelegramFake;
  let slack: SlackFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    [tg, slack, llm] = await Promise.all([startTelegramFake(), startSlackFake(), startFakeOpenAI()]);
    llm.respondWith(respond);
    gw = await startGateway({
      env: {
        ...telegramEnv(tg, llm),
        ...slackEnv(slack, llm, 'socket'),
        // '' is unset: the defaults, not the plain path the test helper keeps for older tests.
        HERALD_STREAMING: '',
        TELEGRAM_TOOL_PROGRESS: '',
        SLACK_TOOL_PROGRESS: '',
      },
    });
    await waitFor(() => gw.logs().some((l) => l.msg === 'slack: ingress started'), { timeoutMs: 20_000, what: 'the Slack ingress' });
  });
  afterAll(async () => {
    await gw?.stop();
    await Promise.all([tg?.close(), slack?.close(), llm?.close()]);
  });

  it('Telegram private chat: drafts as the text arrives, the tool being written, the progress line, the answer once', async () => {
    const chat = 9401;
    tg.injectMessage({ chatId: chat, userId: chat, text: 'what time is it in Amsterdam?' });
    await waitFor(() => repliesIn(tg, chat).includes(ANSWER), { timeoutMs: STREAM_TIMEOUT_MS, what: 'the answer' });
    const drafts = tg.sent.filter((s) => s.method === 'sendMessageDraft' && s.chat_id === String(chat)).map((s) => s.text ?? '');
    // The tool call being written showed in the preview, below the text before it.
    expect(drafts.some((d) => d.startsWith('Let me check.') && d.includes('🔧 current_time …'))).toBe(true);
    // The answer streamed: a draft held part of it, before it was whole.
    expect(drafts.some((d) => d.endsWith('▌') && ANSWER.startsWith(d.slice(0, -2)) && d.length - 2 < ANSWER.length)).toBe(true);
    // The tool's progress line, and the answer sent exactly once.
    expect(repliesIn(tg, chat).some((t) => t.startsWith('⚙️ current_time: Europe/Amsterdam'))).toBe(true);
    expect(repliesIn(tg, chat).filter((t) => t === ANSWER)).toHaveLength(1);
  });

  it('Slack: one message edited in place as the text arrives, the tool being written, the progress line, the answer once', async () => {
    const user = 'U0STREAM';
    const channel = slack.dmChannel(user);
    await slack.dm({ user, text: 'what time is it in Amsterdam?' });
    const final = await waitFor(() => slack.updates.find((u) => u.channel === channel && u.text === ANSWER), {
      timeoutMs: STREAM_TIMEOUT_MS,
      what: 'the streamed message edited into the answer',
    });
    const updates = slack.updates.filter((u) => u.channel === channel);
    expect(updates.some((u) => u.text.startsWith('Let me check.') && u.text.includes('🔧 `current_time` …'))).toBe(true);
    // Edits of the same message held part of the answer before the final one.
    expect(updates.some((u) => u.ts === final.ts && u.text.endsWith('▌') && u.text.length - 2 < ANSWER.length)).toBe(true);
    expect(slack.message(channel, final.ts)?.text).toBe(ANSWER);
    const posts = allSlackRepliesIn(slack, channel);
    expect(posts.some((t) => t.startsWith('⚙️ `current_time: Europe/Amsterdam`'))).toBe(true);
    // Never a second copy of the answer.
    expect(posts.filter((t) => t === ANSWER)).toEqual([]);
  });
});
