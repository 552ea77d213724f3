/**
 * Options the gateway builds from its config, and the Telegram constants every other file reads.
 */
import type { Logger } from 'pino';
import type { PartsMemory } from './parts-memory.js';

export const TELEGRAM_DEFAULT_API_ROOT = 'https://api.telegram.org';
/** UTF-16 code units of message text after entity parsing. */
export const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;
/** Telegram shows "typing…" for about 5 s; refresh a little before it fades. */
export const TELEGRAM_TYPING_REFRESH_MS = 4000;
/** sendPhoto takes photos up to this size; a larger picture goes as a document. */
export const TELEGRAM_MAX_PHOTO_BYTES = 10 * 1024 * 1024;
/** Media captions: at most this many characters after entity parsing. */
export const TELEGRAM_MAX_CAPTION_LENGTH = 1024;
/** Files travel as `tg-file:<file_id>` references: the download URL holds the bot token and is never stored. */
export const TELEGRAM_FILE_REF_PREFIX = 'tg-file:';
/** The Bot API's getFile serves files up to this size; larger ones answer "file is too big". */
export const TELEGRAM_MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;
/** Forum supergroups have an undeletable "General" topic with this id. */
export const TELEGRAM_GENERAL_TOPIC_ID = '1';
/**
 * Clients cut a text longer than 4096 characters into parts sent back to back: Telegram Desktop at the best break
 * (paragraph, line, sentence, word) past half the limit, Android at the limit itself. So only a text longer than
 * half the limit can be a part that another follows; a shorter one is a message of its own, or a split's last part.
 */
export const TELEGRAM_SPLIT_MIN_PART = TELEGRAM_MAX_MESSAGE_LENGTH / 2 + 1;
/** The parts of a split are sent back to back: a message dated later than this after the one before it is a new one. */
export const TELEGRAM_SPLIT_MAX_GAP_SEC = 2;
/** How long one getUpdates call may wait server-side (seconds). */
export const TELEGRAM_POLL_TIMEOUT_SEC = 50;
/** Update ids remembered for de-duplication (webhook retries, re-polled unconfirmed updates). */
export const TELEGRAM_DEDUPE_SIZE = 4096;
/**
 * How long a webhook request waits for its update's hand-over before answering 503: a hand-over held up (Redis
 * away, a replica WAIT timing out) goes on being retried by the gateway, and Telegram's resend gets its outcome. A
 * bounded answer keeps requests from piling up open while Redis is away, and is well inside Telegram's own wait.
 */
export const TELEGRAM_WEBHOOK_ANSWER_MS = 5_000;
/** A 429 is retried in place at most this many times before RateLimitedError reaches the caller. */
export const TELEGRAM_RATE_LIMIT_RETRIES = 2;
/** A retry_after longer than this is not slept through inside a send: the caller gets RateLimitedError at once. */
export const TELEGRAM_MAX_INLINE_RETRY_AFTER_MS = 30_000;
/** Only message updates reach the agent; everything else is not even fetched. Each type has its handler in normalize.ts (routeUpdate). */
export const TELEGRAM_ALLOWED_UPDATES = ['message', 'callback_query'] as const;

/** Waits between reconnect attempts. Injectable so tests do not sleep for minutes. */
export interface ReconnectWaits {
  /** One wait per retry after a 409 conflict (another poller, or a webhook set); when they run out the ingress is fatal. */
  conflictMs: number[];
  /** First wait after a network error; doubles on every further failure. */
  networkInitialMs: number;
  /** Ceiling of the network wait during the first `networkLongAfter` failures. */
  networkMaxMs: number;
  /** After that many consecutive failures the ceiling rises to `networkLongMaxMs`, and retries go on forever. */
  networkLongAfter: number;
  networkLongMaxMs: number;
}

export const TELEGRAM_DEFAULT_WAITS: ReconnectWaits = {
  conflictMs: [2_000, 4_000, 8_000, 16_000, 32_000],
  networkInitialMs: 5_000,
  networkMaxMs: 60_000,
  networkLongAfter: 10,
  networkLongMaxMs: 300_000,
};

/** Sleeps `ms`, resolving early (never rejecting) when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface TelegramCommand {
  name: string;
  description: string;
}

export interface TelegramWebhookOptions {
  /** Public https URL Telegram posts updates to. */
  url: string;
  /** Checked against `X-Telegram-Bot-Api-Secret-Token`; a random one is generated when absent. */
  secret?: string;
  /** Route mounted on the gateway's fastify; defaults to the URL's path (set it when a proxy rewrites paths). */
  path?: string;
  /** How long a request waits for its hand-over before answering 503; default TELEGRAM_WEBHOOK_ANSWER_MS. */
  answerWithinMs?: number;
}

export interface TelegramIngressOptions {
  token: string;
  /** Bot API root, e.g. a local Bot API server; defaults to https://api.telegram.org. */
  apiRoot?: string;
  /** Webhook mode when set; long polling otherwise. */
  webhook?: TelegramWebhookOptions;
  /** In groups, only messages that mention the bot, reply to it or are commands are taken (default true). */
  requireMention?: boolean;
  /** Published as the bot's command menu at start-up. */
  commands?: TelegramCommand[];
  logger: Logger;
  /** A Bot API call with no answer for this long fails (getUpdates: its poll timeout plus this). */
  callTimeoutMs?: number;
  /** Shortest text that another part may follow (default TELEGRAM_SPLIT_MIN_PART). */
  splitMinPartLength?: number;
  /** Where the albums and split texts taken are remembered (default: this process; the gateway: Redis). */
  partsMemory?: PartsMemory;
  dedupeSize?: number;
  pollTimeoutSec?: number;
  waits?: Partial<ReconnectWaits>;
  sleep?: Sleep;
}

export interface TelegramEgressOptions {
  token: string;
  apiRoot?: string;
  logger: Logger;
  /** Used to wait out 429 retry_after; injectable for tests. */
  sleep?: Sleep;
  maxInlineRetryAfterMs?: number;
  /** A Bot API call with no answer for this long fails. */
  callTimeoutMs?: number;
}
