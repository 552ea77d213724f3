/**
 * The stand-ins' upload routes spoken to on the wire (fetch + FormData, no SDK), for the rules the SDK-driven
 * adapter tests do not reach, and the Ogg helpers they rest on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startDiscordFake, type DiscordFake } from '../discord/index.js';
import { startSlackFake, type SlackFake } from '../slack/index.js';
import { startTelegramFake, type TelegramFake } from '../telegram/index.js';
import { png } from './images.js';
import { oggOpusSilence, readOgg } from './ogg.js';

const open: Array<TelegramFake | DiscordFake | SlackFake> = [];
afterEach(async () => {
  for (const fake of open.splice(0)) await fake.close();
});

function form(fields: Record<string, string>, files: Record<string, [Buffer, string, string?]> = {}): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  for (const [k, [data, name, type]] of Object.entries(files)) f.append(k, new Blob([new Uint8Array(data)], type ? { type } : {}), name);
  return f;
}

describe('Ogg Opus helpers', () => {
  it('write a stream whose duration and CRCs read back; a flipped byte breaks the CRC', () => {
    const ogg = oggOpusSilence(2.5);
    expect(readOgg(ogg)).toEqual({ opus: true, durationSec: 2.5, crcOk: true });
    const broken = Buffer.from(ogg);
    broken[broken.length - 1] ^= 0xff;
    expect(readOgg(broken)?.crcOk).toBe(false);
    expect(readOgg(Buffer.from('RIFF....WAVE'))).toBeNull();
  });
});

describe('Telegram stand-in uploads', () => {
  async function telegram(): Promise<{ call: (method: string, body: FormData) => Promise<{ status: number; json: Record<string, unknown> }> }> {
    const tg = await startTelegramFake();
    open.push(tg);
    tg.injectMessage({ chatId: 5, userId: 5, text: 'hi' });
    return {
      call: async (method, body) => {
        const res = await fetch(`${tg.url}/bot${tg.token}/${method}`, { method: 'POST', body });
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      },
    };
  }

  it('checks photos as Telegram does: dimensions, a missing file; other audio in sendVoice is kept as a document', async () => {
    const { call } = await telegram();
    const wide = await call('sendPhoto', form({ chat_id: '5' }, { photo: [png(2100, 100), 'wide.png'] }));
    expect(wide).toMatchObject({ status: 400, json: { description: 'Bad Request: PHOTO_INVALID_DIMENSIONS' } });
    const none = await call('sendPhoto', form({ chat_id: '5' }));
    expect(none.json.description).toBe('Bad Request: there is no photo in the request');
    const wav = await call('sendVoice', form({ chat_id: '5' }, { voice: [Buffer.from('RIFF\0\0\0\0WAVEfmt '), 'a.wav', 'audio/wav'] }));
    expect(wav.status).toBe(200);
    expect(Object.keys(wav.json.result as object)).toContain('document');
    const voice = await call('sendVoice', form({ chat_id: '5', caption: 'x'.repeat(1025) }, { voice: [oggOpusSilence(1), 'v.ogg'] }));
    expect(voice.json.description).toBe('Bad Request: message caption is too long');
  });
});

describe('Discord stand-in uploads', () => {
  it('wants the attachments the body names, at most 10 files, and takes a file without text', async () => {
    const discord = await startDiscordFake();
    open.push(discord);
    const channel = discord.fixtures.generalChannelId;
    const post = async (body: FormData) => {
      const res = await fetch(`${discord.apiRoot}/v10/channels/${channel}/messages`, {
        method: 'POST',
        headers: { authorization: `Bot ${discord.token}` },
        body,
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const wrongId = await post(form({ payload_json: JSON.stringify({ attachments: [{ id: 3, filename: 'a.png' }] }) }, { 'files[0]': [png(4, 4), 'a.png'] }));
    expect(wrongId).toMatchObject({ status: 400, json: { code: 50035 } });
    const eleven: Record<string, [Buffer, string]> = {};
    for (let i = 0; i < 11; i++) eleven[`files[${i}]`] = [png(2, 2), `${i}.png`];
    expect((await post(form({ payload_json: '{}' }, eleven))).status).toBe(400);
    const alone = await post(
      form({ payload_json: JSON.stringify({ attachments: [{ id: 0, filename: 'a.png' }] }) }, { 'files[0]': [png(4, 4), 'a.png', 'image/png'] }),
    );
    expect(alone.status).toBe(200);
    expect(alone.json).toMatchObject({ content: '', attachments: [{ filename: 'a.png', content_type: 'image/png' }] });
  });
});

describe('Slack stand-in files upload v2', () => {
  it('completes only files that were uploaded; an unknown upload URL is 404', async () => {
    const slack = await startSlackFake();
    open.push(slack);
    const api = async (method: string, args: Record<string, string>) => {
      const res = await fetch(`${slack.apiUrl}${method}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${slack.botToken}` },
        body: new URLSearchParams(args),
      });
      return (await res.json()) as Record<string, unknown>;
    };
    const got = await api('files.getUploadURLExternal', { filename: 'a.txt', length: '5' });
    expect(got).toMatchObject({ ok: true });
    const early = await api('files.completeUploadExternal', { files: JSON.stringify([{ id: got.file_id }]), channel_id: 'D0X' });
    expect(early).toEqual({ ok: false, error: 'file_not_found' });
    expect((await fetch(`${slack.url}/upload/v1/nope`, { method: 'POST', body: 'hello' })).status).toBe(404);
    const up = await fetch(String(got.upload_url), { method: 'POST', body: 'hello' });
    expect(await up.text()).toBe('OK - 5');
    expect(await api('files.completeUploadExternal', { files: JSON.stringify([{ id: got.file_id }]), channel_id: 'D0X' })).toMatchObject({ ok: true });
    expect(slack.files.map((f) => [f.filename, f.data.toString()])).toEqual([['a.txt', 'hello']]);
    expect(await api('files.getUploadURLExternal', { filename: 'a.txt' })).toEqual({ ok: false, error: 'invalid_arguments' });
  });
});
