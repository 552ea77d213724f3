/** Uploads: telegraf's multipart requests against the stand-in's sendPhoto / sendDocument / sendVoice / sendAudio. */
import { afterEach, describe, expect, it } from 'vitest';
import { png } from '../../../../test/fakes/media/images.js';
import { mp3Silence } from '../../../../test/fakes/media/mp3.js';
import { oggOpusSilence } from '../../../../test/fakes/media/ogg.js';
import { startTelegramFake, telegramErrors, type TelegramFake, type TelegramFakeOptions } from '../../../../test/fakes/telegram/index.js';
import { FileTooLargeError, NotFoundError, RateLimitedError } from '../errors.js';
import type { OutboundFile } from '../types.js';
import { TelegramEgress } from './egress.js';
import { silentLogger } from './test-support.js';

const DM = 4242;
let fake: TelegramFake;
let slept: number[];

async function setup(opts: TelegramFakeOptions = {}): Promise<TelegramEgress> {
  fake = await startTelegramFake(opts);
  slept = [];
  fake.injectMessage({ chatId: DM, userId: DM, text: 'send me a picture' });
  return new TelegramEgress({
    token: fake.token,
    apiRoot: fake.apiRoot,
    logger: silentLogger,
    sleep: async (ms) => void slept.push(ms),
  });
}

afterEach(async () => {
  await fake?.close();
});

const uploads = () => fake.sent.filter((s) => s.file !== undefined);
const picture = (data = png(64, 48), extra: Partial<OutboundFile> = {}): OutboundFile => ({
  kind: 'image',
  name: 'chart.png',
  mimeType: 'image/png',
  data,
  ...extra,
});

describe('telegram uploads', () => {
  it('a picture goes through sendPhoto as multipart, bytes intact, with caption and reply', async () => {
    const egress = await setup();
    const data = png(64, 48);
    const id = await egress.sendFile(`telegram:${DM}`, picture(data, { caption: 'The chart' }), { replyTo: '1' });
    const [sent] = uploads();
    expect(sent).toMatchObject({ method: 'sendPhoto', chat_id: String(DM), caption: 'The chart', reply_to_message_id: 1, message_id: Number(id) });
    expect(sent.file?.shownAs).toBe('photo');
    expect(sent.file?.data.equals(data)).toBe(true);
    // The stand-in keeps the upload like Telegram: the photo can be fetched again by its file_id.
    const photo = fake.world.chats.get(DM)!.messages.get(Number(id))!.photo as Array<{ width: number; height: number }>;
    expect(photo[0]).toMatchObject({ width: 64, height: 48 });
  });

  it('a picture Telegram cannot make a photo of (too big for a photo, not really a picture) goes as a document', async () => {
    const egress = await setup({ uploadLimits: { photoBytes: 2_000 } });
    await egress.sendFile(`telegram:${DM}`, picture(png(32, 32, { padTo: 5_000 })));
    await egress.sendFile(`telegram:${DM}`, picture(Buffer.from('definitely not a PNG'), { name: 'fake.png' }));
    expect(fake.callsOf('sendPhoto').map((c) => c.description)).toEqual(['Bad Request: PHOTO_SAVE_FILE_INVALID', 'Bad Request: IMAGE_PROCESS_FAILED']);
    expect(uploads().map((s) => [s.method, s.file?.name])).toEqual([
      ['sendDocument', 'chart.png'],
      ['sendDocument', 'fake.png'],
    ]);
  });

  it('an OGG/Opus voice reply is a voice note with its duration; an MP3 one goes to the audio player', async () => {
    const egress = await setup();
    await egress.sendFile(`telegram:${DM}`, { kind: 'voice', name: 'reply.ogg', mimeType: 'audio/ogg', data: oggOpusSilence(3) });
    await egress.sendFile(`telegram:${DM}`, { kind: 'voice', name: 'reply.mp3', mimeType: 'audio/mpeg', data: mp3Silence(1) });
    expect(uploads().map((s) => [s.method, s.file?.shownAs, s.file?.duration])).toEqual([
      ['sendVoice', 'voice', 3],
      ['sendAudio', 'audio', undefined],
    ]);
  });

  it('a file over the upload limit is FileTooLargeError (413), and nothing is posted', async () => {
    const egress = await setup({ uploadLimits: { requestBytes: 10_000 } });
    const big: OutboundFile = { kind: 'file', name: 'dump.bin', mimeType: 'application/octet-stream', data: Buffer.alloc(20_000, 1) };
    const err = await egress.sendFile(`telegram:${DM}`, big).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as Error).message).toContain('413 Request Entity Too Large');
    expect(uploads()).toEqual([]);
  });

  it('a 429 is waited out with retry_after; a long one reaches the caller as RateLimitedError', async () => {
    const egress = await setup();
    fake.failNext('sendDocument', telegramErrors.tooManyRequests(2));
    const doc: OutboundFile = { kind: 'file', name: 'notes.txt', mimeType: 'text/plain', data: Buffer.from('hello') };
    await egress.sendFile(`telegram:${DM}`, doc);
    expect(slept).toEqual([2000]);
    expect(uploads()).toHaveLength(1);

    fake.failNext('sendDocument', telegramErrors.tooManyRequests(90));
    const err = await egress.sendFile(`telegram:${DM}`, doc).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(90_000);
  });

  it('a deleted topic falls back to the chat, a deleted reply target is dropped, a long caption is cut', async () => {
    const egress = await setup();
    const forum = -100777;
    const topic = fake.createTopic(forum, 'Pictures');
    fake.failNext('sendPhoto', telegramErrors.threadNotFound());
    await egress.sendFile(`telegram:${forum}:${topic}`, picture(png(8, 8), { caption: 'x'.repeat(1500) }), { replyTo: '999' });
    const [sent] = uploads();
    expect(sent.message_thread_id).toBeUndefined();
    expect(sent.reply_to_message_id).toBeUndefined();
    expect(sent.caption).toHaveLength(1024);
  });

  it('a chat that does not exist is NotFoundError', async () => {
    const egress = await setup();
    await expect(egress.sendFile('telegram:123', picture())).rejects.toThrow(NotFoundError);
  });
});
