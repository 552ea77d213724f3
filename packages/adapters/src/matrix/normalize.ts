/**
 * One `/sync` timeline event → an InboundMessage, or null for what is not a message to answer (state, the bot's own
 * events, edits, notices, redacted or malformed events). Every field is checked as sent: a homeserver relays what
 * any user of any server wrote.
 *
 * Mentions: `m.mentions.user_ids` with the bot (the spec's way), else a pill to the bot (`matrix.to/#/@bot…` link in
 * the HTML) or the bot's id or display name in the body (clients before m.mentions). The mention is cut from the text.
 * Replies: `m.relates_to.m.in_reply_to`; the quoted text comes from the body's reply fallback (`> <@who> text`) when
 * the client still sends one (it is cut from the text); else the ingress fetches the event.
 */
import { kindOfMime } from '../shared/attachment-kind.js';
import type { Attachment, ChatType, InboundMessage } from '../types.js';
import { isEventId, isUserId, matrixCodec } from './codec.js';
import { MATRIX_MXC_RE } from './config.js';
import { isRecord, type Json, wireNumber, wireString } from '../shared/wire-values.js';

export interface RoomContext {
  roomId: string;
  /** The bot's own user id. */
  botUserId: string;
  /** Names the bot answers to in a body (display name, localpart); lower-case. */
  botNames: readonly string[];
  /** A one-to-one room: no mention needed. */
  direct: boolean;
}

/** A message, and what the ingress needs to decide on it. */
export interface Normalized {
  msg: InboundMessage;
  /** The bot was mentioned (or it is a DM). */
  mentioned: boolean;
  /** The thread it belongs to, if any (its root event id). */
  threadRoot?: string;
  /** The message it replies to, when its text must be fetched (no reply fallback in the body). */
  replyToFetch?: string;
}

const MEDIA_KINDS: Record<string, Attachment['kind']> = { 'm.image': 'image', 'm.audio': 'audio', 'm.video': 'video', 'm.file': 'file' };
const TEXT_TYPES = new Set(['m.text', 'm.emote']);

export function normalizeEvent(ev: unknown, ctx: RoomContext): Normalized | null {
  if (!isRecord(ev) || ev.type !== 'm.room.message' || !isEventId(ev.event_id) || !isUserId(ev.sender)) return null;
  if (ev.sender === ctx.botUserId || !isRecord(ev.content)) return null;
  const content = ev.content;
  const rel = isRecord(content['m.relates_to']) ? content['m.relates_to'] : undefined;
  // An edit repeats the message with new text: the original was answered already.
  if (rel?.rel_type === 'm.replace') return null;
  const msgtype = wireString(content.msgtype);
  if (msgtype === undefined || typeof content.body !== 'string') return null;
  const threadRoot = rel?.rel_type === 'm.thread' && isEventId(rel.event_id) ? rel.event_id : undefined;
  const inReplyTo = isRecord(rel?.['m.in_reply_to']) ? (rel['m.in_reply_to'] as Json).event_id : undefined;
  // In a thread, clients point `m.in_reply_to` at the latest event as a fallback for thread-less clients.
  const replyId = isEventId(inReplyTo) && !(threadRoot && rel?.is_falling_back === true) ? inReplyTo : undefined;

  let body = content.body;
  let attachments: Attachment[] = [];
  if (Object.hasOwn(MEDIA_KINDS, msgtype)) {
    const media = mediaOf(msgtype, content);
    if (media === null) return null;
    attachments = [media];
    // A media event's body is its file name unless a caption is set (`filename` differs from `body`).
    body = wireString(content.filename) && content.filename !== content.body ? content.body : '';
  } else if (!TEXT_TYPES.has(msgtype)) return null;

  const fallback = replyId ? cutReplyFallback(body) : null;
  if (fallback) body = fallback.rest;
  const mention = mentionOf(content, body, ctx);
  const text = (mention.text ?? body).trim();
  const chatType: ChatType = threadRoot ? 'thread' : ctx.direct ? 'dm' : 'group';
  const ts = typeof ev.origin_server_ts === 'number' ? ev.origin_server_ts : Number.NaN;
  const msg: InboundMessage = {
    platform: 'matrix',
    messageId: ev.event_id,
    conversationId: matrixCodec.encode({ roomId: ctx.roomId, ...(threadRoot && { threadRoot }) }),
    chatType,
    chatId: ctx.roomId,
    ...(threadRoot && { threadId: threadRoot }),
    userId: ev.sender,
    text: msgtype === 'm.emote' ? `* ${text}` : text,
    attachments,
    platformMessageId: ev.event_id,
    ...(replyId && { quoted: { platformMessageId: replyId, text: fallback?.quoted ?? '', fromBot: fallback?.from === ctx.botUserId } }),
    sentAt: Number.isFinite(ts) && ts > 0 ? ts : Date.now(),
  };
  return {
    msg,
    mentioned: ctx.direct || mention.found,
    ...(threadRoot && { threadRoot }),
    ...(replyId && !fallback && { replyToFetch: replyId }),
  };
}

