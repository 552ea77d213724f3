/**
 * The Cloud API message bodies egress sends (`POST /<phone-number-id>/messages`), built in one place.
 */
import type { Button } from '../types.js';
import {
  WHATSAPP_BUTTON_TITLE_MAX,
  WHATSAPP_INTERACTIVE_BODY_MAX,
  WHATSAPP_LIST_ROW_TITLE_MAX,
  WHATSAPP_MAX_LIST_ROWS,
  WHATSAPP_MAX_REPLY_BUTTONS,
  type WindowTemplate,
} from './config.js';

type Body = Record<string, unknown>;

const base = (to: string, replyTo?: string): Body => ({
  messaging_product: 'whatsapp',
  recipient_type: 'individual',
  to,
  ...(replyTo && { context: { message_id: replyTo } }),
});

export function textMessage(to: string, body: string, replyTo?: string): Body {
  return { ...base(to, replyTo), type: 'text', text: { body, preview_url: false } };
}

export function templateMessage(to: string, t: WindowTemplate): Body {
  return { ...base(to), type: 'template', template: { name: t.name, language: { code: t.language } } };
}

export function reactionMessage(to: string, messageId: string, emoji: string): Body {
  return { ...base(to), type: 'reaction', reaction: { message_id: messageId, emoji } };
}

/** Marks the user's message read and shows "typing…" until the reply (or 25 s). */
export function readWithTyping(messageId: string): Body {
  return { messaging_product: 'whatsapp', status: 'read', message_id: messageId, typing_indicator: { type: 'text' } };
}

export function mediaMessage(
  to: string,
  type: 'image' | 'audio' | 'document',
  mediaId: string,
  extra: { caption?: string; filename?: string },
  replyTo?: string,
): Body {
  return { ...base(to, replyTo), type, [type]: { id: mediaId, ...extra } };
}

/** Whether `text` fits as the body of an interactive message (else it goes as text, the buttons under a short one). */
export function fitsInteractive(text: string): boolean {
  return text.length > 0 && text.length <= WHATSAPP_INTERACTIVE_BODY_MAX;
}

/** Up to 3 buttons as reply buttons, more as a list (up to 10 rows; WhatsApp takes no more). */
export function interactiveMessage(to: string, body: string, buttons: readonly Button[], replyTo?: string): Body {
  if (buttons.length <= WHATSAPP_MAX_REPLY_BUTTONS) {
    const action = { buttons: buttons.map((b) => ({ type: 'reply', reply: { id: b.data, title: cut(b.label, WHATSAPP_BUTTON_TITLE_MAX) } })) };
    return { ...base(to, replyTo), type: 'interactive', interactive: { type: 'button', body: { text: body }, action } };
  }
  const rows = buttons.slice(0, WHATSAPP_MAX_LIST_ROWS).map((b) => ({
    id: b.data,
    title: cut(b.label, WHATSAPP_LIST_ROW_TITLE_MAX),
    ...(b.label.length > WHATSAPP_LIST_ROW_TITLE_MAX && { description: cut(b.label, 72) }),
  }));
  return {
    ...base(to, replyTo),
    type: 'interactive',
    interactive: { type: 'list', body: { text: body }, action: { button: 'Choose', sections: [{ title: 'Options', rows }] } },
  };
}

function cut(text: string, max: number): string {
  const chars = [...text.trim()];
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}
