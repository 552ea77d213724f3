/**
 * One Cloud API webhook message (`entry[].changes[].value.messages[]`) → an InboundMessage, or null for what is
 * not a message to answer (an unsupported type, a reaction taken back). Every field is checked as sent: a webhook
 * is outside input even when signed.
 */
import type { Attachment, InboundMessage } from '../types.js';
import { isWaId, whatsappCodec } from './codec.js';
import { WHATSAPP_MEDIA_REF_PREFIX } from './config.js';
import { isRecord, type Json, wireNumber, wireString } from '../shared/wire-values.js';

/** What `value` carries besides the messages: who the business number is, and the senders' profile names. */
export interface ChangeContext {
  /** The business number's own digits (`metadata.display_phone_number`), to tell replies to the bot apart. */
  displayPhone: string;
  names: ReadonlyMap<string, string>;
}

const MEDIA_KINDS: Record<string, Attachment['kind']> = { image: 'image', audio: 'audio', video: 'video', document: 'file', sticker: 'image' };

/** A field of outside input as a short string for a log line: its text if it is one, else only its kind (an object may not even turn into a string). */
export const logLabel = (v: unknown, max = 32): string => (typeof v === 'string' ? v.slice(0, max) : typeof v === 'number' ? String(v) : typeof v);

/** The profile names in `value.contacts` by wa_id. */
export function contactNames(contacts: unknown): Map<string, string> {
  const names = new Map<string, string>();
  if (!Array.isArray(contacts)) return names;
  for (const c of contacts) {
    if (!isRecord(c) || !isWaId(c.wa_id)) continue;
    const name = isRecord(c.profile) ? wireString(c.profile.name) : undefined;
    if (name) names.set(c.wa_id, name);
  }
  return names;
}

export function normalizeMessage(m: unknown, ctx: ChangeContext): InboundMessage | null {
  if (!isRecord(m) || !isWaId(m.from) || !wireString(m.id) || typeof m.type !== 'string') return null;
  const id = m.id as string;
  const body = bodyOf(m);
  if (body === null) return null;
  // A number or a numeric string (Meta sends a string); anything else (an object that cannot become a primitive) is no time.
  const seconds = wireNumber(m.timestamp);
  const context = isRecord(m.context) ? m.context : undefined;
  const quotedId = wireString(context?.id) ?? body.quotedId;
  return {
    platform: 'whatsapp',
    messageId: id,
    conversationId: whatsappCodec.encode({ waId: m.from }),
    chatType: 'dm',
    chatId: m.from,
    userId: m.from,
    ...(ctx.names.has(m.from) && { userName: ctx.names.get(m.from) }),
    text: body.text,
    attachments: body.attachments,
    platformMessageId: id,
    ...(quotedId && {
      quoted: { platformMessageId: quotedId, text: '', fromBot: body.quotedId !== undefined || wireString(context?.from) === ctx.displayPhone },
    }),
    sentAt: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now(),
    ...(body.press !== undefined && { press: { data: body.press } }),
  };
}

interface Body {
  text: string;
  attachments: Attachment[];
  press?: string;
  /** A reaction's message (the bot's, as far as the user can react to it here). */
  quotedId?: string;
}

function bodyOf(m: Json): Body | null {
  const type = m.type as string;
  const part = Object.hasOwn(m, type) && isRecord(m[type]) ? (m[type] as Json) : undefined;
  if (type === 'text') {
    const text = typeof part?.body === 'string' ? part.body : undefined;
    return text === undefined ? null : { text, attachments: [] };
  }
  if (Object.hasOwn(MEDIA_KINDS, type)) return part ? mediaBody(type, part) : null;
  if (type === 'interactive' && part) {
    const reply = isRecord(part.button_reply) ? part.button_reply : isRecord(part.list_reply) ? part.list_reply : undefined;
    const data = wireString(reply?.id);
    return data ? { text: '', attachments: [], press: data } : null;
  }
  // A template's quick-reply button: its text is what the user chose.
  if (type === 'button' && part) return wireString(part.text) ? { text: part.text as string, attachments: [] } : null;
  if (type === 'reaction' && part) {
    const emoji = wireString(part.emoji);
    const on = wireString(part.message_id);
    // An empty emoji takes a reaction back: nothing to answer.
    return emoji && on ? { text: `[reacted ${emoji} to your message]`, attachments: [], quotedId: on } : null;
  }
  if (type === 'location' && part) {
    const lat = wireNumber(part.latitude);
    const lon = wireNumber(part.longitude);
    if (!Number.isFinite(lat) || !Number.isFinite(lon)) return null;
    const label = [wireString(part.name), wireString(part.address)].filter(Boolean).join(', ');
    return { text: `[location: ${lat}, ${lon}${label ? ` (${label})` : ''}]`, attachments: [] };
  }
  return null;
}

function mediaBody(type: string, part: Json): Body | null {
  const mediaId = wireString(part.id);
  if (!mediaId || !/^[\w.-]{1,128}$/.test(mediaId)) return null;
  const mimeType = wireString(part.mime_type);
  const attachment: Attachment = {
    kind: MEDIA_KINDS[type],
    url: `${WHATSAPP_MEDIA_REF_PREFIX}${mediaId}`,
    fileId: mediaId,
    ...(mimeType && { mimeType }),
    ...(wireString(part.filename) && { name: part.filename as string }),
    ...(type === 'audio' && part.voice === true && { voice: true }),
  };
  return { text: typeof part.caption === 'string' ? part.caption : '', attachments: [attachment] };
}
