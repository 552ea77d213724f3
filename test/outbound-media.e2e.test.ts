/**
 * Issue 17, outbound: files and voice replies end to end. One real gateway process serves Telegram, Discord and
 * Slack (Socket Mode) at once, against their stand-ins, the OpenAI stand-in (chat and /v1/audio/speech) and a
 * local file host; each platform gets the same checks, on what its stand-in recorded from its upload API.
 *
 * The scripted model answers by the tag that starts the user's text: `img` calls send_file with a picture, `big`
 * with a PDF larger than the stand-ins' (shrunk) upload limits, `md` answers with a Markdown image; anything else
 * is echoed. The stand-ins' upload limits are set to 256 KB so the "too large" path needs no 50 MB upload.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordFake, type DiscordFake } from './fakes/discord/index.js';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { png } from './fakes/media/images.js';
import { isMp3 } from './fakes/media/mp3.js';
import { readOgg } from './fakes/media/ogg.js';
import { startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { discordEnv, waitForDiscordReady } from './helpers/discord.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { lastUserText, turnStep } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { slackEnv, waitForSlackIngress } from './helpers/slack.js';

const UPLOAD_LIMIT = 256 * 1024;
const CHART = png(64, 48);
const SUNSET = png(32, 32, { rgb: [250, 120, 40] });
const BIG_PDF = Buffer.concat([Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'), Buffer.alloc(400 * 1024, 0x20)]);

let files: Server;
let fileHost = '';
let tg: TelegramFake;
let discord: DiscordFake;
let slack: SlackFake;
let llm: FakeLLM;
let cluster: Cluster;

function sendFile(args: Record<string, unknown>): Step {
  return { toolCalls: [{ name: 'send_file', arguments: JSON.stringify(args) }] };
}

function respond(req: RecordedRequest): Step {
  const text = lastUserText(req);
  const tag = text.split(/\s+/)[0];
  const first = turnStep(req) === 0;
  if (tag === 'img') return first ? sendFile({ url: `${fileHost}/chart.png`, caption: 'Monthly sales' }) : { text: 'Here is the chart.' };
  if (tag === 'big') return first ? sendFile({ url: `${fileHost}/report.pdf` }) : { text: 'Sending the report.' };
  if (tag === 'md') return { text: `Look at this:\n\n![Sunset over the bay](${fileHost}/sunset.png)\n\nNice, right?` };
  return { text: `re: ${text}` };
}

/** One platform as a user sees it: say something, read the bot's texts and the files it uploaded there. */
interface Chat {
  name: 'telegram' | 'discord' | 'slack';
  say(text: string): Promise<void>;
  texts(): string[];
  uploads(): Array<{ name: string; data: Buffer; caption?: string; how: string }>;
}

function telegramChat(chatId: number): Chat {
  return {
    name: 'telegram',
    say: async (text) => void tg.injectMessage({ chatId, userId: chatId, text }),
    texts: () => repliesIn(tg, chatId),
    uploads: () =>
      tg.sent
        .filter((s) => s.chat_id === String(chatId) && s.file)
        .map((s) => ({ name: s.file!.name, data: s.file!.data, caption: s.caption, how: `${s.method}:${s.file!.shownAs}` })),
  };
}

function discordChat(): Chat {
  const dm = discord.openDm(discord.fixtures.alice);
  return {
    name: 'discord',
    say: async (content) => void discord.postUserMessage({ channelId: dm, author: discord.fixtures.alice, content }),
    texts: () => discord.sent.filter((s) => s.channelId === dm && !s.files).map((s) => s.content),
    uploads: () =>
      discord.sent
        .filter((s) => s.channelId === dm && s.files)
        .map((s) => ({ name: s.files![0].filename, data: s.files![0].data, caption: s.content || undefined, how: `attachment:${s.files![0].contentType}` })),
  };
}

function slackChat(user: string): Chat {
  const channel = slack.dmChannel(user);
  return {
    name: 'slack',
    // Commands go the way Slack users type them: the /herald slash command.
    say: async (text) => void (text.startsWith('/') ? slack.slashCommand({ user, text: text.slice(1) }) : slack.dm({ user, text })),
    texts: () => slack.sent.filter((s) => s.channel === channel).map((s) => s.text),
    uploads: () =>
      slack.files
        .filter((f) => f.channel === channel)
        .map((f) => ({ name: f.filename, data: f.data, caption: f.initialComment, how: 'files.completeUploadExternal' })),
  };
}

