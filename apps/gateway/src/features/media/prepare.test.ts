import type { Attachment, PlatformFiles } from '@herald/adapters';
import { FileTooLargeError, NotFoundError } from '@herald/adapters';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { PNG_1X1 } from '../../../../../test/helpers/files.js';
import type { TurnPayload } from '../../queue/mailbox.js';
import { prepareTurnMedia, turnMediaWithoutFiles, type MediaContext } from './prepare.js';
import type { MediaServices } from './services.js';

/** Files served from memory, by URL; a download over the cap fails as a real one would. */
function memoryFiles(content: Record<string, Buffer>): PlatformFiles & { asked: string[] } {
  const asked: string[] = [];
  return {
    platform: 'telegram',
    asked,
    async download(att, opts) {
      asked.push(att.url);
      const bytes = content[att.url];
      if (!bytes) throw new Error('no such file');
      if (bytes.length > opts.maxBytes) throw FileTooLargeError.over('telegram', opts.maxBytes);
      return { bytes };
    },
  };
}

function services(files: PlatformFiles, extra: Partial<MediaServices> = {}): MediaServices {
  return {
    files: () => files,
    transcribe: null,
    describe: null,
    limits: { maxFileBytes: 1000, maxMessageBytes: 1000, maxImageBytes: 1000, maxImages: 2, maxPages: 10, maxChars: 1000 },
    ...extra,
  };
}

const ctx = (vision = true): MediaContext => ({ vision, model: 'openai:gpt-3.5-turbo', signal: new AbortController().signal, log: pino({ level: 'silent' }) });
const payload = (text: string, attachments: Attachment[]): TurnPayload => ({
  text,
  platform: 'telegram',
  conversationId: 'telegram:1',
  chatType: 'dm',
  chatId: '1',
  userId: '1',
  platformMessageId: '1',
  messageId: '1:1',
  attachments,
});
const stt = { name: 'openai', model: 'gpt-4o-mini-transcribe' };
const image = (url: string): Attachment => ({ kind: 'image', url, fileId: url, mimeType: 'image/jpeg' });

