import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackFake, type SlackFake } from '../../../../test/fakes/slack/index.js';
import { AuthError, NotFoundError } from '../errors.js';
import { SlackFiles } from './files.js';

let fake: SlackFake;

beforeEach(async () => {
  fake = await startSlackFake();
});
afterEach(() => fake.close());

describe('SlackFiles', () => {
  it('downloads url_private with the bot token as a bearer', async () => {
    const file = fake.hosted.share({ name: 'notes.txt', mimetype: 'text/plain', content: Buffer.from('hello') }, 'U1');
    const got = await new SlackFiles({ botToken: fake.botToken }).download(
      { kind: 'file', url: String(file.url_private_download), fileId: String(file.id) },
      { maxBytes: 100 },
    );
    expect(got.bytes.toString()).toBe('hello');
    expect(fake.hosted.downloads.at(-1)).toMatchObject({ status: 200, authorized: true });
  });

  it("counts Slack's sign-in page (what a wrong token or a missing files:read scope gets) as refused", async () => {
    const file = fake.hosted.share({ name: 'notes.txt', mimetype: 'text/plain', content: Buffer.from('hello') }, 'U1');
    const att = { kind: 'file' as const, url: String(file.url_private), fileId: String(file.id) };
    await expect(new SlackFiles({ botToken: 'xoxb-wrong' }).download(att, { maxBytes: 100 })).rejects.toBeInstanceOf(AuthError);
    fake.setScopes(['chat:write']);
    await expect(new SlackFiles({ botToken: fake.botToken }).download(att, { maxBytes: 100 })).rejects.toBeInstanceOf(AuthError);
  });

  it('looks a Slack Connect stub (file_access: check_file_info) up with files.info, then downloads the real file', async () => {
    const stub = fake.hosted.share({ name: 'shared.png', mimetype: 'image/png', content: Buffer.from('png bytes'), fileAccess: 'check_file_info' }, 'U1');
    expect(stub).toEqual({ id: expect.any(String), mode: 'file_access', file_access: 'check_file_info', created: 0, timestamp: 0, user: '' });
    const files = new SlackFiles({ botToken: fake.botToken, apiUrl: fake.apiUrl });
    const att = { kind: 'file' as const, url: `slack-file:${String(stub.id)}`, fileId: String(stub.id), unresolved: true };
    expect(await files.resolve(att)).toEqual({
      kind: 'image',
      url: expect.stringContaining('/files-pri/'),
      fileId: stub.id,
      mimeType: 'image/png',
      name: 'shared.png',
      size: 9,
    });
    expect((await files.download(att, { maxBytes: 100 })).bytes.toString()).toBe('png bytes');
    expect(fake.calls.filter((c) => c.method === 'files.info').map((c) => [c.args.file, c.token])).toEqual([
      [stub.id, fake.botToken],
      [stub.id, fake.botToken],
    ]);
  });

  it('a file files.info does not know is NotFoundError; without files:read it is AuthError', async () => {
    const files = new SlackFiles({ botToken: fake.botToken, apiUrl: fake.apiUrl });
    const att = { kind: 'file' as const, url: 'slack-file:FGONE', fileId: 'FGONE', unresolved: true };
    await expect(files.resolve(att)).rejects.toBeInstanceOf(NotFoundError);
    fake.setScopes(['chat:write']);
    await expect(files.resolve(att)).rejects.toBeInstanceOf(AuthError);
  });
});