async function ask(chat: Chat, text: string, expectReply: (texts: string[]) => boolean): Promise<void> {
  await chat.say(text);
  await waitFor(() => expectReply(chat.texts()), {
    timeoutMs: 30_000,
    what: `${chat.name}: the answer to "${text}" (so far: ${JSON.stringify(chat.texts())})`,
  });
}

/** The session's API calls, as /usage reports them. */
/** The conversation's API calls and estimated cost, as /usage shows them. */
async function usageOf(chat: Chat): Promise<{ apiCalls: number; costUsd: number }> {
  const reports = (): string[] => chat.texts().filter((x) => x.includes('API calls:'));
  const seen = reports().length;
  await ask(chat, '/usage', () => reports().length > seen);
  const report = reports().at(-1) ?? '';
  return {
    apiCalls: Number(/API calls: ([\d,]+)/.exec(report)?.[1]?.replace(/,/g, '') ?? NaN),
    costUsd: Number(/Estimated cost of this conversation: \$([\d.]+)/.exec(report)?.[1] ?? NaN),
  };
}

beforeAll(async () => {
  files = createServer((req, res) => {
    if (req.url === '/chart.png') res.writeHead(200, { 'content-type': 'image/png' }).end(CHART);
    else if (req.url === '/sunset.png') res.writeHead(200, { 'content-type': 'image/png' }).end(SUNSET);
    else if (req.url === '/report.pdf') res.writeHead(200, { 'content-type': 'application/pdf' }).end(BIG_PDF);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  fileHost = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  tg = await startTelegramFake({ uploadLimits: { requestBytes: UPLOAD_LIMIT } });
  discord = await startDiscordFake({ uploadLimitBytes: UPLOAD_LIMIT });
  slack = await startSlackFake({ maxFileBytes: UPLOAD_LIMIT });
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  cluster = await startCluster({
    workers: 0,
    env: {
      ...telegramEnv(tg, llm),
      ...discordEnv(discord, llm),
      ...slackEnv(slack, llm, 'socket'),
      // The file host is on 127.0.0.1; a real deployment keeps this off (public addresses only).
      HERALD_FETCH_ALLOW_PRIVATE: 'true',
      HERALD_TTS_MODEL: 'openai:gpt-4o-mini-tts',
      HERALD_TTS_VOICE: 'nova',
      // The chat model free and speech dear, so a voice reply's price stands out in the conversation's cost.
      HERALD_PRICES: JSON.stringify({ 'gpt-4.1-mini': { input: 0, output: 0 }, 'gpt-4o-mini-tts': { input: 0, output: 0, per_million_chars: 100_000 } }),
    },
  });
  await waitForDiscordReady(cluster.ingress);
  await waitForSlackIngress(slack, cluster, 'socket');
});

afterAll(async () => {
  await cluster?.stop();
  await Promise.all([llm?.close(), tg?.close(), discord?.close(), slack?.close()]);
  files?.closeAllConnections();
  await new Promise((resolve) => files?.close(resolve));
});

const chats: Array<[string, () => Chat]> = [
  ['telegram', () => telegramChat(9001)],
  ['discord', () => discordChat()],
  ['slack', () => slackChat('U0OUTBOUND')],
];

describe.each(chats)('outbound files and voice replies on %s (real gateway)', (name, makeChat) => {
  let chat: Chat;
  beforeAll(() => {
    chat = makeChat();
  });

  it('a picture the agent sends with send_file arrives through the upload API, after the text, bytes intact', async () => {
    await ask(chat, 'img chart please', (t) => t.includes('Here is the chart.'));
    const [upload] = await waitFor(() => (chat.uploads().length === 1 ? chat.uploads() : null), { what: 'the picture' });
    expect(upload).toMatchObject({ name: 'chart.png', caption: 'Monthly sales' });
    expect(upload.data.equals(CHART)).toBe(true);
    expect(upload.how).toBe({ telegram: 'sendPhoto:photo', discord: 'attachment:image/png', slack: 'files.completeUploadExternal' }[name]);
  });

  it('a Markdown image in the answer is sent as a picture and taken out of the text', async () => {
    const before = chat.uploads().length;
    await ask(chat, 'md show me', (t) => t.some((x) => x.startsWith('Look at this:')));
    expect(chat.texts().find((x) => x.startsWith('Look at this:'))).toMatch(/^Look at this:\n\nNice, right\?$/);
    const upload = await waitFor(() => chat.uploads()[before], { what: 'the sunset picture' });
    expect(upload).toMatchObject({ name: 'sunset.png', caption: 'Sunset over the bay' });
    expect(upload.data.equals(SUNSET)).toBe(true);
  });

  it('a file too large for the platform: the text still comes, then one line naming the file and why', async () => {
    const before = chat.uploads().length;
    const where = { telegram: 'Telegram', discord: 'Discord', slack: 'Slack' }[name];
    const notice = `⚠️ I could not send “report.pdf” (400.0 KB): it is larger than ${where} accepts from bots here.`;
    await ask(chat, 'big send the report', (t) => t.includes(notice));
    const texts = chat.texts();
    expect(texts.indexOf('Sending the report.')).toBeGreaterThanOrEqual(0);
    expect(texts.indexOf('Sending the report.')).toBeLessThan(texts.indexOf(notice));
    expect(chat.uploads()).toHaveLength(before);
  });

  it('/voice on: each answer also comes as a voice reply (Telegram voice note, audio file elsewhere); /voice off stops it', async () => {
    const on = name === 'telegram' ? 'voice note' : 'audio file';
    await ask(chat, '/voice on', (t) => t.some((x) => x.startsWith('🔊 Voice replies on') && x.includes(on)));
    const before = chat.uploads().length;
    const usageBefore = await usageOf(chat);
    await ask(chat, 'tell me a short story', (t) => t.includes('re: tell me a short story'));
    const voice = await waitFor(() => chat.uploads()[before], { what: 'the voice reply' });
    if (name === 'telegram') {
      expect(voice).toMatchObject({ name: 'reply.ogg', how: 'sendVoice:voice' });
      const ogg = readOgg(voice.data);
      expect(ogg).toMatchObject({ opus: true, crcOk: true });
      expect(ogg?.durationSec).toBeGreaterThan(1);
    } else {
      expect(voice.name).toBe('reply.mp3');
      expect(isMp3(voice.data)).toBe(true);
      if (name === 'discord') expect(voice.how).toBe('attachment:audio/mpeg');
    }
    const spoken = llm.speech?.requests().at(-1)?.body;
    expect(spoken).toMatchObject({
      model: 'gpt-4o-mini-tts',
      voice: 'nova',
      input: 're: tell me a short story',
      response_format: name === 'telegram' ? 'opus' : 'mp3',
    });
    // The speech was a model call of the session: counted with the answer's, and priced by the characters read out
    // (25 at $100,000 per million: $2.50).
    const usageAfter = await usageOf(chat);
    expect(usageAfter.apiCalls).toBe(usageBefore.apiCalls + 2);
    expect(usageAfter.costUsd - usageBefore.costUsd).toBeCloseTo(2.5, 4);

    await ask(chat, '/voice off', (t) => t.includes('🔇 Voice replies off.'));
    await ask(chat, 'and now in writing', (t) => t.includes('re: and now in writing'));
    // The turns of a conversation run in order: this answer is there only after the one before it was complete.
    await ask(chat, 'thanks', (t) => t.includes('re: thanks'));
    expect(chat.uploads()).toHaveLength(before + 1);
  });
});

describe('outbound, across platforms', () => {
  it('a short rate limit on an upload is waited out, and the file arrives once (Slack Retry-After)', async () => {
    const chat = slackChat('U0RATELIMIT');
    slack.failNext('files.getUploadURLExternal', 'ratelimited', { retryAfterSec: 1 });
    await ask(chat, 'img again please', (t) => t.includes('Here is the chart.'));
    await waitFor(() => chat.uploads().length === 1, { what: 'the picture after the rate limit' });
    await ask(chat, 'thanks', (t) => t.includes('re: thanks'));
    expect(chat.uploads()).toHaveLength(1);
    expect(slack.calls.filter((c) => c.method === 'files.getUploadURLExternal').length).toBeGreaterThanOrEqual(2);
  });

  it('no token or key reaches the logs', () => {
    const output = cluster.ingress.output.join('\n');
    for (const secret of [tg.token, discord.token, slack.botToken, slack.appToken, 'sk-test']) expect(output).not.toContain(secret);
  });
});
