/**
 * Discord adapter options and the platform's numbers, in one place.
 */
import type { REST } from 'discord.js';
import type { Logger } from 'pino';
import type { CommandMenuEntry, SlashCommandSettings } from './app-commands.js';

/** Discord rejects message content longer than this (UTF-16 code units). */
export const DISCORD_MAX_MESSAGE_LENGTH = 2000;
/** Discord shows "typing…" for about 10 s; refreshing at 8 s keeps it steady without gaps. */
export const DISCORD_TYPING_REFRESH_MS = 8000;
/**
 * Create Message takes a `nonce` of at most 25 characters; with `enforce_nonce` Discord returns the message the
 * same author created with that nonce "in the past few minutes" (its words; the window is not given exactly).
 */
export const DISCORD_NONCE_MAX_LENGTH = 25;
export const DISCORD_API_VERSION = '10';
export const DISCORD_DEFAULT_API_URL = 'https://discord.com/api';

/** Discord allows 100; 80 keeps a thread name readable in the channel sidebar. */
export const DISCORD_THREAD_NAME_MAX = 80;
export const DISCORD_THREAD_FALLBACK_NAME = 'Conversation';

/** Message ids remembered to drop events Discord replays after a RESUME. */
export const DISCORD_DEDUPE_CAPACITY = 5000;
/** Text given to the agent when a message carried nothing but the mention (or only attachments). */
export const DISCORD_EMPTY_TEXT_NOTE = '(the user sent no text)';

/**
 * 429s shorter than this are waited out inside @discordjs/rest's queue; longer ones surface as RateLimitedError,
 * so the gateway can schedule the retry instead of holding a worker slot for a minute.
 */
export const DISCORD_MAX_INLINE_RATE_LIMIT_MS = 10_000;
export const DISCORD_REQUEST_TIMEOUT_MS = 15_000;
/** A message with an attachment (megabytes to upload) may take this long. */
export const DISCORD_UPLOAD_TIMEOUT_MS = 300_000;
/**
 * Discord ACKs a heartbeat every ~41 s, so an open connection is never quiet for longer. Past this without an
 * event or an ACK the socket is dead even if discord.js has not noticed yet (its zombie check can take ~82 s).
 */
export const DISCORD_SILENCE_LIMIT_MS = 60_000;

/** Where the Message Content intent is switched on; quoted in the 4014 start-up error. */
export const DISCORD_PRIVILEGED_INTENT_HINT = 'Discord Developer Portal → your application → Bot → Privileged Gateway Intents → Message Content Intent';

export type AllowBots = 'none' | 'mentions' | 'all';

/** Threads the bot takes part in. The gateway backs this with SQLite so it survives restarts. */
export interface ThreadParticipation {
  has(threadId: string): boolean | Promise<boolean>;
  add(threadId: string): void | Promise<void>;
}

export interface DiscordIngressOptions {
  botToken: string;
  /** REST base (DISCORD_API_URL); the gateway WebSocket URL comes from `GET /gateway/bot`. */
  apiUrl?: string;
  /** The bot's one REST client (rest.ts), shared with its egress; built from botToken and apiUrl when absent. */
  rest?: REST;
  /** In servers, only take mentions, replies to the bot, threads it is in and free-response channels. Default true. */
  requireMention?: boolean;
  /** A top-level mention in a text channel opens a thread for the conversation. Default true. */
  autoThread?: boolean;
  /** Channel ids where every message is taken without a mention. */
  freeResponseChannels?: string[];
  /** Messages from other bots: ignored (default), only when they mention this bot, or all. */
  allowBots?: AllowBots;
  threads: ThreadParticipation;
  /** The gateway's command table, registered as application (slash) commands once the gateway is ready. */
  commands?: CommandMenuEntry[];
  /** Whether and where to register them (default: enabled, global). */
  slashCommands?: SlashCommandSettings;
  logger: Logger;
  /** Override DISCORD_SILENCE_LIMIT_MS (tests). */
  silenceLimitMs?: number;
}

export interface DiscordEgressOptions {
  botToken: string;
  apiUrl?: string;
  logger: Logger;
  /** Override DISCORD_MAX_INLINE_RATE_LIMIT_MS. */
  maxInlineRateLimitMs?: number;
  /** Override DISCORD_REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /** The bot's one REST client (rest.ts), shared with its files; built from the options above when absent. */
  rest?: REST;
}
