/**
 * Conversation ids for Matrix: `matrix:<room_id>` (a room or a DM as a whole) or `matrix:<room_id>:<thread_root>`
 * (a thread, its root event id). Room ids are `!opaque:server[:port]` and hold colons; an event id starts with `$`
 * and a server name never holds one, so the first `:$` after the room id splits the two unambiguously.
 */
import type { ConversationCodec } from '../types.js';

export interface MatrixConversation {
  roomId: string;
  /** The thread's root event id (`m.relates_to.event_id` of an `m.thread` relation). */
  threadRoot?: string;
}

const PREFIX = 'matrix';
/** `!opaque:server.name[:port]`; Herald takes ids as servers make them, printable and short. */
const ROOM_ID_RE = /^![^:\s$]{1,255}:[A-Za-z0-9.\-[\]:]{1,255}$/;
/** `$` + an opaque id (room v3+: unpadded base64; v1/v2: `$id:server`). */
const EVENT_ID_RE = /^\$[^\s]{1,255}$/;

/** `@localpart:server`. */
const USER_ID_RE = /^@[^:\s]{1,255}:[A-Za-z0-9.\-[\]:]{1,255}$/;
/**
 * An id of this shape with no half of a UTF-16 surrogate pair in it: JSON can carry one (`"\\ud800"`), no server
 * makes an id with one, and an id holding one cannot go into a URL (`encodeURIComponent` throws).
 */
const idOf = (re: RegExp, v: unknown): v is string => typeof v === 'string' && re.test(v) && v.isWellFormed();

export function isRoomId(v: unknown): v is string {
  return idOf(ROOM_ID_RE, v);
}

export function isEventId(v: unknown): v is string {
  return idOf(EVENT_ID_RE, v);
}

export function isUserId(v: unknown): v is string {
  return idOf(USER_ID_RE, v);
}

export const matrixCodec: ConversationCodec<MatrixConversation> = {
  encode({ roomId, threadRoot }) {
    if (!isRoomId(roomId)) throw new Error(`Matrix conversation id: bad room id ${JSON.stringify(roomId)}`);
    if (threadRoot !== undefined && !isEventId(threadRoot)) throw new Error(`Matrix conversation id: bad thread root ${JSON.stringify(threadRoot)}`);
    return threadRoot === undefined ? `${PREFIX}:${roomId}` : `${PREFIX}:${roomId}:${threadRoot}`;
  },
  decode(id) {
    if (!id.startsWith(`${PREFIX}:!`)) throw new Error(`Not a Matrix conversation id: ${JSON.stringify(id)}`);
    const rest = id.slice(PREFIX.length + 1);
    const at = rest.indexOf(':$');
    const roomId = at === -1 ? rest : rest.slice(0, at);
    const threadRoot = at === -1 ? undefined : rest.slice(at + 1);
    if (!isRoomId(roomId) || (threadRoot !== undefined && !isEventId(threadRoot))) throw new Error(`Not a Matrix conversation id: ${JSON.stringify(id)}`);
    return threadRoot === undefined ? { roomId } : { roomId, threadRoot };
  },
};
