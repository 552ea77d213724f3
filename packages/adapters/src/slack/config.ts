/**
 * Slack adapter options (plain objects the gateway builds from its config) and the platform's named constants.
 */
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { SlackCommandEntry } from './command-gate.js';

/** Slack truncates `text` above 40,000 characters; keep room for the ` (i/N)` suffix and mrkdwn expansion. */
export const SLACK_MAX_MESSAGE_LENGTH = 39_000;
/** `assistant.threads.setStatus` clears itself after two minutes or on the next reply; refresh well before. */
export const SLACK_TYPING_REFRESH_MS = 10_000;
export const SLACK_DEFAULT_API_URL = 'https://slack.com/api/';
export const SLACK_EVENTS_PATH = '/slack/events';
/** Event ids and channel+ts keys remembered for dedupe; Slack retries within minutes, so a few thousand is plenty. */
export const SLACK_DEDUPE_CAPACITY = 5_000;
/**
 * How long an event's acknowledgement may wait for its hand-over (slack/ack-gate.ts), from its arrival: Slack
 * wants it within 3 s, and the rest is the network's. Past it the event is not acknowledged, so Slack redelivers it.
 */
export const SLACK_ACK_BUDGET_MS = 2_500;
/**
 * The longest Redis WAIT (HERALD_REDIS_WAIT_TIMEOUT_MS) that fits in SLACK_ACK_BUDGET_MS with room for the rest of
 * the hand-over; the gateway refuses a longer one when Slack is configured.
 */
export const SLACK_MAX_REPLICA_WAIT_MS = 2_000;
/** Retries of a `ratelimited` answer inside egress before handing a RateLimitedError to delivery. */
export const SLACK_RATE_LIMIT_RETRIES = 2;
/** A Retry-After longer than this is not waited out inline: delivery reschedules instead of holding a worker. */
export const SLACK_MAX_INLINE_RETRY_WAIT_MS = 30_000;
export const SLACK_TYPING_STATUS = 'is typing…';
/** Socket Mode: how long to wait for a pong; the SDK also waits this long (times failures) before reconnecting. */
export const SLACK_CLIENT_PING_TIMEOUT_MS = 5_000;
export const SLACK_SERVER_PING_TIMEOUT_MS = 30_000;
/** Our own retry of a failed Socket Mode reconnect (the SDK gives up on network errors and revoked tokens). */
export const SLACK_RECONNECT_RETRY_MS = 5_000;
export const SLACK_RECONNECT_RETRY_MAX_MS = 60_000;
/** Upper bound on waiting for the WebSocket close handshake in stop(). */
export const SLACK_STOP_TIMEOUT_MS = 5_000;
/** A Web API call with no answer for this long fails (the client's default is to wait forever). */
export const SLACK_REQUEST_TIMEOUT_MS = 30_000;
/** A file Slack sent only the id of (`file_access: "check_file_info"`): `slack-file:<id>`, resolved through files.info. */
export const SLACK_FILE_REF_PREFIX = 'slack-file:';
/** `metadata.event_type` on every chunk of a reply sent with an idempotency key; the payload is `{ key, chunk }`. */
export const SLACK_REPLY_METADATA_EVENT = 'herald_reply';
/**
 * How far back `recover` looks for chunks an earlier attempt sent: a crashed worker's job is taken over within
 * about a minute, so this is generous. Older chunks are not found and are sent again.
 */
export const SLACK_RECOVER_LOOKBACK_MS = 15 * 60_000;
/**
 * Messages per page of that look-up, and pages at most. Slack caps apps not approved for its Marketplace at 15
 * messages a page and one call a minute on conversations.history / conversations.replies, so a busy channel may
 * hide an earlier chunk: it is then sent again, and the gateway counts the possible duplicate.
 */
export const SLACK_RECOVER_PAGE_SIZE = 100;
export const SLACK_RECOVER_MAX_PAGES = 3;

/**
 * Threads the bot takes part in, keyed by conversation id (`slack:<channel>:<thread_ts>`).
 * The gateway backs it with SQLite; a `Set<string>` works in tests.
 */
export interface ThreadMemory {
  has(conversationId: string): boolean | Promise<boolean>;
  add(conversationId: string): unknown;
}

/** The subset of @slack/web-api client options the gateway may tune (tests pass `retryConfig: { retries: 0 }`). */
export interface SlackWebClientTuning {
  retryConfig?: { retries: number; factor?: number; minTimeout?: number; maxTimeout?: number };
  /** Per-request timeout in ms; 0 means none. */
  timeout?: number;
}

export interface SlackIngressOptions {
  /** `xoxb-…` bot token. */
  botToken: string;
  /** `xapp-…` app-level token: Socket Mode. Takes precedence over `signingSecret`. */
  appToken?: string;
  /** Signing secret: Events over HTTP at `POST /slack/events` or `eventsPath` (see `registerRoutes`). */
  signingSecret?: string;
  /** Where Events over HTTP are posted (the app's Request URL path); default `/slack/events`. */
  eventsPath?: string;
  /** Web API base, default `https://slack.com/api/`. Also where Socket Mode calls `apps.connections.open`. */
  apiUrl?: string;
  threads: ThreadMemory;
  /**
   * The gateway's command table: with `slashCommands: 'each'`, each name (and alias) is taken as `/herald-<name>`.
   * `queues` marks a command whose effect is a queued message: acknowledged only once it was handed over
   * (command-gate.ts). Absent: every slash command is taken for one that queues.
   */
  commands?: (SlackCommandEntry & { description: string })[];
  /** `single` (default): one `/herald <command>`; `each`: also one slash command per command, `/herald-<name>`. */
  slashCommands?: 'single' | 'each';
  logger: Logger;
  clientOptions?: SlackWebClientTuning;
  /** The bot's one Web API client (client.ts), shared with its egress and files; built from the options when absent. */
  client?: WebClient;
  socketMode?: { clientPingTimeoutMs?: number; serverPingTimeoutMs?: number; reconnectRetryMs?: number };
  dedupeCapacity?: number;
  /** How long an event's acknowledgement may wait for its hand-over; default SLACK_ACK_BUDGET_MS. */
  ackBudgetMs?: number;
}

export interface SlackEgressOptions {
  botToken: string;
  apiUrl?: string;
  logger: Logger;
  /** Default `{ retries: 0 }`: the gateway owns retries of network errors. */
  clientOptions?: SlackWebClientTuning;
  /** The bot's one Web API client (client.ts), shared with its ingress and files; built from the options when absent. */
  client?: WebClient;
  rateLimitRetries?: number;
  maxInlineRetryWaitMs?: number;
  typingStatus?: string;
}
