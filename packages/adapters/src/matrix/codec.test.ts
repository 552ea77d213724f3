import { describe, expect, it } from 'vitest';
import { isEventId, isRoomId, isUserId, matrixCodec, type MatrixConversation } from './codec.js';

describe('matrixCodec', () => {
  const cases: [string, MatrixConversation][] = [
    ['a room', { roomId: '!abcDEF123:example.org' }],
    ['a room on a server with a port', { roomId: '!abc:matrix.example.org:8448' }],
    ['a thread', { roomId: '!abc:example.org', threadRoot: '$Xy9_-zAbCdEfGhIjKlMnOpQrStUvWxYz0123456789' }],
    ['a thread in a room on a port', { roomId: '!abc:localhost:8008', threadRoot: '$a+b/c' }],
  ];

  it.each(cases)('round-trips %s', (_name, parts) => {
    const id = matrixCodec.encode(parts);
    expect(id.startsWith('matrix:!')).toBe(true);
    expect(matrixCodec.decode(id)).toEqual(parts);
  });

  it('encodes the documented shapes', () => {
    expect(matrixCodec.encode({ roomId: '!r:hs' })).toBe('matrix:!r:hs');
    expect(matrixCodec.encode({ roomId: '!r:hs', threadRoot: '$e' })).toBe('matrix:!r:hs:$e');
  });

  it.each(['slack:C1', 'matrix:', 'matrix:#alias:hs', 'matrix:!nohost', 'matrix:!r:hs:$', 'matrix:!r:hs:$a b', ''])('refuses %j', (id) => {
    expect(() => matrixCodec.decode(id)).toThrow(/Matrix conversation id/);
  });

  it('refuses to encode ids it could not decode', () => {
    expect(() => matrixCodec.encode({ roomId: '!r$x:hs' })).toThrow(/bad room id/);
    expect(() => matrixCodec.encode({ roomId: '!r:hs', threadRoot: 'e' })).toThrow(/bad thread root/);
  });
});

describe('Matrix ids', () => {
  // JSON can carry half of a surrogate pair ("\ud800"); an id holding one cannot go into a URL.
  const halves = ['\ud800', '\udfff', 'a\ud83dz', '\ude00a'];

  it('are not ids with half a surrogate pair in them, wherever it stands', () => {
    for (const h of halves) {
      expect(isRoomId(`!r${h}:hs`), JSON.stringify(h)).toBe(false);
      expect(isEventId(`$e${h}`), JSON.stringify(h)).toBe(false);
      expect(isUserId(`@u${h}:hs`), JSON.stringify(h)).toBe(false);
      expect(() => matrixCodec.encode({ roomId: `!r${h}:hs` })).toThrow(/bad room id/);
    }
  });

  it('may hold characters outside the basic plane (whole surrogate pairs)', () => {
    expect(isRoomId('!r😀:hs')).toBe(true);
    expect(isEventId('$e😀')).toBe(true);
    expect(isUserId('@😀:hs')).toBe(true);
    expect(encodeURIComponent('!r😀:hs')).toBe('!r%F0%9F%98%80%3Ahs');
  });
});
