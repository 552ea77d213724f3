import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTelegramFake, type TelegramFake } from '../../../../test/fakes/telegram/index.js';
import { FileTooLargeError, NotFoundError } from '../errors.js';
import { TelegramFiles } from './files.js';

let fake: TelegramFake;
let files: TelegramFiles;

beforeEach(async () => {
  fake = await startTelegramFake();
  files = new TelegramFiles({ token: fake.token, apiRoot: fake.url, logger: pino({ level: 'silent' }) });
});
afterEach(() => fake.close());

describe('TelegramFiles', () => {
  it('downloads through getFile and the file route', async () => {
    const f = fake.world.addFile(Buffer.from('%PDF-1.4 body'), 'document', 'pdf');
    const got = await files.download({ kind: 'file', url: `tg-file:${f.fileId}`, fileId: f.fileId }, { maxBytes: 1000 });
    expect(got.bytes.toString()).toBe('%PDF-1.4 body');
    expect(fake.callsOf('getFile')).toHaveLength(1);
  });

  it('does not even call getFile for a file Telegram said is over the limit', async () => {
    const f = fake.world.addFile(Buffer.alloc(10), 'document', 'bin');
    await expect(files.download({ kind: 'file', url: `tg-file:${f.fileId}`, fileId: f.fileId, size: 5000 }, { maxBytes: 1000 })).rejects.toBeInstanceOf(
      FileTooLargeError,
    );
    expect(fake.callsOf('getFile')).toHaveLength(0);
  });

  it('reports getFile\'s "file is too big" as FileTooLargeError, and an unknown file as NotFoundError, without the token', async () => {
    fake.failNext('getFile', { error_code: 400, description: 'Bad Request: file is too big' });
    await expect(files.download({ kind: 'file', url: 'tg-file:x', fileId: 'x' }, { maxBytes: 50_000_000 })).rejects.toBeInstanceOf(FileTooLargeError);
    const err = await files.download({ kind: 'file', url: 'tg-file:nope', fileId: 'nope' }, { maxBytes: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).not.toContain(fake.token);
  });
});
