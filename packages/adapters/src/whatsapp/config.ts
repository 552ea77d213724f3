/**
 * WhatsApp (Meta's WhatsApp Business Cloud API) adapter options and the platform's named constants.
 */
import type { Logger } from 'pino';

/** Graph API base with its version; every call is `<base>/<phone-number-id>/…` or `<base>/<media-id>`. */
export const WHATSAPP_DEFAULT_API_URL = 'https://graph.facebook.com/v22.0';
/** Where Meta posts the webhook (the app's Callback URL path); one app's numbers all arrive here. */
export const WHATSAPP_WEBHOOK_PATH = '/whatsapp/webhook';
/** A text message's `body` is at most 4,096 characters. */
export const WHATSAPP_MAX_MESSAGE_LENGTH = 4_096;
/** Captions of images and documents: at most 1,024 characters. */
export const WHATSAPP_MAX_CAPTION_LENGTH = 1_024;
/** The typing indicator shows for 25 s or until the reply; refresh before it ends. */
export const WHATSAPP_TYPING_REFRESH_MS = 20_000;
/** Interactive reply buttons: at most 3, titles at most 20 characters, ids at most 256. */
export const WHATSAPP_MAX_REPLY_BUTTONS = 3;
export const WHATSAPP_BUTTON_TITLE_MAX = 20;
/** A list message: at most 10 rows, row titles at most 24 characters, the opening button's label at most 20. */
export const WHATSAPP_MAX_LIST_ROWS = 10;
export const WHATSAPP_LIST_ROW_TITLE_MAX = 24;
/** An interactive message's body: at most 1,024 characters (a longer reply goes first, the buttons under its tail). */
export const WHATSAPP_INTERACTIVE_BODY_MAX = 1_024;
/** The customer-service window: free-form messages only within 24 h of the user's last message. */
export const WHATSAPP_SERVICE_WINDOW_MS = 24 * 60 * 60_000;
/** Cloud API media limits by kind (bytes): what an upload may be and a download is allowed to be. */
export const WHATSAPP_MEDIA_LIMITS = { image: 5 * 1024 * 1024, audio: 16 * 1024 * 1024, video: 16 * 1024 * 1024, document: 100 * 1024 * 1024 } as const;
/** Webhook bodies Meta sends are small; anything past this is refused before it is read. */
export const WHATSAPP_WEBHOOK_BODY_LIMIT = 1024 * 1024;
/** Message ids remembered to drop Meta's redeliveries in this process (the mailbox dedupes across processes). */
export const WHATSAPP_DEDUPE_CAPACITY = 5_000;
/**
 * How long a webhook request waits for its messages' hand-over (Redis away, a replica WAIT timing out) before it
 * is answered 503: Meta then delivers the batch again (it gives up on a call after about 20 s anyway), and the
 * redelivery joins the hand-over still running (ingress.ts).
 */
export const WHATSAPP_WEBHOOK_ANSWER_MS = 5_000;
/** A Graph call with no answer for this long fails (a NetworkError delivery retries). */
export const WHATSAPP_REQUEST_TIMEOUT_MS = 30_000;
/** Media ids travel as `wa-media:<id>` in attachments (never the download URL, which expires after 5 minutes). */
export const WHATSAPP_MEDIA_REF_PREFIX = 'wa-media:';

/** A user's last message to a business number: when (ms since epoch) and its id (typing and read receipts need it). */
export interface LastInbound {
  at: number;
  messageId: string;
}

/**
 * Each user's last message to each business number, so egress knows whether the 24-hour window is open and which
 * message to show typing on. The gateway keeps it in Redis (any worker replies); a Map works in tests.
 */
export interface ServiceWindowMemory {
  touch(phoneNumberId: string, waId: string, last: LastInbound): Promise<void>;
  last(phoneNumberId: string, waId: string): Promise<LastInbound | null>;
}

/** A pre-approved template sent when the window is closed (Meta allows only templates then). */
export interface WindowTemplate {
  name: string;
  language: string;
}

export interface WhatsAppIngressOptions {
  /** The business phone number this ingress answers for (`metadata.phone_number_id` of its webhooks). */
  phoneNumberId: string;
  logger: Logger;
  window: ServiceWindowMemory;
  dedupeCapacity?: number;
}

export interface WhatsAppEgressOptions {
  accessToken: string;
  phoneNumberId: string;
  apiUrl?: string;
  logger: Logger;
  window: ServiceWindowMemory;
  /** Sent instead of a reply when the window is closed; absent: the reply is refused (WindowClosedError). */
  template?: WindowTemplate;
  timeoutMs?: number;
}

export interface WhatsAppWebhookOptions {
  /** The app secret: `X-Hub-Signature-256` is an HMAC-SHA256 of the raw body with it. */
  appSecret: string;
  /** What the operator typed as the Verify Token in the app's webhook settings. */
  verifyToken: string;
  logger: Logger;
  path?: string;
  /** How long a request waits for its hand-overs before answering 503; default WHATSAPP_WEBHOOK_ANSWER_MS. */
  answerWithinMs?: number;
}
