/** Uploads: @slack/web-api's filesUploadV2 (getUploadURLExternal → upload → completeUploadExternal) against the stand-in. */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { png } from '../../../../test/fakes/media/images.js';
import { DEFAULT_BOT_SCOPES, startSlackFake, type SlackFake } from '../../../../test/fakes/slack/index.js';
import { AuthError, FileTooLargeError, RateLimitedError } from '../errors.js';
import type { OutboundFile } from '../types.js';
import { createSlackEgress, type SlackEgress } from './egress.js';

const logger = pino({ level: 'silent' });
let fake: SlackFake;

async function setup(opts: Parameters<typeof startSlackFake>[0] = {}): Promise<SlackEgress> {
  fake = await startSlackFake(opts);
  return createSlackEgress({ botToken: fake.botToken, apiUrl: fake.apiUrl, logger, maxInlineRetryWaitMs: 50 });
}

afterEach(async () => {
  await fake?.close();
});

const picture = (data = png(20, 20)): OutboundFile => ({ kind: 'image', name: 'chart.png', mimeType: 'image/png', data, caption: 'The **chart**' });
const methods = () => fake.calls.map((c) => c.method);

describe('slack uploads (files upload v2)', () => {
  it('gets an upload URL, uploads the bytes there, completes the upload into the thread with the caption', async () => {
    const egress = await setup();
    const data = png(20, 20);
    const id = await egress.sendFile('slack:C0CHAN:1700000000.000100', picture(data));
    expect(methods()).toEqual(['files.getUploadURLExternal', 'files.completeUploadExternal']);
    expect(fake.calls[0].args).toMatchObject({ filename: 'chart.png', length: String(data.length) });
    const [shared] = fake.files;
    expect(shared).toMatchObject({ id, channel: 'C0CHAN', threadTs: '1700000000.000100', filename: 'chart.png', initialComment: 'The *chart*' });
    expect(shared.data.equals(data)).toBe(true);
  });

  it("a file over the workspace's limit is FileTooLargeError and nothing is shared", async () => {
    const egress = await setup({ maxFileBytes: 1_000 });
    const err = await egress.sendFile('slack:D0USER', picture(png(10, 10, { padTo: 4_000 }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as Error).message).toContain('file_upload_size_restricted');
    expect(fake.files).toEqual([]);
  });

  it('waits out a short Retry-After, and hands a long one to the caller as RateLimitedError', async () => {
    const egress = await setup();
    fake.failNext('files.getUploadURLExternal', 'ratelimited', { retryAfterSec: 0 });
    await egress.sendFile('slack:D0USER', picture());
    expect(fake.files).toHaveLength(1);

    fake.failNext('files.getUploadURLExternal', 'ratelimited', { retryAfterSec: 30 });
    const err = await egress.sendFile('slack:D0USER', picture()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(30_000);
    expect(fake.files).toHaveLength(1);
  });

  it('without the files:write scope it is AuthError (missing_scope)', async () => {
    const egress = await setup({ scopes: DEFAULT_BOT_SCOPES.filter((s) => s !== 'files:write') });
    await expect(egress.sendFile('slack:D0USER', picture())).rejects.toThrow(AuthError);
  });
});
