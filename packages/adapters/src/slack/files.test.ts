import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackFake, type SlackFake } from '../../../../test/fakes/slack/index.js';
import { AuthError } from '../errors.js';
import { SlackFiles } from './files.js';

let fake: SlackFake;

beforeEach(async () => {
  fake = await startSlackFake();
});
afterEach(() => fake.close());

describe('SlackFiles', () => {
  it('downloads url_private with the bot token as a bearer', async () => {
    const file = fake.hosted.share({ name: 'notes.txt', mimetype: 'text/plain', content: Buffer.from('hello') }, 'U1');
    const got = await new SlackFiles({ botToken: fake.botToken }).download({ kind: 'file', url: String(file.url_private_download), fileId: String(file.id) }, { maxBytes: 100 });
    expect(got.bytes.toString()).toBe('hello');
    expect(fake.hosted.downloads.at(-1)).toMatchObject({ status: 200, authorized: true });
  });

  it('counts Slack\'s sign-in page (what a wrong token or a missing files:read scope gets) as refused', async () => {
    const file = fake.hosted.share({ name: 'notes.txt', mimetype: 'text/plain', content: Buffer.from('hello') }, 'U1');
    const att = { kind: 'file' as const, url: String(file.url_private), fileId: String(file.id) };
    await expect(new SlackFiles({ botToken: 'xoxb-wrong' }).download(att, { maxBytes: 100 })).rejects.toBeInstanceOf(AuthError);
    fake.setScopes(['chat:write']);
    await expect(new SlackFiles({ botToken: fake.botToken }).download(att, { maxBytes: 100 })).rejects.toBeInstanceOf(AuthError);
  });
});
