import { describe, expect, it } from 'vitest';
import { normalizeEvent, type RoomContext } from './normalize.js';

const BOT = '@herald:example.org';
const ROOM = '!room:example.org';
const dm: RoomContext = { roomId: ROOM, botUserId: BOT, botNames: ['herald'], direct: true };
const group: RoomContext = { ...dm, direct: false };

function event(content: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'm.room.message', event_id: '$ev1', sender: '@alice:example.org', origin_server_ts: 1_700_000_000_000, content, ...extra };
}

describe('normalizeEvent', () => {
  it('a DM text: needs no mention', () => {
    const n = normalizeEvent(event({ msgtype: 'm.text', body: 'hello' }), dm);
    expect(n).toMatchObject({
      mentioned: true,
      msg: {
        platform: 'matrix',
        messageId: '$ev1',
        conversationId: `matrix:${ROOM}`,
        chatType: 'dm',
        userId: '@alice:example.org',
        text: 'hello',
        sentAt: 1_700_000_000_000,
      },
    });
  });

  it('a time that is not a number (even an object no number can be made of) is read as now, without throwing', () => {
    const before = Date.now();
    const n = normalizeEvent(event({ msgtype: 'm.text', body: 'hi' }, { origin_server_ts: { valueOf: false, toString: false } }), dm);
    expect(n?.msg.sentAt).toBeGreaterThanOrEqual(before);
  });

  it.each([
    ['m.mentions', { msgtype: 'm.text', body: 'hi there', 'm.mentions': { user_ids: [BOT] } }, 'hi there'],
    [
      'a pill in the HTML',
      { msgtype: 'm.text', body: 'Herald: hi', format: 'org.matrix.custom.html', formatted_body: `<a href="https://matrix.to/#/${BOT}">Herald</a>: hi` },
      'hi',
    ],
    ['the display name leading the body', { msgtype: 'm.text', body: 'herald, what time is it' }, 'what time is it'],
    ['the user id in the body', { msgtype: 'm.text', body: `ask ${BOT} later` }, `ask ${BOT} later`],
  ])('a room message mentioning the bot by %s', (_name, content, text) => {
    expect(normalizeEvent(event(content), group)).toMatchObject({ mentioned: true, msg: { chatType: 'group', text } });
  });

  it('a room message without a mention is not one (a name inside another word is not a mention)', () => {
    expect(normalizeEvent(event({ msgtype: 'm.text', body: 'heraldry is old' }), group)?.mentioned).toBe(false);
  });

  it('a thread message belongs to the thread conversation', () => {
    const n = normalizeEvent(
      event({
        msgtype: 'm.text',
        body: 'in thread',
        'm.relates_to': { rel_type: 'm.thread', event_id: '$root', is_falling_back: true, 'm.in_reply_to': { event_id: '$latest' } },
      }),
      group,
    );
    expect(n).toMatchObject({ threadRoot: '$root', msg: { conversationId: `matrix:${ROOM}:$root`, chatType: 'thread', threadId: '$root' } });
    expect(n?.msg.quoted).toBeUndefined();
  });

  it('a reply with the fallback quote: the quote becomes context and leaves the text', () => {
    const body = `> <${BOT}> the earlier answer\n> second line\n\nmy follow-up`;
    const n = normalizeEvent(event({ msgtype: 'm.text', body, 'm.relates_to': { 'm.in_reply_to': { event_id: '$prev' } } }), dm);
    expect(n?.msg.text).toBe('my follow-up');
    expect(n?.msg.quoted).toEqual({ platformMessageId: '$prev', text: 'the earlier answer\nsecond line', fromBot: true });
    expect(n?.replyToFetch).toBeUndefined();
  });

  it('a reply without a fallback asks for the quoted event', () => {
    const n = normalizeEvent(event({ msgtype: 'm.text', body: 'why?', 'm.relates_to': { 'm.in_reply_to': { event_id: '$prev' } } }), dm);
    expect(n?.replyToFetch).toBe('$prev');
  });

  it('media: an image with a caption, a voice message, a file by its name', () => {
    const image = normalizeEvent(
      event({ msgtype: 'm.image', body: 'look', filename: 'a.png', url: 'mxc://example.org/abc', info: { mimetype: 'image/png', size: 10 } }),
      dm,
    );
    expect(image?.msg).toMatchObject({
      text: 'look',
      attachments: [{ kind: 'image', url: 'mxc://example.org/abc', mimeType: 'image/png', size: 10, name: 'a.png' }],
    });
    const voice = normalizeEvent(event({ msgtype: 'm.audio', body: 'v.ogg', url: 'mxc://example.org/v', 'org.matrix.msc3245.voice': {} }), dm);
    expect(voice?.msg).toMatchObject({ text: '', attachments: [{ kind: 'audio', voice: true }] });
    const file = normalizeEvent(event({ msgtype: 'm.file', body: 'report.pdf', url: 'mxc://example.org/f', info: { mimetype: 'application/pdf' } }), dm);
    expect(file?.msg).toMatchObject({ text: '', attachments: [{ kind: 'file', name: 'report.pdf' }] });
    // A size that is no number (an object Number() cannot even convert) is no size; the file is still taken.
    for (const size of [{ toString: 0 }, '12', [], null]) {
      const odd = normalizeEvent(event({ msgtype: 'm.file', body: 'f.bin', url: 'mxc://example.org/g', info: { size } }), dm);
      expect(odd?.msg.attachments, JSON.stringify(size)).toEqual([
        { kind: 'file', url: 'mxc://example.org/g', fileId: 'example.org/g', name: 'f.bin', ...(size === '12' && { size: 12 }) },
      ]);
    }
  });

  it.each([
    ['the bot itself', event({ msgtype: 'm.text', body: 'x' }, { sender: BOT })],
    ['an edit', event({ msgtype: 'm.text', body: '* x', 'm.relates_to': { rel_type: 'm.replace', event_id: '$a' } })],
    ['a notice', event({ msgtype: 'm.notice', body: 'x' })],
    ['state', { type: 'm.room.name', event_id: '$e', sender: '@a:b', content: { name: 'x' } }],
    ['no content', event({}, { content: 'nope' })],
    ['a bad event id', event({ msgtype: 'm.text', body: 'x' }, { event_id: 'e' })],
    ['a bad sender', event({ msgtype: 'm.text', body: 'x' }, { sender: 'alice' })],
    ['media without an mxc URL', event({ msgtype: 'm.image', body: 'x', url: 'https://evil/x' })],
    ['a redacted message', event({})],
    ['not an object', 7],
  ])('skips %s', (_name, ev) => {
    expect(normalizeEvent(ev, dm)).toBeNull();
  });
});
