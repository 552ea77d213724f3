/** Public records of the Telegram stand-in and the context its method handlers share. */
import type { TelegramErrorBody } from './errors.js';
import type { Json, JsonObject, World } from './state.js';

/** One successful write by the bot, flattened for easy assertions. */
export interface SentRecord {
  method: string;
  chat_id: string;
  /** The text as users see it: after HTML parsing (the raw request is in `params.text`). */
  text?: string;
  parse_mode?: string;
  message_thread_id?: number;
  /** From `reply_parameters.message_id` or the legacy `reply_to_message_id`. */
  reply_to_message_id?: number;
  /** The message created, edited or reacted to. */
  message_id?: number;
  action?: string;
  reaction?: Json;
  /** Uploads (sendPhoto, sendDocument, sendVoice, sendAudio): the caption and the file as it arrived. */
  caption?: string;
  file?: SentFile;
  params: JsonObject;
}

export interface SentFile {
  /** The multipart field (photo, document, voice, audio) and what the message shows it as. */
  field: string;
  shownAs: 'photo' | 'document' | 'voice' | 'audio';
  name: string;
  contentType: string;
  data: Buffer;
  /** Voice notes: seconds, read from the Ogg stream. */
  duration?: number;
}

/** Sizes the stand-in enforces, as Telegram's cloud Bot API does (tests shrink them). */
export interface UploadLimits {
  /** A whole multipart request; above it: 413 Request Entity Too Large. Telegram: 50 MB. */
  requestBytes: number;
  /** sendPhoto's photo; above it Telegram cannot make a photo (PHOTO_SAVE_FILE_INVALID). Telegram: 10 MB. */
  photoBytes: number;
}

/** Every API call, failed or not. */
export interface ApiCallRecord {
  method: string;
  params: JsonObject;
  status: number;
  description?: string;
}

export interface WebhookDelivery {
  update_id: number;
  status: number | 'network-error';
}

export interface WebhookConfig {
  url: string;
  secret_token?: string;
  allowed_updates?: string[];
}

/** 'network': the socket is destroyed; 'silence': the request is never answered (a connection that died quietly). */
export type Failure = TelegramErrorBody | 'network' | 'silence';

/** What method handlers can reach. */
export interface FakeContext {
  world: World;
  sent: SentRecord[];
  webhook: WebhookConfig | null;
  setWebhook(config: WebhookConfig | null): void;
  commands: Json;
  /** allowed_updates remembered from the last getUpdates/setWebhook that named them. */
  allowedUpdates: string[] | null;
  longPoll(params: JsonObject, onClose: (cb: () => void) => void): Promise<Json>;
  limits: UploadLimits;
  /** Callback queries users made (button presses), by id, and whether the bot answered each. */
  callbackQueries: Map<string, { answered: boolean }>;
  /** Whether the server knows sendMessageDraft (Bot API 9.3+); false answers 404 Not Found as older servers do. */
  draftsSupported: boolean;
}
