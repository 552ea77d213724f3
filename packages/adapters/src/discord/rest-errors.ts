/**
 * Maps what @discordjs/rest throws onto the shared typed errors, so delivery decides without string matching.
 */
import { DiscordAPIError, HTTPError, RateLimitError } from 'discord.js';
import { AuthError, BadRequestError, FileTooLargeError, NetworkError, NotFoundError, PlatformError, RateLimitedError } from '../errors.js';

const PLATFORM = 'discord';

/** Discord JSON error codes we act on (https://discord.com/developers/docs/topics/opcodes-and-status-codes). */
export const DiscordErrorCode = {
  UnknownChannel: 10003,
  UnknownMessage: 10008,
  UnknownEmoji: 10014,
  MissingAccess: 50001,
  MissingPermissions: 50013,
  InvalidFormBody: 50035,
  RequestEntityTooLarge: 40005,
  ThreadAlreadyCreated: 160004,
} as const;

const NOT_FOUND_CODES: unknown[] = [DiscordErrorCode.UnknownChannel, DiscordErrorCode.UnknownMessage, DiscordErrorCode.MissingAccess];

export function toPlatformError(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  if (err instanceof RateLimitError) {
    return new RateLimitedError(PLATFORM, Math.max(0, Math.ceil(err.retryAfter)), { cause: err });
  }
  if (err instanceof DiscordAPIError) {
    const text = `Discord ${err.method} ${pathOf(err.url)} failed: ${err.status} ${err.message} (code ${err.code})`;
    // Missing Access (50001) means the bot cannot see the channel: for delivery that is "not there", not a bad token.
    if (err.status === 404 || NOT_FOUND_CODES.includes(err.code)) {
      return new NotFoundError(text, PLATFORM, { cause: err });
    }
    if (err.status === 413 || err.code === DiscordErrorCode.RequestEntityTooLarge) return new FileTooLargeError(text, PLATFORM, undefined, { cause: err });
    if (err.status === 401 || err.status === 403) return new AuthError(text, PLATFORM, { cause: err });
    if (err.status === 429) return new RateLimitedError(PLATFORM, retryAfterOf(err.rawError), { cause: err });
    if (err.status >= 500) return new NetworkError(text, PLATFORM, { cause: err });
    return new BadRequestError(text, PLATFORM, { cause: err });
  }
  if (err instanceof HTTPError) {
    const text = `Discord ${err.method} ${pathOf(err.url)} failed: ${err.status} ${err.message}`;
    // A 413 from in front of the API (no JSON body) is still "too large", not worth retrying.
    if (err.status === 413) return new FileTooLargeError(text, PLATFORM, undefined, { cause: err });
    return new NetworkError(text, PLATFORM, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new NetworkError(`Discord request failed: ${message}`, PLATFORM, { cause: err });
}

/** True when Discord refused the reply reference rather than the message itself. */
export function isReplyReferenceRejection(err: unknown): boolean {
  if (!(err instanceof DiscordAPIError)) return false;
  if (err.code === DiscordErrorCode.UnknownMessage) return true;
  if (err.code !== DiscordErrorCode.InvalidFormBody) return false;
  const raw: unknown = err.rawError;
  const errors = typeof raw === 'object' && raw !== null && 'errors' in raw ? raw.errors : undefined;
  // Without field details we cannot tell, and resending once without the reference is cheap.
  if (typeof errors !== 'object' || errors === null) return true;
  return 'message_reference' in errors;
}

function retryAfterOf(raw: unknown): number {
  if (typeof raw === 'object' && raw !== null && 'retry_after' in raw && typeof raw.retry_after === 'number') {
    return Math.ceil(raw.retry_after * 1000);
  }
  return 1000;
}

/** Drops scheme and host so logs and messages never carry a proxy URL with credentials. */
function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}
