/**
 * The homeserver's data: rooms as ordered event lists on one stream (a position per event, which /sync tokens
 * point into), the bot's account data, profiles, uploaded media and transaction ids. Everything that changes the
 * stream wakes the /sync long polls waiting on it.
 */
import { randomBytes } from 'node:crypto';
import type { Json, JsonObject, RoomEvent, UploadRecord } from './types.js';

export interface Stored {
  pos: number;
  event: RoomEvent;
}

export interface Room {
  id: string;
  alias?: string;
  /** In stream order. */
  events: Stored[];
}

interface AccountData {
  pos: number;
  content: JsonObject;
}

/** Thrown by handlers and turned into `{errcode, error}` with the status. */
export class MatrixError extends Error {
  constructor(
    readonly status: number,
    readonly errcode: string,
    readonly error: string,
    readonly extra: JsonObject = {},
  ) {
    super(`${status} ${errcode}: ${error}`);
  }
}

const stateKeyOf = (type: string, key: string): string => `${type}\u0000${key}`;

/** Opaque ids in the shapes homeservers use: `$` + 43 url-safe base64 characters for events (room version 4+). */
function eventId(): string {
  return `$${randomBytes(32).toString('base64url').slice(0, 43)}`;
}

export class World {
  pos = 0;
  readonly rooms = new Map<string, Room>();
  readonly aliases = new Map<string, string>();
  readonly accountData = new Map<string, AccountData>();
  readonly profiles = new Map<string, { displayname?: string; avatar_url?: string }>();
  readonly media = new Map<string, UploadRecord>();
  readonly filters = new Map<string, JsonObject>();
  /** `<roomId> <kind> <txnId>` → event id: a repeated PUT answers the first event. */
  readonly txns = new Map<string, string>();
  private readonly wakers = new Set<() => void>();

  constructor(
    readonly serverName: string,
    readonly botId: string,
  ) {}

  /** Called on every stream change; returns the unsubscribe. */
  onChange(fn: () => void): () => void {
    this.wakers.add(fn);
    return () => this.wakers.delete(fn);
  }

  /** Wakes everything waiting on the stream (also without a change: a queued raw /sync answer). */
  wake(): void {
    for (const fn of [...this.wakers]) fn();
  }

  newRoomId(): string {
    return `!${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}:${this.serverName}`;
  }

  room(roomId: string): Room {
    const room = this.rooms.get(roomId);
    if (!room) throw new MatrixError(404, 'M_NOT_FOUND', 'Unknown room');
    return room;
  }

  /** Appends an event to a room at the next stream position. */
  append(roomId: string, e: Omit<RoomEvent, 'event_id' | 'room_id' | 'origin_server_ts'> & { origin_server_ts?: number }): RoomEvent {
    const room = this.room(roomId);
    const event: RoomEvent = { event_id: eventId(), room_id: roomId, origin_server_ts: e.origin_server_ts ?? Date.now(), ...e };
    this.pos += 1;
    room.events.push({ pos: this.pos, event });
    if (event.type === 'm.room.redaction' && event.redacts) {
      const target = this.findEvent(roomId, event.redacts);
      if (target && !target.redactedBy) target.redactedBy = event;
    }
    this.wake();
    return event;
  }

  findEvent(roomId: string, id: string): RoomEvent | undefined {
    return this.rooms.get(roomId)?.events.find((s) => s.event.event_id === id)?.event;
  }

  /** The room's state after every event before stream position `before` (default: now). */
  stateAt(room: Room, before = Number.POSITIVE_INFINITY): Map<string, Stored> {
    const state = new Map<string, Stored>();
    for (const s of room.events) {
      if (s.pos >= before) break;
      if (s.event.state_key !== undefined) state.set(stateKeyOf(s.event.type, s.event.state_key), s);
    }
    return state;
  }

  stateEvent(room: Room, type: string, key: string): RoomEvent | undefined {
    return this.stateAt(room).get(stateKeyOf(type, key))?.event;
  }

  /** `join`, `invite`, `leave`, `ban`, or undefined for someone never in the room. */
  membership(room: Room, userId: string): string | undefined {
    const m = this.stateEvent(room, 'm.room.member', userId)?.content.membership;
    return typeof m === 'string' ? m : undefined;
  }

  /** The stored member event that made the user's current membership. */
  memberEvent(room: Room, userId: string): Stored | undefined {
    return this.stateAt(room).get(stateKeyOf('m.room.member', userId));
  }

  joinedMembers(room: Room): string[] {
    const out: string[] = [];
    for (const s of this.stateAt(room).values()) {
      if (s.event.type === 'm.room.member' && s.event.content.membership === 'join' && s.event.state_key) out.push(s.event.state_key);
    }
    return out;
  }

  /** A membership change as the server writes it, with the user's profile in the content. */
  setMembership(roomId: string, sender: string, target: string, membership: string, extra: JsonObject = {}): RoomEvent {
    const profile = this.profile(target);
    const content: JsonObject = { membership, ...extra };
    if (membership === 'join' || membership === 'invite') {
      content.displayname = profile.displayname ?? null;
      if (profile.avatar_url) content.avatar_url = profile.avatar_url;
    }
    return this.append(roomId, { type: 'm.room.member', sender, state_key: target, content });
  }

  profile(userId: string): { displayname?: string; avatar_url?: string } {
    let p = this.profiles.get(userId);
    if (!p) {
      p = { displayname: userId.slice(1).split(':')[0] };
      this.profiles.set(userId, p);
    }
    return p;
  }

  setAccountData(type: string, content: JsonObject): void {
    this.pos += 1;
    this.accountData.set(type, { pos: this.pos, content });
    this.wake();
  }

  addMedia(record: UploadRecord): void {
    this.media.set(record.mediaId, record);
  }

  newMediaId(): string {
    return randomBytes(18).toString('base64url').replace(/[-_]/g, 'm');
  }
}

export function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
