/**
 * Conversation ids for WhatsApp: `whatsapp:<wa_id>`, the user's WhatsApp id (their phone number in international
 * form, digits only). The Cloud API reaches users one to one; which business number answers is the account.
 */
import type { ConversationCodec } from '../types.js';

export interface WhatsAppConversation {
  waId: string;
}

const PREFIX = 'whatsapp';
/** E.164 digits without the plus (the Cloud API's `wa_id`): at most 15 digits. */
const WA_ID_RE = /^\d{5,15}$/;

export function isWaId(v: unknown): v is string {
  return typeof v === 'string' && WA_ID_RE.test(v);
}

export const whatsappCodec: ConversationCodec<WhatsAppConversation> = {
  encode({ waId }) {
    if (!isWaId(waId)) throw new Error(`WhatsApp conversation id: bad wa_id ${JSON.stringify(waId)}`);
    return `${PREFIX}:${waId}`;
  },
  decode(id) {
    const [prefix, waId, ...rest] = id.split(':');
    if (prefix !== PREFIX || rest.length > 0 || !isWaId(waId)) throw new Error(`Not a WhatsApp conversation id: ${JSON.stringify(id)}`);
    return { waId };
  },
};
