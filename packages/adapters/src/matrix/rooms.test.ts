import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MatrixClient } from './client.js';
import { BUTTONS_FIELD } from './content.js';
import { MATRIX_OFFER_MAX_BUTTONS, ProcessMatrixMemory } from './memory.js';
import { RoomBook } from './rooms.js';

const ROOM = '!locked:example.org';
// The refusal never calls the homeserver itself (the caller's send does), so the client is never asked here.
const client = new MatrixClient({ homeserverUrl: 'http://127.0.0.1:9', accessToken: 'token', userId: '@herald:example.org' });

const offersOf = (memory: ProcessMatrixMemory) => ({ saveOffer: memory.saveOffer.bind(memory), loadOffer: memory.loadOffer.bind(memory) });
const silent = pino({ level: 'silent' });
const CONVERSATION = 'matrix:!dm:example.org';
/** The bot's message with buttons as egress sends it (content.ts). */
const offered = (...data: string[]) => ({ msgtype: 'm.text', body: 'Pick one', [BUTTONS_FIELD]: data.map((d) => ({ label: d, data: d })) });

function book(firstRefusal: (roomId: string) => Promise<boolean>): { rooms: RoomBook; sent: string[]; logs: string[] } {
  const logs: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line).msg) });
  const memory = new ProcessMatrixMemory();
  return { rooms: new RoomBook(client, logger, { ...offersOf(memory), firstRefusal }), sent: [], logs };
}

describe('RoomBook.refuseEncrypted', () => {
  it('says the refusal only when the memory has not noted the room before (a restart does not repeat it)', async () => {
    const noted = new Set<string>(['!earlier:example.org']);
    const remembered = async (roomId: string) => !noted.has(roomId) && noted.add(roomId) !== undefined;
    const { rooms, sent } = book(remembered);
    const send = async (roomId: string, text: string) => sent.push(`${roomId} ${text.slice(0, 20)}`);
    await rooms.refuseEncrypted('!earlier:example.org', send);
    await rooms.refuseEncrypted(ROOM, send);
    await rooms.refuseEncrypted(ROOM, send);
    expect(sent).toEqual([`${ROOM} This room is encrypt`]);
    expect(noted.has(ROOM)).toBe(true);
  });

  it('with the memory out of reach, refuses once per process and says why in the log', async () => {
    let asked = 0;
    const { rooms, sent, logs } = book(async () => {
      asked += 1;
      throw new Error('redis away');
    });
    const send = async (roomId: string) => sent.push(roomId);
    await rooms.refuseEncrypted(ROOM, send);
    await rooms.refuseEncrypted(ROOM, send);
    expect(sent).toEqual([ROOM]);
    expect(asked).toBe(1);
    expect(logs).toContain('matrix: refused rooms not readable; refusing as if for the first time');
  });
});

describe('RoomBook offers', () => {
  it('a numbered reply presses a button of the latest offer, also for a new book on the same memory (a restart)', async () => {
    const memory = new ProcessMatrixMemory();
    const before = new RoomBook(client, silent, memory);
    await before.noteOwn(CONVERSATION, offered('hb1:old:0', 'hb1:old:1'));
    await before.noteOwn(CONVERSATION, offered('hb1:new:0', 'hb1:new:1'));
    await before.noteOwn(CONVERSATION, { msgtype: 'm.text', body: 'no buttons here' });
    const after = new RoomBook(client, silent, memory);
    expect(await after.pressOf(CONVERSATION, ' 2. ')).toBe('hb1:new:1');
    expect(await after.pressOf(CONVERSATION, '3')).toBeUndefined();
    expect(await after.pressOf(CONVERSATION, '2 please')).toBeUndefined();
    expect(await after.pressOf('matrix:!other:example.org', '1')).toBeUndefined();
  });

  it('keeps at most the buttons a number can press, and no offer with a button it cannot read', async () => {
    const memory = new ProcessMatrixMemory();
    const rooms = new RoomBook(client, silent, memory);
    await rooms.noteOwn(CONVERSATION, offered(...Array.from({ length: 120 }, (_, i) => `hb1:many:${i}`)));
    expect(await memory.loadOffer(CONVERSATION)).toHaveLength(MATRIX_OFFER_MAX_BUTTONS);
    expect(await rooms.pressOf(CONVERSATION, '99')).toBe('hb1:many:98');
    await rooms.noteOwn('matrix:!long:example.org', offered('x'.repeat(65)));
    await rooms.noteOwn('matrix:!odd:example.org', { [BUTTONS_FIELD]: [{ label: 'a', data: 7 }] });
    expect(await rooms.pressOf('matrix:!long:example.org', '1')).toBeUndefined();
    expect(await rooms.pressOf('matrix:!odd:example.org', '1')).toBeUndefined();
  });

  it('asks the memory only for a reply that is just a number', async () => {
    let asked = 0;
    const memory = new ProcessMatrixMemory();
    const rooms = new RoomBook(client, silent, {
      ...offersOf(memory),
      firstRefusal: memory.firstRefusal.bind(memory),
      loadOffer: async (c) => {
        asked += 1;
        return memory.loadOffer(c);
      },
    });
    await rooms.pressOf(CONVERSATION, 'hello');
    await rooms.pressOf(CONVERSATION, '100');
    expect(asked).toBe(0);
    await rooms.pressOf(CONVERSATION, '1');
    expect(asked).toBe(1);
  });
});

describe('RoomBook.learn', () => {
  it('takes the member count from the summary only when it is a number; an object there (even one that cannot be turned into one) is no count', async () => {
    const { rooms } = book(async () => true);
    rooms.learn('!pair:example.org', [], { 'm.joined_member_count': 2 });
    rooms.learn('!crowd:example.org', [], { 'm.joined_member_count': '5' });
    expect(() => rooms.learn('!odd:example.org', [{ type: 'm.room.encryption' }], { 'm.joined_member_count': { toString: 0 } })).not.toThrow();
    // Known from the summaries: no request (the client's homeserver does not answer).
    expect(await rooms.isDirect('!pair:example.org')).toBe(true);
    expect(await rooms.isDirect('!crowd:example.org')).toBe(false);
    // The rest of that room's events were still read.
    expect(await rooms.isEncrypted('!odd:example.org')).toBe(true);
  });
});
