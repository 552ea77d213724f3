import { describe, expect, it } from 'vitest';
import { contactNames, normalizeMessage, type ChangeContext } from './normalize.js';
import { whatsappCodec } from './codec.js';

const ctx: ChangeContext = { displayPhone: '15550001111', names: new Map([['15551234567', 'Alice']]) };
const base = { from: '15551234567', id: 'wamid.ABC', timestamp: '1700000000' };

describe('normalizeMessage', () => {
  it('a text becomes a DM message of the user, with their profile name and the time Meta gives', () => {
    expect(normalizeMessage({ ...base, type: 'text', text: { body: 'hi' } }, ctx)).toEqual({
      platform: 'whatsapp',
      messageId: 'wamid.ABC',
      conversationId: 'whatsapp:15551234567',
      chatType: 'dm',
      chatId: '15551234567',
      userId: '15551234567',
      userName: 'Alice',
      text: 'hi',
      attachments: [],
      platformMessageId: 'wamid.ABC',
      sentAt: 1_700_000_000_000,
    });
  });

  it('media become attachments by media id (never a URL): pictures, voice notes, documents with their names', () => {
    const image = normalizeMessage({ ...base, type: 'image', image: { id: '111', mime_type: 'image/jpeg', caption: 'cat?' } }, ctx);
    expect(image?.text).toBe('cat?');
    expect(image?.attachments).toEqual([{ kind: 'image', url: 'wa-media:111', fileId: '111', mimeType: 'image/jpeg' }]);
    const voice = normalizeMessage({ ...base, type: 'audio', audio: { id: '222', mime_type: 'audio/ogg; codecs=opus', voice: true } }, ctx);
    expect(voice?.attachments[0]).toMatchObject({ kind: 'audio', voice: true, mimeType: 'audio/ogg; codecs=opus' });
    const doc = normalizeMessage({ ...base, type: 'document', document: { id: '333', filename: 'a.pdf', mime_type: 'application/pdf' } }, ctx);
    expect(doc?.attachments[0]).toMatchObject({ kind: 'file', name: 'a.pdf' });
  });

  it('a reply carries the quoted message, from the bot when it quotes the business number', () => {
    const msg = normalizeMessage({ ...base, type: 'text', text: { body: 'this' }, context: { from: '15550001111', id: 'wamid.BOT' } }, ctx);
    expect(msg?.quoted).toEqual({ platformMessageId: 'wamid.BOT', text: '', fromBot: true });
  });

  it('button and list replies become presses; reactions and locations become short texts; a reaction taken back is nothing', () => {
    expect(
      normalizeMessage({ ...base, type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'c:1', title: 'A' } } }, ctx)?.press,
    ).toEqual({
      data: 'c:1',
    });
    expect(normalizeMessage({ ...base, type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'o:2', title: 'B' } } }, ctx)?.press).toEqual({
      data: 'o:2',
    });
    const reaction = normalizeMessage({ ...base, type: 'reaction', reaction: { message_id: 'wamid.BOT', emoji: '👍' } }, ctx);
    expect(reaction?.text).toBe('[reacted 👍 to your message]');
    expect(reaction?.quoted?.platformMessageId).toBe('wamid.BOT');
    expect(normalizeMessage({ ...base, type: 'reaction', reaction: { message_id: 'wamid.BOT', emoji: '' } }, ctx)).toBeNull();
    expect(normalizeMessage({ ...base, type: 'location', location: { latitude: 52.5, longitude: 13.4, name: 'Berlin' } }, ctx)?.text).toBe(
      '[location: 52.5, 13.4 (Berlin)]',
    );
  });

  it('refuses what is malformed or unsupported instead of guessing', () => {
    for (const bad of [
      null,
      [],
      { ...base, from: '+1 555', type: 'text', text: { body: 'x' } },
      { ...base, id: '', type: 'text', text: { body: 'x' } },
      { ...base, type: 'text', text: { body: 42 } },
      { ...base, type: 'image', image: { id: '../../etc' } },
      { ...base, type: 'unsupported', unsupported: {} },
      { ...base, type: 'constructor' },
      { ...base, type: 'location', location: { latitude: 'x' } },
      { ...base, type: 'location', location: { latitude: { toString: 0 }, longitude: 13.4 } },
    ]) {
      expect(normalizeMessage(bad, ctx)).toBeNull();
    }
    expect(contactNames([{ wa_id: 'x', profile: { name: 'n' } }, 'junk', { wa_id: '15551234567', profile: { name: 'Bob' } }])).toEqual(
      new Map([['15551234567', 'Bob']]),
    );
  });
});

describe('whatsappCodec', () => {
  it('round-trips and refuses what is not a WhatsApp id', () => {
    expect(whatsappCodec.decode(whatsappCodec.encode({ waId: '15551234567' }))).toEqual({ waId: '15551234567' });
    expect(() => whatsappCodec.decode('whatsapp:12ab')).toThrow();
    expect(() => whatsappCodec.decode('slack:C1')).toThrow();
    expect(() => whatsappCodec.decode('whatsapp:15551234567:x')).toThrow();
  });
});
