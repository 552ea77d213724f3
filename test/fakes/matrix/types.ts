/** Public records and options of the Matrix homeserver stand-in. */

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A room event as the server keeps it (the client formats drop `room_id` in /sync). */
export interface RoomEvent {
  event_id: string;
  room_id: string;
  type: string;
  sender: string;
  origin_server_ts: number;
  content: JsonObject;
  state_key?: string;
  /** m.room.redaction: the event it removes (top level in room versions before 11, in content too from 11). */
  redacts?: string;
  /** Who sent it with which transaction id: only that client sees `unsigned.transaction_id`. */
  txnId?: string;
  /** Set once redacted: the redaction event. */
  redactedBy?: RoomEvent;
}

/** Every event the bot sent (PUT send / redact / state), in order. */
export interface SentEvent {
  roomId: string;
  type: string;
  content: JsonObject;
  txnId: string;
  eventId: string;
  /** m.room.redaction: the event it removed. */
  redacts?: string;
  /** State events the bot set. */
  stateKey?: string;
}

/** What a room shows for one of the bot's messages after its edits and redactions. */
export interface ShownMessage {
  eventId: string;
  /** The latest text: `m.new_content.body` of the last edit, else `body`. */
  body: string;
  formattedBody?: string;
  msgtype?: string;
  /** The original content (the one that carries `m.relates_to` of a reply or thread). */
  content: JsonObject;
  /** The latest replacement content, when edited. */
  latest: JsonObject;
  edits: number;
  redacted: boolean;
}

export interface TypingRecord {
  roomId: string;
  userId: string;
  typing: boolean;
  timeout?: number;
}

export interface ReceiptRecord {
  roomId: string;
  eventId: string;
  /** `m.read`, `m.read.private`, or `m.fully_read` (from read_markers). */
  type: string;
  /** Which endpoint: `receipt` or `read_markers`. */
  via: 'receipt' | 'read_markers';
  threadId?: string;
}

export interface UploadRecord {
  mxc: string;
  mediaId: string;
  bytes: Buffer;
  contentType: string;
  filename?: string;
  /** Who uploaded it: the bot, or a user through `uploadFromUser`. */
  uploader: string;
}

export interface RequestRecord {
  method: string;
  /** The path without the query string. */
  path: string;
  query: Record<string, string>;
  status: number;
  /** The errcode when the answer was an error. */
  errcode?: string;
}

export interface CreateRoomOptions {
  /** Users joined to the room (not the bot); the first one is the creator. At least one. */
  members: string[];
  /** The bot: joined (default), invited by the creator (shows in /sync `rooms.invite`), or not in the room. */
  bot?: 'join' | 'invite' | 'none';
  encrypted?: boolean;
  name?: string;
  /** A DM: the invite carries `is_direct: true` and the creator's m.direct names the room. */
  isDirect?: boolean;
  /** A local alias (`#alias:server`) joinable with POST /join/{alias}. */
  alias?: string;
  /** join_rules public: the bot can join without an invite. */
  public?: boolean;
  /** m.room.history_visibility (default `shared`, as Synapse makes private rooms). */
  historyVisibility?: 'shared' | 'joined' | 'invited' | 'world_readable';
}

export interface SendOptions {
  /** Default `m.room.message`. */
  eventType?: string;
  /** Makes it a state event. */
  stateKey?: string;
  /** origin_server_ts, default now. */
  ts?: number;
}

export interface FailOptions {
  /** How many matching requests fail (default 1). */
  times?: number;
  /** Only this HTTP method (default any). */
  method?: string;
  /** The `error` text (default a short description). */
  error?: string;
  /** Extra fields in the error body (e.g. `retry_after_ms`). */
  extra?: JsonObject;
}

export interface MatrixFakeOptions {
  /** Default `localhost`. */
  serverName?: string;
  /** The bot's localpart (default `herald`): user id `@herald:<serverName>`. */
  botLocalpart?: string;
  botDisplayName?: string;
  /** Default random `syt_…`. */
  accessToken?: string;
  deviceId?: string;
  /** m.upload.size (default 50 MiB); bigger uploads get 413 M_TOO_LARGE. */
  maxUploadBytes?: number;
  /** The longest a /sync waits whatever its `timeout` asks (default 30 s). */
  maxSyncTimeoutMs?: number;
}
