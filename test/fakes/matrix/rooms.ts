/** Room routes the bot calls: send (idempotent per txnId), redact, state, typing, receipts, join/leave, members. */
import type { Ctx, Route } from './http.js';
import { clientEvent } from './sync.js';
import type { JsonObject, ReceiptRecord, SentEvent, TypingRecord } from './types.js';
import { MatrixError, type Room, type World } from './world.js';

/** Synapse refuses events whose JSON is over 64 KiB. */
const MAX_EVENT_BYTES = 65_536;

export interface RoomRecords {
  sent: SentEvent[];
  typing: TypingRecord[];
  receipts: ReceiptRecord[];
  joins: string[];
  leaves: string[];
}

const C = '^/_matrix/client/(?:v3|r0)';
const SEG = '([^/]+)';
const re = (path: string): RegExp => new RegExp(`${C}${path}$`);

function joinedRoom(world: World, roomId: string): Room {
  const room = world.room(roomId);
  if (world.membership(room, world.botId) !== 'join') throw new MatrixError(403, 'M_FORBIDDEN', `User ${world.botId} not in room ${roomId}`);
  return room;
}

/** The room the bot may read: joined now, or once joined (reads stop at its leave, which the fake does not model). */
function readableRoom(world: World, roomId: string): Room {
  const room = world.room(roomId);
  const m = world.membership(room, world.botId);
  if (m !== 'join' && m !== 'leave') throw new MatrixError(403, 'M_FORBIDDEN', `User ${world.botId} not in room ${roomId}`);
  return room;
}

function checkSize(event: JsonObject): void {
  if (Buffer.byteLength(JSON.stringify(event)) > MAX_EVENT_BYTES) throw new MatrixError(413, 'M_TOO_LARGE', 'event too large');
}