function mediaOf(msgtype: string, content: Json): Attachment | null {
  const url = wireString(content.url);
  // An encrypted file (`content.file`) never reaches here: encrypted rooms are refused.
  if (!url || !MATRIX_MXC_RE.test(url)) return null;
  const info = isRecord(content.info) ? content.info : {};
  const mimeType = wireString(info.mimetype);
  const size = wireNumber(info.size);
  const name = wireString(content.filename) ?? wireString(content.body);
  const kind = MEDIA_KINDS[msgtype] === 'file' ? kindOfMime(mimeType) : MEDIA_KINDS[msgtype];
  return {
    kind,
    url,
    fileId: url.slice('mxc://'.length),
    ...(mimeType && { mimeType }),
    ...(name && { name: name.slice(0, 255) }),
    ...(Number.isSafeInteger(size) && size >= 0 && { size }),
    // MSC3245 voice messages: an m.audio with `org.matrix.msc3245.voice`.
    ...(msgtype === 'm.audio' && (isRecord(content['org.matrix.msc3245.voice']) || content['org.matrix.msc3245.voice'] === true) && { voice: true }),
  };
}

/** The spec's (deprecated, still common) reply fallback: `> <@who:server> line` lines, a blank line, the reply. */
function cutReplyFallback(body: string): { quoted: string; from?: string; rest: string } | null {
  if (!body.startsWith('> ')) return null;
  const lines = body.split('\n');
  const end = lines.findIndex((l) => !l.startsWith('>'));
  if (end <= 0 || lines[end] !== '') return null;
  const quotedLines = lines.slice(0, end).map((l) => l.replace(/^> ?/, ''));
  const who = /^<(@[^>\s]+)> ?/.exec(quotedLines[0]);
  if (who) quotedLines[0] = quotedLines[0].slice(who[0].length);
  return { quoted: quotedLines.join('\n').trim(), ...(who && { from: who[1] }), rest: lines.slice(end + 1).join('\n') };
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether the bot is mentioned, and the text without the mention (when it led the message). */
function mentionOf(content: Json, body: string, ctx: RoomContext): { found: boolean; text?: string } {
  const mentions = isRecord(content['m.mentions']) ? content['m.mentions'] : undefined;
  const listed = Array.isArray(mentions?.user_ids) && mentions.user_ids.includes(ctx.botUserId);
  const html = typeof content.formatted_body === 'string' ? content.formatted_body : '';
  const pill = html.includes(`matrix.to/#/${ctx.botUserId}`) || html.includes(`matrix.to/#/${encodeURIComponent(ctx.botUserId)}`);
  const names = [ctx.botUserId, ...ctx.botNames].filter((n) => n.length > 0).map(escapeRe);
  const named = new RegExp(`(^|[^\\p{L}\\p{N}@])(${names.join('|')})(?=$|[^\\p{L}\\p{N}])`, 'iu');
  const inBody = named.test(body);
  if (!listed && !pill && !inBody) return { found: false };
  // `Herald: hi`, `@herald:server hi`: the leading address goes; a name inside the sentence stays.
  const lead = new RegExp(`^\\s*@?(${names.join('|')})\\s*[:,]?\\s*`, 'iu');
  return { found: true, text: body.replace(lead, '') };
}
