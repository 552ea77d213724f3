/** Uploads: @discordjs/rest's multipart Create Message (payload_json + files[0]) against the Discord stand-in. */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { discordFailures, startDiscordFake, type DiscordFake, type DiscordFakeOptions } from '../../../../test/fakes/discord/index.js';
import { png } from '../../../../test/fakes/media/images.js';
import { FileTooLargeError, RateLimitedError } from '../errors.js';
import type { OutboundFile, PlatformEgress } from '../types.js';
import { createDiscordEgress } from './egress.js';

const logger = pino({ level: 'silent' });
let fake: DiscordFake;

async function setup(opts: DiscordFakeOptions = {}): Promise<{ egress: PlatformEgress; conv: string; channelId: string }> {
  fake = await startDiscordFake(opts);
  const channelId = fake.fixtures.generalChannelId;
  return {
    egress: createDiscordEgress({ botToken: fake.token, apiUrl: fake.apiRoot, logger, maxInlineRateLimitMs: 100 }),
    conv: `discord:${channelId}`,
    channelId,
  };
}

afterEach(async () => {
  await fake?.close();
});

const picture = (data = png(40, 30)): OutboundFile => ({ kind: 'image', name: 'chart.png', mimeType: 'image/png', data, caption: 'Here is **the chart**' });

describe('discord uploads', () => {
  it('posts the file as a message attachment, bytes intact, the caption as its text, replying to the user', async () => {
    const { egress, conv, channelId } = await setup();
    const question = String(fake.postUserMessage({ channelId, author: fake.fixtures.alice, content: 'chart please' }).id);
    const data = png(40, 30);
    const id = await egress.sendFile(conv, picture(data), { replyTo: question });
    const [sent] = fake.sent;
    expect(sent).toMatchObject({ id, channelId, content: 'Here is **the chart**', message_reference: { message_id: question } });
    expect(sent.files).toHaveLength(1);
    expect(sent.files?.[0]).toMatchObject({ filename: 'chart.png', contentType: 'image/png' });
    expect(sent.files?.[0].data.equals(data)).toBe(true);
    const stored = fake.world.messages.get(id)?.json.attachments as Array<{ filename: string; size: number; url: string }>;
    expect(stored[0]).toMatchObject({ filename: 'chart.png', size: data.length });
    expect(stored[0].url).toMatch(/^https:\/\/cdn\.discordapp\.com\/attachments\//);
  });

  it('the same upload again with the same idempotency key returns the first message instead of posting twice', async () => {
    const { egress, conv } = await setup();
    const first = await egress.sendFile(conv, picture(), { idempotencyKey: 'turn-1:file:0' });
    const again = await egress.sendFile(conv, picture(), { idempotencyKey: 'turn-1:file:0' });
    expect(again).toBe(first);
    expect(fake.sent).toHaveLength(1);
  });

  it("a file over the channel's upload limit is FileTooLargeError (413, code 40005), and nothing is posted", async () => {
    const { egress, conv } = await setup({ uploadLimitBytes: 5_000 });
    const err = await egress.sendFile(conv, picture(png(10, 10, { padTo: 8_000 }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as Error).message).toMatch(/413 Request entity too large \(code 40005\)/);
    expect(fake.sent).toEqual([]);
  });

  it('a rate limit longer than the client waits out reaches the caller as RateLimitedError with retry_after', async () => {
    const { egress, conv } = await setup();
    fake.failNext('createMessage', discordFailures.rateLimited(4));
    const err = await egress.sendFile(conv, picture()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThanOrEqual(4000); // plus the client's own small offset
    expect(fake.sent).toEqual([]);
  });
});
