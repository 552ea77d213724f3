/**
 * What tests do as the users and the rest of the homeserver: make rooms (with the state events a server writes),
 * invite the bot, speak in rooms, upload media, rename; and how a room shows the bot's messages after its edits.
 */
import type { CreateRoomOptions, JsonObject, SendOptions, ShownMessage, UploadRecord } from './types.js';
import { isObject, type World } from './world.js';

export function createRoom(world: World, o: CreateRoomOptions): string {
  const creator = o.members[0];
  if (!creator) throw new Error('createRoom: members needs at least the creator');
  for (const u of o.members) world.profile(u);
  const roomId = world.newRoomId();
  world.rooms.set(roomId, { id: roomId, events: [] });
  const state = (type: string, content: JsonObject) => world.append(roomId, { type, sender: creator, state_key: '', content });
  state('m.room.create', { creator, room_version: '10' });
  world.setMembership(roomId, creator, creator, 'join');
  state('m.room.power_levels', {
    users: { [creator]: 100 },
    users_default: 0,
    events: { 'm.room.name': 50, 'm.room.power_levels': 100, 'm.room.encryption': 100 },
    events_default: 0,
    state_default: 50,
    ban: 50,
    kick: 50,
    redact: 50,
    invite: 0,
  });
  state('m.room.join_rules', { join_rule: o.public ? 'public' : 'invite' });
  state('m.room.history_visibility', { history_visibility: o.historyVisibility ?? 'shared' });
  if (o.name !== undefined) state('m.room.name', { name: o.name });
  if (o.encrypted) state('m.room.encryption', { algorithm: 'm.megolm.v1.aes-sha2', rotation_period_ms: 604_800_000, rotation_period_msgs: 100 });
  if (o.alias !== undefined) {
    const alias = o.alias.startsWith('#') ? o.alias : `#${o.alias}:${world.serverName}`;
    world.aliases.set(alias, roomId);
    world.room(roomId).alias = alias;
    state('m.room.canonical_alias', { alias });
  }
  const direct: JsonObject = o.isDirect ? { is_direct: true } : {};
  for (const u of o.members.slice(1)) {
    world.setMembership(roomId, creator, u, 'invite', direct);
    world.setMembership(roomId, u, u, 'join');
  }
  const bot = o.bot ?? 'join';
  if (bot !== 'none') world.setMembership(roomId, creator, world.botId, 'invite', direct);
  if (bot === 'join') {
    world.setMembership(roomId, world.botId, world.botId, 'join');
    // What a client accepting a DM records; bots may read it to tell DMs from rooms.
    if (o.isDirect) addDirect(world, creator, roomId);
  }
  return roomId;
}

function addDirect(world: World, userId: string, roomId: string): void {
  const current = world.accountData.get('m.direct')?.content ?? {};
  const rooms = Array.isArray(current[userId]) ? (current[userId] as string[]) : [];
  world.setAccountData('m.direct', { ...current, [userId]: [...rooms, roomId] });
}

/** `from` (a member) invites the bot: the room shows in the bot's next /sync under `rooms.invite`. */
export function inviteBot(world: World, roomId: string, from: string, isDirect = false): string {
  const room = world.room(roomId);
  if (world.membership(room, from) !== 'join') world.setMembership(roomId, from, from, 'join');
  return world.setMembership(roomId, from, world.botId, 'invite', isDirect ? { is_direct: true } : {}).event_id;
}

/** A user's event in a room they are joined to. */
export function userSend(world: World, roomId: string, sender: string, content: JsonObject, o: SendOptions = {}): string {
  const room = world.room(roomId);
  if (world.membership(room, sender) !== 'join') throw new Error(`${sender} is not joined to ${roomId}`);
  return world.append(roomId, {
    type: o.eventType ?? 'm.room.message',
    sender,
    content,
    ...(o.stateKey !== undefined && { state_key: o.stateKey }),
    ...(o.ts !== undefined && { origin_server_ts: o.ts }),
  }).event_id;
}

export function uploadFromUser(world: World, bytes: Buffer, contentType: string, filename?: string, uploader = '@someone:elsewhere'): string {
  const mediaId = world.newMediaId();
  const record: UploadRecord = {
    mxc: `mxc://${world.serverName}/${mediaId}`,
    mediaId,
    bytes,
    contentType,
    uploader,
    ...(filename !== undefined && { filename }),
  };
  world.addMedia(record);
  return record.mxc;
}

/** A new display name: the profile, and a member event in every room the user is joined to (as Synapse does). */
export function setDisplayName(world: World, userId: string, name: string): void {
  world.profile(userId).displayname = name;
  for (const room of world.rooms.values()) {
    if (world.membership(room, userId) !== 'join') continue;
    world.setMembership(room.id, userId, userId, 'join');
  }
}

const relationOf = (content: JsonObject): JsonObject | undefined => (isObject(content['m.relates_to']) ? content['m.relates_to'] : undefined);

/** The bot's messages in a room as a client shows them: edits (m.replace) folded in, redactions marked. */
export function shownMessages(world: World, roomId: string): ShownMessage[] {
  const events = world.room(roomId).events.map((s) => s.event);
  const mine = events.filter((e) => e.sender === world.botId && e.type === 'm.room.message' && e.state_key === undefined);
  const out: ShownMessage[] = [];
  for (const e of mine) {
    if (relationOf(e.content)?.rel_type === 'm.replace') continue;
    const edits = mine.filter((x) => {
      const rel = relationOf(x.content);
      return rel?.rel_type === 'm.replace' && rel.event_id === e.event_id && isObject(x.content['m.new_content']) && !x.redactedBy;
    });
    const last = edits.at(-1);
    const latest = last && isObject(last.content['m.new_content']) ? last.content['m.new_content'] : e.content;
    out.push({
      eventId: e.event_id,
      body: typeof latest.body === 'string' ? latest.body : '',
      ...(typeof latest.formatted_body === 'string' && { formattedBody: latest.formatted_body }),
      ...(typeof latest.msgtype === 'string' && { msgtype: latest.msgtype }),
      content: e.content,
      latest,
      edits: edits.length,
      redacted: e.redactedBy !== undefined,
    });
  }
  return out;
}
