import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWhatsAppFake, type WhatsAppFake } from '../../../../test/fakes/whatsapp/index.js';
import { AuthError, BadRequestError, FileTooLargeError, NetworkError, RateLimitedError } from '../errors.js';
import type { LastInbound, ServiceWindowMemory } from './config.js';
import { WhatsAppEgress } from './egress.js';
import { WindowClosedError } from './graph-errors.js';

const USER = '15551230001';
const CONV = `whatsapp:${USER}`;
const HOUR = 60 * 60_000;

class MapWindow implements ServiceWindowMemory {
  readonly map = new Map<string, LastInbound>();
  async touch(p: string, w: string, last: LastInbound): Promise<void> {
    this.map.set(`${p}:${w}`, last);
  }
  async last(p: string, w: string): Promise<LastInbound | null> {
    return this.map.get(`${p}:${w}`) ?? null;
  }
}

let wa: WhatsAppFake;
let window: MapWindow;

function egress(opts: { template?: boolean; token?: string } = {}): WhatsAppEgress {
  return new WhatsAppEgress({
    accessToken: opts.token ?? wa.accessToken,
    phoneNumberId: wa.phoneNumberId,
    apiUrl: wa.apiUrl,
    logger: pino({ level: 'silent' }),
    window,
    ...(opts.template && { template: { name: 'herald_follow_up', language: 'en_US' } }),
  });
}

async function userWrote(agoMs: number, messageId = 'wamid.IN1'): Promise<void> {
  wa.openWindow(USER, Date.now() - agoMs);
  await window.touch(wa.phoneNumberId, USER, { at: Date.now() - agoMs, messageId });
}

beforeEach(async () => {
  wa = await startWhatsAppFake();
  window = new MapWindow();
});
afterEach(async () => wa.close());

