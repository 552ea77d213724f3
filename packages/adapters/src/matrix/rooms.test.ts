import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MatrixClient } from './client.js';
import { RoomBook } from './rooms.js';

const ROOM = '!locked:example.org';
// The refusal never calls the homeserver itself (the caller's send does), so the client is never asked here.
const client = new MatrixClient({ homeserverUrl: 'http://127.0.0.1:9', accessToken: 'token', userId: '@herald:example.org' });

function book(firstRefusal: (roomId: string) => Promise<boolean>): { rooms: RoomBook; sent: string[]; logs: string[] } {
  const logs: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line).msg) });
  return { rooms: new RoomBook(client, logger, { firstRefusal }), sent: [], logs };
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
