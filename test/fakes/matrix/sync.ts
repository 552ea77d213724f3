/**
 * What GET /sync answers for the bot between two stream positions: joined rooms (timeline with `limited` and
 * `prev_batch` when more events happened than the filter's limit, state before the timeline for rooms the bot just
 * joined or after a gap), invites (stripped invite_state), rooms the bot left, and the bot's account data.
 */
import type { JsonObject, RoomEvent } from './types.js';
import { isObject, type Room, type Stored, type World } from './world.js';

/** Event fields a redaction keeps, per event type (the rest of the content goes). */
const KEPT_ON_REDACTION: Record<string, string[]> = {
  'm.room.member': ['membership', 'join_authorised_via_users_server'],
  'm.room.create': ['creator', 'room_version'],
  'm.room.join_rules': ['join_rule', 'allow'],
  'm.room.history_visibility': ['history_visibility'],
  'm.room.power_levels': ['ban', 'events', 'events_default', 'kick', 'redact', 'state_default', 'users', 'users_default', 'invite'],
  'm.room.redaction': ['redacts'],
};

const INVITE_STATE_TYPES = new Set(['m.room.create', 'm.room.join_rules', 'm.room.name', 'm.room.avatar', 'm.room.canonical_alias', 'm.room.encryption']);

export interface SyncWindow {
  /** null: an initial sync. */
  since: number | null;
  upto: number;
  timelineLimit: number;
  fullState: boolean;
}

/** A room event as clients receive it; `withRoomId` for the endpoints that name it (/event, /state, /messages). */
export function clientEvent(e: RoomEvent, viewer: string, withRoomId: boolean): JsonObject {
  const out: JsonObject = { type: e.type, sender: e.sender, event_id: e.event_id, origin_server_ts: e.origin_server_ts, content: e.content };
  if (withRoomId) out.room_id = e.room_id;
  if (e.state_key !== undefined) out.state_key = e.state_key;
  if (e.redacts !== undefined) out.redacts = e.redacts;
  const unsigned: JsonObject = { age: Math.max(0, Date.now() - e.origin_server_ts) };
  if (e.txnId !== undefined && e.sender === viewer) unsigned.transaction_id = e.txnId;
  if (e.redactedBy) {
    const kept = KEPT_ON_REDACTION[e.type] ?? [];
    out.content = Object.fromEntries(Object.entries(e.content).filter(([k]) => kept.includes(k)));
    unsigned.redacted_because = clientEvent(e.redactedBy, viewer, withRoomId);
  }
  out.unsigned = unsigned;
  return out;
}

const stripped = (e: RoomEvent): JsonObject => ({ type: e.type, state_key: e.state_key ?? '', sender: e.sender, content: e.content });

function historyVisibility(world: World, room: Room): string {
  const v = world.stateEvent(room, 'm.room.history_visibility', '')?.content.history_visibility;
  return typeof v === 'string' ? v : 'shared';
}

/** The first stream position the bot may see in a room it is joined to now. */
export function visibleFrom(world: World, room: Room, joinedAt: number): number {
  const visibility = historyVisibility(world, room);
  if (visibility === 'shared' || visibility === 'world_readable') return 0;
  if (visibility === 'invited') {
    const invite = room.events.findLast((s) => s.pos < joinedAt && s.event.state_key === world.botId && s.event.content.membership === 'invite');
    if (invite) return invite.pos;
  }
  return joinedAt;
}

function summary(world: World, room: Room): JsonObject {
  const state = [...world.stateAt(room).values()].filter((s) => s.event.type === 'm.room.member');
  const joined = state.filter((s) => s.event.content.membership === 'join').map((s) => s.event.state_key ?? '');
  const invited = state.filter((s) => s.event.content.membership === 'invite').length;
  return { 'm.heroes': joined.filter((u) => u !== world.botId).slice(0, 5), 'm.joined_member_count': joined.length, 'm.invited_member_count': invited };
}

export const batchToken = (pos: number, nonce: string): string => `s${pos}_${nonce}`;
export const prevBatchToken = (pos: number, nonce: string): string => `t${pos}_${nonce}`;

interface Timeline {
  events: Stored[];
  limited: boolean;
  gapStart: number;
}

function timelineOf(events: Stored[], limit: number, gapStart: number): Timeline {
  const limited = events.length > limit;
  return { events: limited ? events.slice(events.length - limit) : events, limited, gapStart };
}

function stateBlock(world: World, room: Room, t: Timeline, full: boolean): JsonObject[] {
  const start = t.events[0]?.pos ?? Number.POSITIVE_INFINITY;
  const state = [...world.stateAt(room, start).values()];
  const picked = full ? state : t.limited ? state.filter((s) => s.pos > t.gapStart) : [];
  return picked.map((s) => clientEvent(s.event, world.botId, false));
}