describe('prepareTurnMedia', () => {
  it('messages without files come to what a turn without files takes unasked: an empty block list each', async () => {
    const files = memoryFiles({ a: PNG_1X1 });
    const payloads = [payload('one', []), payload('two', [])];
    const media = await prepareTurnMedia(payloads, services(files), ctx());
    expect(media).toEqual(turnMediaWithoutFiles(payloads));
    expect(media.blocks).toEqual([[], []]);
    // With a file in the second message only, the first still has its own (empty) list.
    expect((await prepareTurnMedia([payload('one', []), payload('two', [image('a')])], services(files), ctx())).blocks).toEqual([[], ['[Image: photo]']]);
  });

  it('shows images with their real type, and keeps a reference to each without the bytes', async () => {
    const files = memoryFiles({ a: PNG_1X1 });
    const media = await prepareTurnMedia([payload('look', [image('a')])], services(files), ctx());
    expect(media.images).toEqual([{ mimeType: 'image/png', data: PNG_1X1.toString('base64'), name: 'photo' }]);
    expect(media.blocks).toEqual([['[Image: photo]']]);
    expect(media.attachments).toEqual([{ platform: 'telegram', fileId: 'a', url: 'a', kind: 'image', mimeType: 'image/jpeg' }]);
    expect(media.notices).toEqual([]);
  });

  it('a model without vision and no describer: the image is not fetched and the user is told in one line', async () => {
    const files = memoryFiles({ a: PNG_1X1 });
    const media = await prepareTurnMedia([payload('look', [image('a')])], services(files), ctx(false));
    expect(files.asked).toEqual([]);
    expect(media.notices).toEqual(['⚠️ photo: openai:gpt-3.5-turbo cannot see images, so the picture was not passed on.']);
    expect(media.usable).toBe(false);
  });

  it('no speech-to-text: a voice note gets a reply saying so', async () => {
    const voice: Attachment = { kind: 'audio', url: 'v', mimeType: 'audio/ogg', voice: true };
    const media = await prepareTurnMedia([payload('', [voice])], services(memoryFiles({})), ctx());
    expect(media.notices).toEqual(['⚠️ voice message: voice messages and audio cannot be transcribed here (no speech-to-text model is set up).']);
  });

  it('stops at the number of images and at the bytes of one message, naming each file left out', async () => {
    const big = Buffer.concat([PNG_1X1, Buffer.alloc(600)]);
    const files = memoryFiles({ a: big, b: big, c: PNG_1X1, d: PNG_1X1 });
    const media = await prepareTurnMedia([payload('four', [image('a'), image('b'), image('c'), image('d')])], services(files), ctx());
    expect(media.images).toHaveLength(2);
    expect(media.notices).toEqual([
      '⚠️ photo 2: the files of this message together are over the 1 KB limit.',
      '⚠️ photo 4: only 2 images are taken per message.',
    ]);
    expect(files.asked).toEqual(['a', 'b', 'c']);
  });

  it('transcribes audio and describes images for a model that cannot see, when those are configured', async () => {
    const files = memoryFiles({ a: PNG_1X1, v: Buffer.from('OggS') });
    const media = await prepareTurnMedia(
      [payload('', [image('a'), { kind: 'audio', url: 'v', mimeType: 'audio/ogg', voice: true }])],
      services(files, {
        transcribe: async (_b, name) => ({ text: `heard ${name}`, call: { usage: { input: 50, output: 3, cacheRead: 0, cacheWrite: 0 }, by: stt } }),
        describe: async () => ({
          text: 'a red dot',
          call: { usage: { input: 1600, output: 40, cacheRead: 0, cacheWrite: 0 }, by: { name: 'anthropic', model: 'claude-haiku-4-5' } },
        }),
      }),
      ctx(false),
    );
    expect(media.images).toEqual([]);
    // The model that wrote the description is named to the main model: the chain's fallback here.
    expect(media.blocks[0]).toEqual([
      '[Image: photo. You cannot see it; anthropic:claude-haiku-4-5 described it: a red dot]',
      '[Voice message, transcribed: heard voice.ogg]',
    ]);
    expect(media.usable).toBe(true);
    // Both calls count in the session's usage: the description's tokens and the transcription's.
    expect(media.calls.length).toBe(2);
    expect(media.calls.map((c) => c.usage)).toEqual([
      { input: 1600, output: 40, cacheRead: 0, cacheWrite: 0 },
      { input: 50, output: 3, cacheRead: 0, cacheWrite: 0 },
    ]);
    // Each call names the model that answered (the describer's fallback here), to be priced with it.
    expect(media.calls.map((c) => `${c.by.name}:${c.by.model}`)).toEqual(['anthropic:claude-haiku-4-5', 'openai:gpt-4o-mini-transcribe']);
  });

  it('counts a transcription that heard nothing, and not one that failed', async () => {
    const files = memoryFiles({ v1: Buffer.from('OggS'), v2: Buffer.from('OggS') });
    let calls = 0;
    const media = await prepareTurnMedia(
      [
        payload('', [
          { kind: 'audio', url: 'v1', mimeType: 'audio/ogg', voice: true },
          { kind: 'audio', url: 'v2', mimeType: 'audio/ogg', voice: true },
        ]),
      ],
      services(files, {
        transcribe: async () => {
          if (++calls === 2) throw Object.assign(new Error('upstream'), { status: 500 });
          return {
            text: '',
            call: { usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, audioSeconds: 7, by: { name: 'openai', model: 'whisper-1' } },
          };
        },
      }),
      ctx(),
    );
    expect(media.usable).toBe(false);
    expect(media.calls.length).toBe(1);
    // Billed by the minute: no tokens, the audio's duration.
    expect(media.calls).toEqual([{ by: { name: 'openai', model: 'whisper-1' }, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, audioSeconds: 7 }]);
  });

  it('looks a file sent only by id up before reading it, and reports a file the platform no longer has', async () => {
    const files = {
      ...memoryFiles({ 'https://files/a.png': PNG_1X1 }),
      async resolve(att: Attachment): Promise<Attachment> {
        if (att.fileId !== 'F1') throw new NotFoundError('files.info: file_not_found', 'slack');
        return { kind: 'image', url: 'https://files/a.png', fileId: 'F1', mimeType: 'image/png', name: 'a.png' };
      },
    };
    const stub = (id: string): Attachment => ({ kind: 'file', url: `slack-file:${id}`, fileId: id, unresolved: true });
    const media = await prepareTurnMedia([{ ...payload('look', [stub('F1'), stub('F2')]), platform: 'slack' }], services(files), ctx());
    expect(media.images).toHaveLength(1);
    expect(media.blocks[0][0]).toBe('[Image: a.png]');
    expect(media.attachments[0]).toMatchObject({ kind: 'image', name: 'a.png', fileId: 'F1' });
    expect(media.notices).toEqual(['⚠️ file 2: Slack no longer has the file (it may have expired); please send it again.']);
  });
});
