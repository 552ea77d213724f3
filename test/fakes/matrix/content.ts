/**
 * Event contents as Matrix clients (Element) write them, for tests that play users: text with mentions, replies
 * and threads, media, reactions and edits.
 */
import type { JsonObject } from './types.js';

export interface TextOptions {
  /** `m.mentions.user_ids` (intentional mentions, v1.7+). */
  mentions?: string[];
  /** A rich reply to this event (`m.relates_to.m.in_reply_to`). */
  replyTo?: string;
  /** In the thread rooted at this event (`rel_type: m.thread`, with the client's reply fallback). */
  thread?: string;
  /** `format: org.matrix.custom.html` with this `formatted_body`. */
  html?: string;
  /** m.text (default), m.notice or m.emote. */
  msgtype?: string;
}

function relation(o: { replyTo?: string; thread?: string }): JsonObject | undefined {
  if (o.thread !== undefined) {
    // Clients put the thread's latest event as the fallback reply target; the root does for a first reply.
    const inReplyTo = o.replyTo ?? o.thread;
    return { rel_type: 'm.thread', event_id: o.thread, is_falling_back: o.replyTo === undefined, 'm.in_reply_to': { event_id: inReplyTo } };
  }
  if (o.replyTo !== undefined) return { 'm.in_reply_to': { event_id: o.replyTo } };
  return undefined;
}

export function textContent(body: string, o: TextOptions = {}): JsonObject {
  const content: JsonObject = { msgtype: o.msgtype ?? 'm.text', body };
  if (o.html !== undefined) Object.assign(content, { format: 'org.matrix.custom.html', formatted_body: o.html });
  if (o.mentions !== undefined) content['m.mentions'] = { user_ids: o.mentions };
  const rel = relation(o);
  if (rel) content['m.relates_to'] = rel;
  return content;
}

export interface MediaOptions {
  /** The caption or file name (`body`); default the file name or 'file'. */
  body?: string;
  filename?: string;
  mimetype?: string;
  size?: number;
  /** m.audio voice messages carry `org.matrix.msc3245.voice` and a duration. */
  voice?: boolean;
  durationMs?: number;
  replyTo?: string;
  thread?: string;
}

/** m.image / m.audio / m.video / m.file pointing at an mxc URL (from `uploadFromUser`). */
export function mediaContent(msgtype: 'm.image' | 'm.audio' | 'm.video' | 'm.file', url: string, o: MediaOptions = {}): JsonObject {
  const info: JsonObject = {};
  if (o.mimetype !== undefined) info.mimetype = o.mimetype;
  if (o.size !== undefined) info.size = o.size;
  if (o.durationMs !== undefined) info.duration = o.durationMs;
  const content: JsonObject = { msgtype, body: o.body ?? o.filename ?? 'file', url, info };
  if (o.filename !== undefined) content.filename = o.filename;
  if (o.voice) Object.assign(content, { 'org.matrix.msc3245.voice': {}, 'org.matrix.msc1767.audio': { duration: o.durationMs ?? 0 } });
  const rel = relation(o);
  if (rel) content['m.relates_to'] = rel;
  return content;
}

/** An m.reaction's content (send it with `eventType: 'm.reaction'`). */
export function reactionContent(eventId: string, key: string): JsonObject {
  return { 'm.relates_to': { rel_type: 'm.annotation', event_id: eventId, key } };
}

/** A user's edit of their own message `eventId`. */
export function editContent(eventId: string, newBody: string): JsonObject {
  return {
    msgtype: 'm.text',
    body: `* ${newBody}`,
    'm.new_content': { msgtype: 'm.text', body: newBody },
    'm.relates_to': { rel_type: 'm.replace', event_id: eventId },
  };
}
