/**
 * Issue 17, inbound: photos, voice notes, PDFs and oversized files from Telegram, Discord and Slack, through one
 * real gateway process (telegraf, discord.js and @slack/bolt inside it) against the platform stand-ins, which serve
 * the files the way the platforms do (Telegram getFile + /file/bot<token>/…, Discord's signed CDN URLs, Slack's
 * url_private behind the bot token), and the OpenAI and Anthropic stand-ins, which check and record image parts.
 * Speech-to-text goes through the OpenAI stand-in's multipart /v1/audio/transcriptions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CDN_URL_LIFETIME_S } from './fakes/discord/cdn.js';
import { startDiscordFake, type DiscordFake } from './fakes/discord/index.js';
import {
  defaultTranscript,
  imagesOf,
  startFakeAnthropic,
  startFakeOpenAI,
  transcriptionBilling,
  type FakeLLM,
  type FakeOpenAI,
  type RecordedRequest,
} from './fakes/llm/index.js';
import { startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { jpegOf } from './fakes/telegram/inject.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { waitForDiscordReady } from './helpers/discord.js';
import { makePdf, PNG_1X1 } from './helpers/files.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { sessionUsage, storedUserMessages } from './helpers/store-rows.js';
import { slackRepliesIn, waitForSlackIngress } from './helpers/slack.js';
import { repliesIn } from './helpers/telegram.js';

const MAX_FILE_BYTES = 100_000;
const BIG_FILE_BYTES = 150_000;
const REPLY_TIMEOUT_MS = 20_000;

/** One platform as a person uses it: send things into a fresh conversation, read what the bot wrote there. */
interface Chat {
  photo(caption: string): Promise<Buffer>;
  voice(words: string): Promise<void>;
  file(name: string, mimeType: string, content: Buffer, caption: string): Promise<void>;
  text(words: string): Promise<void>;
  replies(): string[];
}

interface Platform {
  name: string;
  /** A new conversation (its own session). */
  chat(): Promise<Chat>;
  /** How many times the file service was asked for this conversation's files. */
  downloads(): number;
}

let tg: TelegramFake;
let discord: DiscordFake;
let slack: SlackFake;
let openai: FakeOpenAI;
let anthropic: FakeLLM;
let cluster: Cluster;

let nextChat = 0;

const telegram: Platform = {
  name: 'telegram',
  async chat() {
    const chatId = 91_000 + ++nextChat;
    return {
      async photo(caption) {
        const content = jpegOf(3000);
        tg.injectMessage({ chatId, userId: chatId, caption, photo: { content } });
        return content;
      },
      async voice(words) {
        tg.injectMessage({ chatId, userId: chatId, voice: { content: `OggS ${words}` } });
      },
      async file(name, mimeType, content, caption) {
        tg.injectMessage({ chatId, userId: chatId, caption, document: { fileName: name, mimeType, content } });
      },
      async text(words) {
        tg.injectMessage({ chatId, userId: chatId, text: words });
      },
      replies: () => repliesIn(tg, chatId),
    };
  },
  downloads: () => tg.callsOf('getFile').length,
};

const discordPlatform: Platform = {
  name: 'discord',
  async chat() {
    const author = discord.world.addUser({ id: `4${String(Date.now()).slice(-9)}${String(++nextChat).padStart(6, '0')}`, username: `user${nextChat}` });
    const dm = discord.openDm(author);
    const post = (content: string, attachments?: Parameters<DiscordFake['postUserMessage']>[0]['attachments']): void =>
      void discord.postUserMessage({ channelId: dm, author, content, ...(attachments && { attachments }) });
    return {
      async photo(caption) {
        post(caption, [{ filename: 'cat.png', contentType: 'image/png', content: PNG_1X1 }]);
        return PNG_1X1;
      },
      async voice(words) {
        post('', [{ filename: 'voice-message.ogg', contentType: 'audio/ogg', content: Buffer.from(`OggS ${words}`), waveform: 'AAAA' }]);
      },
      async file(name, mimeType, content, caption) {
        post(caption, [{ filename: name, contentType: mimeType, content }]);
      },
      async text(words) {
        post(words);
      },
      replies: () => discord.sent.filter((s) => s.channelId === dm).map((s) => s.content),
    };
  },
  downloads: () => discord.cdn.downloads.length,
};