export function roomRoutes(world: World, rec: RoomRecords): Route[] {
  const send = async (ctx: Ctx, kind: 'send' | 'redact') => {
    const [roomId, typeOrTarget, txnId] = ctx.params;
    const content = await ctx.json();
    joinedRoom(world, roomId);
    const key = `${roomId} ${kind} ${txnId}`;
    const known = world.txns.get(key);
    if (known) return { event_id: known };
    const type = kind === 'send' ? typeOrTarget : 'm.room.redaction';
    const redacts = kind === 'redact' ? typeOrTarget : undefined;
    // Room version 10 (what createRoom makes) keeps `redacts` at the top level of the redaction, not in its content.
    const body = content;
    checkSize({ type, content: body });
    const event = world.append(roomId, { type, sender: world.botId, content: body, txnId, ...(redacts && { redacts }) });
    world.txns.set(key, event.event_id);
    rec.sent.push({ roomId, type, content: body, txnId, eventId: event.event_id, ...(redacts && { redacts }) });
    return { event_id: event.event_id };
  };

  const putState = async (ctx: Ctx) => {
    const [roomId, type, stateKey = ''] = ctx.params;
    const content = await ctx.json();
    joinedRoom(world, roomId);
    checkSize({ type, content });
    const event = world.append(roomId, { type, sender: world.botId, content, state_key: stateKey });
    rec.sent.push({ roomId, type, content, txnId: '', eventId: event.event_id, stateKey });
    return { event_id: event.event_id };
  };

  const getState = (ctx: Ctx) => {
    const [roomId, type, stateKey = ''] = ctx.params;
    const room = readableRoom(world, roomId);
    if (type === undefined) return [...world.stateAt(room).values()].map((s) => clientEvent(s.event, world.botId, true));
    const event = world.stateEvent(room, type, stateKey);
    if (!event) throw new MatrixError(404, 'M_NOT_FOUND', 'Event not found.');
    return event.content;
  };

  const join = async (ctx: Ctx) => {
    await ctx.json();
    const target = ctx.params[0];
    const roomId = target.startsWith('#') ? world.aliases.get(target) : target;
    if (!roomId || !world.rooms.has(roomId)) throw new MatrixError(404, 'M_NOT_FOUND', `No known servers for ${target}`);
    const room = world.room(roomId);
    const m = world.membership(room, world.botId);
    if (m === 'ban') throw new MatrixError(403, 'M_FORBIDDEN', 'You are banned from this room');
    if (m !== 'join') {
      const rule = world.stateEvent(room, 'm.room.join_rules', '')?.content.join_rule;
      if (m !== 'invite' && rule !== 'public') throw new MatrixError(403, 'M_FORBIDDEN', 'You are not invited to this room.');
      world.setMembership(roomId, world.botId, world.botId, 'join');
    }
    rec.joins.push(roomId);
    return { room_id: roomId };
  };

  const leave = async (ctx: Ctx) => {
    await ctx.json();
    const room = world.room(ctx.params[0]);
    const m = world.membership(room, world.botId);
    if (m !== 'join' && m !== 'invite') throw new MatrixError(403, 'M_FORBIDDEN', `User ${world.botId} not in room ${room.id}, and room previews are disabled`);
    world.setMembership(room.id, world.botId, world.botId, 'leave');
    rec.leaves.push(room.id);
    return {};
  };

  const typing = async (ctx: Ctx) => {
    const [roomId, userId] = ctx.params;
    const body = await ctx.json();
    if (userId !== world.botId) throw new MatrixError(403, 'M_FORBIDDEN', 'Cannot set another user\u2019s typing state');
    if (typeof body.typing !== 'boolean') throw new MatrixError(400, 'M_BAD_JSON', "'typing' must be a boolean");
    joinedRoom(world, roomId);
    rec.typing.push({ roomId, userId, typing: body.typing, ...(typeof body.timeout === 'number' && { timeout: body.timeout }) });
    return {};
  };

  const receipt = async (ctx: Ctx) => {
    const [roomId, type, eventId] = ctx.params;
    const body = await ctx.json();
    if (!['m.read', 'm.read.private', 'm.fully_read'].includes(type))
      throw new MatrixError(400, 'M_INVALID_PARAM', `Receipt type must be m.read, m.read.private or m.fully_read`);
    joinedRoom(world, roomId);
    if (!world.findEvent(roomId, eventId)) throw new MatrixError(404, 'M_NOT_FOUND', 'Event not found.');
    const threadId = typeof body.thread_id === 'string' ? body.thread_id : undefined;
    rec.receipts.push({ roomId, eventId, type, via: 'receipt', ...(threadId && { threadId }) });
    return {};
  };

  const readMarkers = async (ctx: Ctx) => {
    const roomId = ctx.params[0];
    const body = await ctx.json();
    joinedRoom(world, roomId);
    for (const type of ['m.fully_read', 'm.read', 'm.read.private']) {
      const eventId = body[type];
      if (eventId === undefined) continue;
      if (typeof eventId !== 'string') throw new MatrixError(400, 'M_BAD_JSON', `'${type}' must be an event id`);
      rec.receipts.push({ roomId, eventId, type, via: 'read_markers' });
    }
    return {};
  };

  const joinedMembers = (ctx: Ctx) => {
    const room = joinedRoom(world, ctx.params[0]);
    const joined: JsonObject = {};
    for (const u of world.joinedMembers(room)) {
      const content = world.stateEvent(room, 'm.room.member', u)?.content ?? {};
      joined[u] = { display_name: content.displayname ?? null, avatar_url: content.avatar_url ?? null };
    }
    return { joined };
  };

  const getEvent = (ctx: Ctx) => {
    const [roomId, id] = ctx.params;
    readableRoom(world, roomId);
    const event = world.findEvent(roomId, id);
    if (!event) throw new MatrixError(404, 'M_NOT_FOUND', 'Event not found.');
    return clientEvent(event, world.botId, true);
  };

  const joinedRooms = () => ({
    joined_rooms: [...world.rooms.values()].filter((r) => world.membership(r, world.botId) === 'join').map((r) => r.id),
  });

  return [
    { method: 'PUT', pattern: re(`/rooms/${SEG}/send/${SEG}/${SEG}`), handler: (ctx) => send(ctx, 'send') },
    { method: 'PUT', pattern: re(`/rooms/${SEG}/redact/${SEG}/${SEG}`), handler: (ctx) => send(ctx, 'redact') },
    { method: 'PUT', pattern: re(`/rooms/${SEG}/state/${SEG}(?:/${SEG})?/?`), handler: putState },
    { method: 'GET', pattern: re(`/rooms/${SEG}/state`), handler: getState },
    { method: 'GET', pattern: re(`/rooms/${SEG}/state/${SEG}(?:/${SEG})?/?`), handler: getState },
    { method: 'PUT', pattern: re(`/rooms/${SEG}/typing/${SEG}`), handler: typing },
    { method: 'POST', pattern: re(`/rooms/${SEG}/receipt/${SEG}/${SEG}`), handler: receipt },
    { method: 'POST', pattern: re(`/rooms/${SEG}/read_markers`), handler: readMarkers },
    { method: 'POST', pattern: re(`/join/${SEG}`), handler: join },
    { method: 'POST', pattern: re(`/rooms/${SEG}/join`), handler: join },
    { method: 'POST', pattern: re(`/rooms/${SEG}/leave`), handler: leave },
    { method: 'GET', pattern: re(`/rooms/${SEG}/joined_members`), handler: joinedMembers },
    { method: 'GET', pattern: re(`/rooms/${SEG}/event/${SEG}`), handler: getEvent },
    { method: 'GET', pattern: re('/joined_rooms'), handler: joinedRooms },
  ];
}