function joinedRoom(world: World, room: Room, w: SyncWindow, nonce: string): JsonObject | null {
  const member = world.memberEvent(room, world.botId);
  if (!member) return null;
  const newlyJoined = w.since === null || member.pos > w.since;
  const from = visibleFrom(world, room, member.pos);
  const after = newlyJoined ? 0 : (w.since ?? 0);
  const window = room.events.filter((s) => s.pos > after && s.pos >= from && s.pos <= w.upto);
  if (window.length === 0 && !newlyJoined && !w.fullState) return null;
  const t = timelineOf(window, w.timelineLimit, after);
  const first = t.events[0]?.pos ?? w.upto + 1;
  return {
    timeline: { events: t.events.map((s) => clientEvent(s.event, world.botId, false)), limited: t.limited, prev_batch: prevBatchToken(first - 1, nonce) },
    state: { events: stateBlock(world, room, t, newlyJoined || w.fullState) },
    account_data: { events: [] },
    ephemeral: { events: [] },
    unread_notifications: { notification_count: 0, highlight_count: 0 },
    summary: summary(world, room),
  };
}

function invitedRoom(world: World, room: Room, w: SyncWindow): JsonObject | null {
  const member = world.memberEvent(room, world.botId);
  if (!member || member.pos > w.upto || (w.since !== null && member.pos <= w.since)) return null;
  const state = [...world.stateAt(room, member.pos).values()].filter((s) => INVITE_STATE_TYPES.has(s.event.type));
  const inviter = world.memberEvent(room, member.event.sender);
  const events = [...state.map((s) => stripped(s.event)), ...(inviter ? [stripped(inviter.event)] : []), stripped(member.event)];
  return { invite_state: { events } };
}

function leftRoom(world: World, room: Room, w: SyncWindow, nonce: string): JsonObject | null {
  const member = world.memberEvent(room, world.botId);
  if (!member || w.since === null || member.pos <= w.since || member.pos > w.upto) return null;
  const window = room.events.filter((s) => s.pos > (w.since ?? 0) && s.pos <= member.pos);
  const t = timelineOf(window, w.timelineLimit, w.since);
  return {
    timeline: {
      events: t.events.map((s) => clientEvent(s.event, world.botId, false)),
      limited: t.limited,
      prev_batch: prevBatchToken((t.events[0]?.pos ?? 1) - 1, nonce),
    },
    state: { events: [] },
    account_data: { events: [] },
  };
}

/** The /sync body and whether it carries anything (an empty incremental sync is what a long poll waits out). */
export function buildSync(world: World, w: SyncWindow, nonce: string): { body: JsonObject; empty: boolean } {
  const join: JsonObject = {};
  const invite: JsonObject = {};
  const leave: JsonObject = {};
  for (const room of world.rooms.values()) {
    const membership = world.membership(room, world.botId);
    const entry =
      membership === 'join'
        ? joinedRoom(world, room, w, nonce)
        : membership === 'invite'
          ? invitedRoom(world, room, w)
          : membership === 'leave' || membership === 'ban'
            ? leftRoom(world, room, w, nonce)
            : null;
    if (!entry) continue;
    if (membership === 'join') join[room.id] = entry;
    else if (membership === 'invite') invite[room.id] = entry;
    else leave[room.id] = entry;
  }
  const accountData = [...world.accountData.entries()]
    .filter(([, d]) => (w.since === null || d.pos > w.since) && d.pos <= w.upto)
    .map(([type, d]) => ({ type, content: d.content }));
  const body: JsonObject = { next_batch: batchToken(w.upto, nonce) };
  const rooms: JsonObject = {};
  if (Object.keys(join).length > 0) rooms.join = join;
  if (Object.keys(invite).length > 0) rooms.invite = invite;
  if (Object.keys(leave).length > 0) rooms.leave = leave;
  if (Object.keys(rooms).length > 0) body.rooms = rooms;
  if (accountData.length > 0) body.account_data = { events: accountData };
  return { body, empty: Object.keys(rooms).length === 0 && accountData.length === 0 };
}

/** `room.timeline.limit` of a filter (default 10, as Synapse). */
export function timelineLimit(filter: JsonObject | undefined): number {
  const room = filter?.room;
  const timeline = isObject(room) ? room.timeline : undefined;
  const limit = isObject(timeline) ? timeline.limit : undefined;
  return typeof limit === 'number' && Number.isInteger(limit) && limit > 0 ? Math.min(limit, 100) : 10;
}