const slackPlatform: Platform = {
  name: 'slack',
  async chat() {
    const user = `U0MEDIA${++nextChat}`;
    let channel = '';
    const send = async (text: string, file?: Parameters<SlackFake['hosted']['share']>[0]): Promise<void> => {
      const d = await slack.dm({ user, text, ...(file && { files: [slack.hosted.share(file, user)] }) });
      channel = d.channel;
    };
    return {
      async photo(caption) {
        await send(caption, { name: 'screenshot.png', mimetype: 'image/png', content: PNG_1X1 });
        return PNG_1X1;
      },
      async voice(words) {
        await send('', { name: 'audio_message.webm', mimetype: 'audio/webm', content: Buffer.from(`OggS ${words}`), subtype: 'slack_audio' });
      },
      async file(name, mimeType, content, caption) {
        await send(caption, { name, mimetype: mimeType, content });
      },
      async text(words) {
        await send(words);
      },
      replies: () => (channel === '' ? [] : slackRepliesIn(slack, channel)),
    };
  },
  downloads: () => slack.hosted.downloads.length,
};

function requestWith(llm: FakeLLM, marker: string): RecordedRequest | undefined {
  return llm.requests.find((r) => (r.path.endsWith('/messages') || r.path.endsWith('/chat/completions') ? lastUserText(r).includes(marker) : false));
}

async function repliesAtLeast(chat: Chat, n: number, what: string): Promise<string[]> {
  return waitFor(() => (chat.replies().length >= n ? chat.replies() : undefined), { timeoutMs: REPLY_TIMEOUT_MS, what });
}

beforeAll(async () => {
  [tg, discord, slack, openai, anthropic] = await Promise.all([
    startTelegramFake(),
    startDiscordFake(),
    startSlackFake(),
    startFakeOpenAI(),
    startFakeAnthropic(),
  ]);
  cluster = await startCluster({
    workers: 0,
    env: {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.url,
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiRoot,
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_APP_TOKEN: slack.appToken,
      SLACK_API_URL: slack.apiUrl,
      HERALD_MODEL: 'openai:gpt-4.1-mini',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: anthropic.url,
      HERALD_STT_MODEL: 'openai:gpt-4o-mini-transcribe',
      HERALD_VISION_MODEL: 'openai:gpt-4.1-mini',
      HERALD_MEDIA_MAX_FILE_BYTES: String(MAX_FILE_BYTES),
      GATEWAY_ALLOW_ALL_USERS: 'true',
    },
  });
  await waitForDiscordReady(cluster.ingress);
  await waitForSlackIngress(slack, cluster, 'socket');
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  await Promise.all([tg?.close(), discord?.close(), slack?.close(), openai?.close(), anthropic?.close()]);
});