describe('WhatsApp egress', () => {
  it('sends text as WhatsApp formatting, replying to the message, and returns the wamid', async () => {
    await userWrote(1000);
    const sent = await egress().send(CONV, 'Hello **there**', { replyTo: 'wamid.IN1' });
    expect(wa.sent).toHaveLength(1);
    expect(wa.sent[0]).toMatchObject({ to: USER, type: 'text', text: 'Hello *there*', replyTo: 'wamid.IN1' });
    expect(sent.messageIds).toEqual([wa.sent[0].id]);
  });

  it('puts up to three choices as reply buttons and more as a list, under the last chunk', async () => {
    await userWrote(1000);
    const e = egress();
    await e.send(CONV, 'Which one?', {
      buttons: [
        { label: 'Alpha', data: 'c:1' },
        { label: 'A label far longer than twenty', data: 'c:2' },
      ],
    });
    const buttons = wa.sent[0].body.interactive as { type: string; action: { buttons: { reply: { id: string; title: string } }[] } };
    expect(buttons.type).toBe('button');
    expect(buttons.action.buttons.map((b) => b.reply)).toEqual([
      { id: 'c:1', title: 'Alpha' },
      { id: 'c:2', title: 'A label far longer …' },
    ]);
    const many = Array.from({ length: 5 }, (_, i) => ({ label: `Option ${i}`, data: `o:${i}` }));
    await e.send(CONV, 'Pick', { buttons: many });
    const list = wa.sent[1].body.interactive as { type: string; action: { sections: { rows: { id: string }[] }[] } };
    expect(list.type).toBe('list');
    expect(list.action.sections[0].rows.map((r) => r.id)).toEqual(['o:0', 'o:1', 'o:2', 'o:3', 'o:4']);
  });

  it('a reply too long to carry buttons goes as text, then the buttons under a short prompt', async () => {
    await userWrote(1000);
    await egress().send(CONV, 'x '.repeat(700), { buttons: [{ label: 'Yes', data: 'y' }] });
    expect(wa.sent.map((s) => s.type)).toEqual(['text', 'interactive']);
  });

  it('typing marks the last message read with the typing indicator', async () => {
    await userWrote(1000, 'wamid.LAST');
    await egress().typing(CONV);
    expect(wa.reads).toEqual([{ phoneNumberId: wa.phoneNumberId, messageId: 'wamid.LAST', typing: true }]);
  });

  it('reacts and takes a reaction back', async () => {
    await userWrote(1000);
    const e = egress();
    await e.react(CONV, 'wamid.IN1', '👍');
    await e.react(CONV, 'wamid.IN1', '👍', true);
    expect(wa.sent.map((s) => (s.body.reaction as { emoji: string }).emoji)).toEqual(['👍', '']);
  });

  it('outside the 24-hour window: the template when one is set, else a WindowClosedError, nothing free-form sent', async () => {
    await userWrote(25 * HOUR);
    await expect(egress().send(CONV, 'late')).rejects.toBeInstanceOf(WindowClosedError);
    expect(wa.sent).toEqual([]);
    const sent = await egress({ template: true }).send(CONV, 'late');
    expect(wa.sent.map((s) => s.type)).toEqual(['template']);
    expect(wa.sent[0].body.template).toEqual({ name: 'herald_follow_up', language: { code: 'en_US' } });
    expect(sent.messageIds).toEqual([wa.sent[0].id]);
  });

  it("Graph's 131047 (window closed, unknown to Herald) falls back to the template too", async () => {
    const sent = await egress({ template: true }).send(CONV, 'hello?');
    expect(wa.sent.map((s) => s.type)).toEqual(['template']);
    expect(sent.messageIds).toHaveLength(1);
  });

  it('maps Graph errors to the typed errors delivery acts on', async () => {
    await userWrote(1000);
    const e = egress();
    for (const [status, code, type] of [
      [400, 130429, RateLimitedError],
      [400, 131056, RateLimitedError],
      [400, 80007, RateLimitedError],
      [400, 4, RateLimitedError],
      [429, 0, RateLimitedError],
      [500, 1, NetworkError],
      [400, 131009, BadRequestError],
    ] as const) {
      wa.failNext({ status, code });
      await expect(e.send(CONV, 'x')).rejects.toBeInstanceOf(type);
    }
    await expect(egress({ token: 'EAAGwrong' }).send(CONV, 'x')).rejects.toBeInstanceOf(AuthError);
    wa.failNext({ status: 400, code: 131056 });
    const err = await e.send(CONV, 'x').catch((x: unknown) => x);
    expect((err as RateLimitedError).retryAfterMs).toBe(6_000);
    expect(String(err)).not.toContain(wa.accessToken);
  });

  it('a multi-chunk reply that fails half way reports the chunks that went out', async () => {
    await userWrote(1000);
    const e = egress();
    const text = 'word '.repeat(2_000);
    wa.failNext({ status: 400, code: 130429, after: 1 });
    const first = await e.send(CONV, text).catch((x: unknown) => x);
    expect(first).toBeInstanceOf(RateLimitedError);
    expect((first as RateLimitedError).sentIds).toEqual([wa.sent[0].id]);
    // The retry (as delivery makes it) continues after what went out: nothing is sent twice.
    const rest = await e.send(CONV, text, { skipChunks: 1 });
    expect(rest.messageIds).toEqual(wa.sent.slice(1).map((s) => s.id));
    expect(wa.sent.map((s) => s.text.match(/\((\d+)\/\d+\)$/)?.[1])).toEqual(['1', '2', '3']);
  });

  it('files: a picture as an image, a voice note as audio, anything else as a document; too large refused before upload', async () => {
    await userWrote(1000);
    const e = egress();
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    await e.sendFile(CONV, { kind: 'image', name: 'a.png', mimeType: 'image/png', data: png, caption: 'look' });
    await e.sendFile(CONV, { kind: 'voice', name: 'reply.ogg', mimeType: 'audio/ogg', data: Buffer.from('OggS voice'), caption: 'dropped' });
    await e.sendFile(CONV, { kind: 'file', name: 'notes.txt', mimeType: 'text/plain', data: Buffer.from('hi') });
    await e.sendFile(CONV, { kind: 'image', name: 'a.webp', mimeType: 'image/webp', data: Buffer.from('RIFF') });
    expect(wa.sent.map((s) => s.type)).toEqual(['image', 'audio', 'document', 'document']);
    expect(wa.sent[0].text).toBe('look');
    expect(wa.sent[1].body.audio).not.toHaveProperty('caption');
    expect((wa.sent[2].body.document as { filename: string }).filename).toBe('notes.txt');
    expect([...wa.uploads.values()].map((u) => u.mimeType)).toEqual(['image/png', 'audio/ogg', 'text/plain', 'image/webp']);
    await expect(e.sendFile(CONV, { kind: 'image', name: 'big.png', mimeType: 'image/png', data: Buffer.alloc(6 * 1024 * 1024) })).rejects.toBeInstanceOf(
      FileTooLargeError,
    );
    expect(wa.uploads.size).toBe(4);
  });

  it('cannot edit', async () => {
    await expect(egress().edit()).rejects.toBeInstanceOf(BadRequestError);
  });
});
