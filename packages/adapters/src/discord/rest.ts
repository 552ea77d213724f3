/**
 * The one REST client of a Discord bot: egress (messages, edits, typing, reactions, interaction answers), files
 * (attachments/refresh-urls) and the gateway connection (the discord.js `Client` of ingress.ts: `GET /gateway/bot`,
 * threads, slash commands, interaction answers) share it, so one rate-limit queue and one connection pool serve the
 * bot. The bot's token stays set for the client's life: discord.js clears it on every `Client.destroy()`, which
 * would cut the egress off when the ingress stops first (createDiscordRest keeps it).
 *
 * @discordjs/rest has one timeout per client; uploads (megabytes) need far longer than a plain call. The client's
 * timeout is the upload one, and every request that is not multipart gets the short deadline of its own, per
 * attempt, as two clients gave it before: a body that is `FormData` is an upload.
 */
// From discord.js (its CommonJS copy of @discordjs/rest): the errors rest-errors.ts maps are that copy's classes.
import { DefaultRestOptions, REST, type RateLimitData } from 'discord.js';
import {
  DISCORD_API_VERSION,
  DISCORD_DEFAULT_API_URL,
  DISCORD_MAX_INLINE_RATE_LIMIT_MS,
  DISCORD_REQUEST_TIMEOUT_MS,
  DISCORD_UPLOAD_TIMEOUT_MS,
} from './config.js';

/** Where a CDN URL is signed afresh (files.ts). */
export const DISCORD_REFRESH_ROUTE = '/attachments/refresh-urls';

export interface DiscordRestOptions {
  botToken: string;
  /** REST base, default `https://discord.com/api`. */
  apiUrl?: string;
  /** Override DISCORD_MAX_INLINE_RATE_LIMIT_MS. */
  maxInlineRateLimitMs?: number;
  /** Override DISCORD_REQUEST_TIMEOUT_MS (every request but an upload). */
  requestTimeoutMs?: number;
}

type MakeRequest = typeof DefaultRestOptions.makeRequest;

/** The library's own transport, with `timeoutMs` for every attempt that is not an upload. */
function withShortDeadline(timeoutMs: number): MakeRequest {
  return async (url, init) => {
    if (init.body instanceof FormData) return DefaultRestOptions.makeRequest(url, init);
    const attempt = new AbortController();
    const outer = init.signal ?? undefined;
    // Aborted without a reason, like the library's own timeout: the same AbortError either way.
    const onAbort = (): void => attempt.abort();
    if (outer?.aborted) onAbort();
    else outer?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(onAbort, timeoutMs);
    try {
      return await DefaultRestOptions.makeRequest(url, { ...init, signal: attempt.signal });
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    }
  };
}

/**
 * A rate limit longer than `maxInlineMs` is thrown (RateLimitedError for the gateway to schedule). A refresh of
 * attachment URLs never waits: the caller reports a failed download and /retry tries again.
 */
function rejectsRateLimit(maxInlineMs: number): (data: RateLimitData) => boolean {
  return (data) => data.route.startsWith(DISCORD_REFRESH_ROUTE) || data.retryAfter > maxInlineMs;
}

export function createDiscordRest(opts: DiscordRestOptions): REST {
  const rest = new REST({
    version: DISCORD_API_VERSION,
    api: opts.apiUrl ?? DISCORD_DEFAULT_API_URL,
    timeout: DISCORD_UPLOAD_TIMEOUT_MS,
    makeRequest: withShortDeadline(opts.requestTimeoutMs ?? DISCORD_REQUEST_TIMEOUT_MS),
    // The gateway owns retries on network errors; retrying here too would multiply them.
    retries: 0,
    rejectOnRateLimit: rejectsRateLimit(opts.maxInlineRateLimitMs ?? DISCORD_MAX_INLINE_RATE_LIMIT_MS),
  });
  const setToken = rest.setToken.bind(rest);
  // Client.destroy() sets the token to null; the egress sharing this client still answers with it.
  rest.setToken = (token) => (token ? setToken(token) : rest);
  return setToken(opts.botToken);
}