describe.each([telegram, discordPlatform, slackPlatform])('media from $name', (platform) => {
  it('a photo with a caption reaches the OpenAI model as an image part next to the caption, and the history keeps a reference, not the bytes', async () => {
    const chat = await platform.chat();
    const marker = `what breed ${platform.name}`;
    const sent = await chat.photo(marker);
    const [reply] = await repliesAtLeast(chat, 1, 'the answer to the photo');
    expect(reply).toContain(marker);
    const req = requestWith(openai, marker)!;
    const images = imagesOf(req);
    expect(images).toHaveLength(1);
    expect(images[0].bytes.equals(sent)).toBe(true);
    expect(lastUserText(req)).toContain(marker);
    const [stored] = storedUserMessages(cluster.dbPath, marker);
    const refs = JSON.parse(stored.attachments ?? '[]') as Array<Record<string, unknown>>;
    expect(refs).toEqual([expect.objectContaining({ platform: platform.name, kind: 'image', fileId: expect.any(String) })]);
    expect(stored.content).not.toContain(sent.toString('base64'));
    if (platform.name === 'telegram') expect(JSON.stringify(refs)).not.toContain(tg.token);
  });

  it('a photo reaches an Anthropic model as a base64 image block', async () => {
    const chat = await platform.chat();
    await chat.text('/model anthropic:claude-sonnet-4-5');
    await repliesAtLeast(chat, 1, 'the model switch');
    const marker = `describe this ${platform.name}`;
    const sent = await chat.photo(marker);
    const replies = await repliesAtLeast(chat, 2, 'the answer to the photo');
    expect(replies[1]).toContain(marker);
    const req = requestWith(anthropic, marker)!;
    const images = imagesOf(req);
    expect(images).toHaveLength(1);
    expect(images[0].bytes.equals(sent)).toBe(true);
    expect(images[0].mimeType).toBe(platform.name === 'telegram' ? 'image/jpeg' : 'image/png');
  });

  it('a voice note reaches the model as its transcript', async () => {
    const chat = await platform.chat();
    const words = `remind me to water the plants ${platform.name}`;
    await chat.voice(words);
    const [reply] = await repliesAtLeast(chat, 1, 'the answer to the voice note');
    expect(reply).toContain(`transcribed: ${words}`);
    expect(openai.transcriptions.some((t) => t.model === 'gpt-4o-mini-transcribe' && t.bytes.toString().includes(words))).toBe(true);
    const answered = requestWith(openai, words)!;
    expect(lastUserText(answered)).toMatch(/\[Voice message, transcribed: remind me/);
    // The transcription is counted in the session's usage: its call and its tokens (billed by the token).
    const heard = openai.transcriptions.find((t) => t.bytes.toString().includes(words))!;
    const usage = await waitFor(
      () => {
        const u = sessionUsage(cluster.dbPath, { marker: words });
        return u?.apiCalls === 2 ? u : undefined;
      },
      { timeoutMs: REPLY_TIMEOUT_MS, what: 'the usage recorded' },
    );
    expect(usage.inputTokens).toBeGreaterThan(Math.ceil(heard.bytes.length / 100));
    expect(usage.outputTokens).toBeGreaterThanOrEqual(words.split(' ').length);
    // And in its cost: the answer at gpt-4.1-mini's built-in prices ($0.40 in, $0.10 cached, $1.60 out per
    // million), the transcription at gpt-4o-mini-transcribe's ($3 audio in, $5 out), not at gpt-4o's.
    const stt = transcriptionBilling(heard, words) as { input: number; output: number };
    const answer = { input: usage.inputTokens - stt.input, output: usage.outputTokens - stt.output };
    const cost = (answer.input * 0.4 + usage.cacheReadTokens * 0.1 + usage.cacheWriteTokens * 0.4 + answer.output * 1.6 + stt.input * 3 + stt.output * 5) / 1e6;
    expect(usage.costUsd).toBeCloseTo(cost, 12);
  });

  it('a PDF reaches the model as its text', async () => {
    const chat = await platform.chat();
    const pdf = makePdf([`Invoice ${platform.name} 4711`, 'Total due: 99 EUR']);
    await chat.file('invoice.pdf', 'application/pdf', pdf, `sum it up ${platform.name}`);
    await repliesAtLeast(chat, 1, 'the answer to the PDF');
    const text = lastUserText(requestWith(openai, `sum it up ${platform.name}`)!);
    expect(text).toContain('[Document "invoice.pdf", 2 pages]');
    expect(text).toContain(`Invoice ${platform.name} 4711`);
    expect(text).toContain('Total due: 99 EUR');
  });

  it('an oversized file gets a reply naming it and the limit, is not downloaded, and the caption is still answered', async () => {
    const chat = await platform.chat();
    const downloadsBefore = platform.downloads();
    const caption = `and here is the log ${platform.name}`;
    await chat.file('huge.log', 'text/plain', Buffer.alloc(BIG_FILE_BYTES, 'x'), caption);
    const replies = await repliesAtLeast(chat, 2, 'the notice and the answer');
    expect(replies[0]).toBe('⚠️ huge.log: too large (150 KB; the limit is 100 KB).');
    expect(replies[1]).toContain(caption);
    expect(platform.downloads()).toBe(downloadsBefore);
  });
});

describe('media: models, limits and failures', () => {
  it("a model without vision gets the vision model's description of the photo instead of the picture", async () => {
    const chat = await telegram.chat();
    await chat.text('/model openai:gpt-3.5-turbo');
    await repliesAtLeast(chat, 1, 'the model switch');
    openai.script({ text: 'A red square on white.' });
    await chat.photo('what colour is it');
    const replies = await repliesAtLeast(chat, 2, 'the answer');
    const described = openai.requests.find(
      (r) => r.body.model === 'gpt-4.1-mini' && imagesOf(r).length === 1 && lastUserText(r).startsWith('Describe this image'),
    )!;
    expect(described).toBeDefined();
    const answered = openai.requests.find((r) => r.body.model === 'gpt-3.5-turbo' && lastUserText(r).includes('what colour is it'))!;
    expect(answered).toBeDefined();
    expect(imagesOf(answered)).toHaveLength(0);
    expect(lastUserText(answered)).toContain('described it: A red square on white.');
    expect(replies[1]).toContain('what colour is it');
    // The description was a model call of this session: counted with the answer's.
    const usage = await waitFor(
      () => {
        const u = sessionUsage(cluster.dbPath, { marker: 'what colour is it' });
        return u?.apiCalls === 2 ? u : undefined;
      },
      { timeoutMs: REPLY_TIMEOUT_MS, what: 'the usage recorded' },
    );
    expect(usage.inputTokens).toBeGreaterThan(0);
  });

  it('an album of photos split across two polls is one turn with every picture', async () => {
    const chatId = 95_001;
    const first = tg.injectMessage({ chatId, userId: chatId, caption: 'our holiday', photo: true, mediaGroupId: 'album-1' });
    // The first part is fetched (and handed over) on its own; the others come with a later getUpdates.
    await waitFor(() => tg.handedOut.has(first.update_id as number), { timeoutMs: REPLY_TIMEOUT_MS, what: 'the first part polled' });
    tg.injectMessage({ chatId, userId: chatId, photo: true, mediaGroupId: 'album-1' });
    tg.injectMessage({ chatId, userId: chatId, photo: true, mediaGroupId: 'album-1' });
    await waitFor(() => repliesIn(tg, chatId).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the album answer' });
    const req = requestWith(openai, 'our holiday')!;
    expect(imagesOf(req)).toHaveLength(3);
    expect(lastUserText(req)).toContain('[Image: photo 3]');
    // One turn: the model was asked about the album once.
    expect(openai.requests.filter((r) => lastUserText(r).includes('our holiday'))).toHaveLength(1);
  });

  it('several files in one Slack message are one turn: the picture shown, the text file read', async () => {
    const user = 'U0MEDIAMULTI';
    const d = await slack.dm({
      user,
      text: 'compare these',
      files: [
        slack.hosted.share({ name: 'chart.png', mimetype: 'image/png', content: PNG_1X1 }, user),
        slack.hosted.share({ name: 'data.csv', mimetype: 'text/csv', content: Buffer.from('month,sales\njan,10\n') }, user),
      ],
    });
    await waitFor(() => slackRepliesIn(slack, d.channel).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the answer' });
    const asked = openai.requests.filter((r) => lastUserText(r).includes('compare these'));
    expect(asked).toHaveLength(1);
    expect(imagesOf(asked[0])).toHaveLength(1);
    expect(lastUserText(asked[0])).toContain('[Image: chart.png]\n[Document "data.csv"]\nmonth,sales\njan,10\n[End of "data.csv"]');
  });

  it('a Slack Connect file (only its id in the event: file_access check_file_info) is looked up with files.info and shown', async () => {
    const user = 'U0MEDIACONNECT';
    const stub = slack.hosted.share({ name: 'partner-chart.png', mimetype: 'image/png', content: PNG_1X1, fileAccess: 'check_file_info' }, user);
    expect(stub.url_private).toBeUndefined();
    const d = await slack.dm({ user, text: 'what does the partner chart show', files: [stub] });
    await waitFor(() => slackRepliesIn(slack, d.channel).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the answer' });
    expect(slack.calls.filter((c) => c.method === 'files.info' && c.args.file === stub.id)).not.toHaveLength(0);
    const req = requestWith(openai, 'what does the partner chart show')!;
    expect(imagesOf(req)).toHaveLength(1);
    expect(imagesOf(req)[0].bytes.equals(PNG_1X1)).toBe(true);
    expect(lastUserText(req)).toContain('[Image: partner-chart.png]');
    const [stored] = storedUserMessages(cluster.dbPath, 'what does the partner chart show');
    expect(JSON.parse(stored.attachments ?? '[]')).toEqual([
      expect.objectContaining({ platform: 'slack', kind: 'image', fileId: stub.id, name: 'partner-chart.png' }),
    ]);
  });

  it('a corrupt PDF and an unknown file type each get a reply naming the file, and the text is still answered', async () => {
    const chat = await telegram.chat();
    await chat.file('broken.pdf', 'application/pdf', Buffer.from('%PDF-1.4 this is not really a pdf'), 'check broken');
    const replies = await repliesAtLeast(chat, 2, 'notice and answer');
    expect(replies[0]).toBe('⚠️ broken.pdf: the file looks damaged and could not be read.');
    expect(replies[1]).toContain('check broken');
    await chat.file('setup.exe', 'application/x-msdownload', Buffer.from('MZ'), 'is this safe');
    const more = await repliesAtLeast(chat, 4, 'second notice and answer');
    expect(more[2]).toBe('⚠️ setup.exe: this type of file cannot be read (application/x-msdownload).');
    expect(more[3]).toContain('is this safe');
  });

  it('a file alone that cannot be used is answered with the reason, without asking the model', async () => {
    const chat = await telegram.chat();
    const before = openai.requests.length;
    await chat.file('movie.mkv', 'video/x-matroska', Buffer.from('x'), '');
    const [reply] = await repliesAtLeast(chat, 1, 'the notice');
    expect(reply).toBe('⚠️ movie.mkv: videos are not supported.');
    expect(openai.requests.slice(before).some((r) => lastUserText(r).includes('movie.mkv'))).toBe(false);
  });

  it('a voice note with no speech in it is answered with the reason; its transcription is counted and priced once', async () => {
    const chatId = 91_900;
    openai.transcribeWith((t) => (t.bytes.toString().includes('only wind') ? '' : defaultTranscript(t)));
    const before = openai.requests.length;
    tg.injectMessage({ chatId, userId: chatId, voice: { content: 'OggS only wind' } });
    await waitFor(() => repliesIn(tg, chatId)[0], { timeoutMs: REPLY_TIMEOUT_MS, what: 'the notice' });
    expect(repliesIn(tg, chatId)).toEqual(['⚠️ voice message: no speech could be made out in it.']);
    expect(openai.requests.slice(before).map((r) => r.path)).toEqual(['/v1/audio/transcriptions']); // the model was not asked
    const heard = openai.transcriptions.find((t) => t.bytes.toString().includes('only wind'))!;
    const stt = transcriptionBilling(heard, '') as { input: number; output: number };
    // gpt-4o-mini-transcribe: $3 per million audio tokens in.
    expect(sessionUsage(cluster.dbPath, { source: 'telegram', chat: String(chatId) })).toEqual({
      inputTokens: stt.input,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: (stt.input * 3) / 1e6,
      apiCalls: 1,
    });
  });

  it('a failed download is reported and logged without the file URL or the bot token', async () => {
    const chat = await telegram.chat();
    tg.failNext('getFile', { error_code: 400, description: 'Bad Request: wrong file_id or the file is temporarily unavailable' });
    await chat.photo('look at this');
    const replies = await repliesAtLeast(chat, 2, 'notice and answer');
    expect(replies[0]).toMatch(/^⚠️ photo: /);
    expect(replies[1]).toContain('look at this');
    const logged = await cluster.ingress.waitForLog((l) => l.msg === 'attachment not used');
    expect(JSON.stringify(logged)).not.toContain(tg.token);
    expect(cluster.ingress.output.join('\n')).not.toContain(tg.token);
  });

  it('/retry a day later on Discord: the expired CDN link is refreshed through the REST API and the photo shown again', async () => {
    const chat = await discordPlatform.chat();
    const sent = await chat.photo('what is in the old picture');
    await repliesAtLeast(chat, 1, 'the first answer');
    const refreshesBefore = discord.requests.filter((r) => r.route === 'refreshAttachmentUrls').length;
    discord.cdn.skewS = CDN_URL_LIFETIME_S + 3600; // the CDN's clock a day on: the stored link has expired
    try {
      await chat.text('/retry');
      await repliesAtLeast(chat, 2, 'the retried answer');
    } finally {
      discord.cdn.skewS = 0;
    }
    const asked = openai.requests.filter((r) => lastUserText(r).includes('what is in the old picture'));
    expect(asked).toHaveLength(2);
    expect(imagesOf(asked[1])).toHaveLength(1);
    expect(imagesOf(asked[1])[0].bytes.equals(sent)).toBe(true);
    expect(discord.requests.filter((r) => r.route === 'refreshAttachmentUrls' && r.status === 200).length).toBe(refreshesBefore + 1);
    expect(chat.replies().some((r) => r.startsWith('⚠️'))).toBe(false);
  });

  it('/retry fetches the photo again and shows it to the model once more', async () => {
    const chat = await telegram.chat();
    const sent = await chat.photo('count the pixels');
    await repliesAtLeast(chat, 1, 'the first answer');
    await chat.text('/retry');
    await repliesAtLeast(chat, 2, 'the retried answer');
    const asked = openai.requests.filter((r) => lastUserText(r).includes('count the pixels'));
    expect(asked).toHaveLength(2);
    expect(imagesOf(asked[1])).toHaveLength(1);
    expect(imagesOf(asked[1])[0].bytes.equals(sent)).toBe(true);
    // Later turns see the note, not the picture.
    await chat.text('and now?');
    await repliesAtLeast(chat, 3, 'the follow-up');
    const later = requestWith(openai, 'and now?')!;
    expect(imagesOf(later)).toHaveLength(0);
    expect(JSON.stringify(later.body.messages)).toContain('[Image: photo]');
  });
});
