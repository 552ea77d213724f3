/**
 * Reading Bot API failures, as the client (api.ts) throws them: `TelegramError` carrying Telegram's `{error_code,
 * description, parameters}` for API errors (and for HTTP 5xx), from either of its transports; a network failure is
 * Node's own error naming the method and the redacted endpoint (JSON calls) or node-fetch's `FetchError` (uploads,
 * through telegraf).
 * Everything that leaves this adapter is one of the shared typed errors.
 */
import { TelegramError } from 'telegraf';
import { AuthError, BadRequestError, FileTooLargeError, FormattingError, NetworkError, NotFoundError, PlatformError, RateLimitedError } from '../errors.js';

const PLATFORM = 'telegram';

export interface ApiFailure {
  code: number;
  description: string;
  retryAfterSec?: number;
}

/** Telegram's error fields when `err` is an API answer; undefined for network failures and anything else. */
export function apiFailure(err: unknown): ApiFailure | undefined {
  if (!(err instanceof TelegramError)) return undefined;
  const retry = err.parameters?.retry_after;
  return { code: err.code, description: err.description ?? '', ...(retry !== undefined && { retryAfterSec: retry }) };
}

function describes(err: unknown, re: RegExp): boolean {
  const f = apiFailure(err);
  return f !== undefined && f.code === 400 && re.test(f.description);
}

export const isParseEntitiesError = (err: unknown): boolean => describes(err, /can't parse entities/i);
export const isNotModified = (err: unknown): boolean => describes(err, /message is not modified/i);
export const isThreadNotFound = (err: unknown): boolean => describes(err, /message thread not found/i);
export const isReplyNotFound = (err: unknown): boolean => describes(err, /message to be replied not found/i);
/** sendPhoto could not make a photo of the file (not a picture Telegram reads, too big, odd dimensions): send it as a document. */
export const isPhotoRefused = (err: unknown): boolean =>
  describes(err, /IMAGE_PROCESS_FAILED|PHOTO_INVALID_DIMENSIONS|PHOTO_SAVE_FILE_INVALID|PHOTO_EXT_INVALID/i);
/** The chat does not take this reaction (or any): reacting is best-effort, so these are not errors. */
export const isReactionRefused = (err: unknown): boolean =>
  describes(err, /REACTION_INVALID|REACTIONS_TOO_MANY|REACTION_EMPTY|reactions? (are|is) (not allowed|disabled|unavailable)/i);

/** 409 from getUpdates: another poller took over, or a webhook is set. */
export const isConflict = (err: unknown): boolean => apiFailure(err)?.code === 409;

export function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}

/** Maps any failure of a Bot API call to the shared typed errors. */
export function toPlatformError(err: unknown, what: string): PlatformError {
  if (err instanceof PlatformError) return err;
  const f = apiFailure(err);
  if (f === undefined) {
    const reason = err instanceof Error ? err.message : String(err);
    return new NetworkError(`${what} failed: ${reason}`, PLATFORM, { cause: err });
  }
  const message = `${what} failed: ${f.code} ${f.description}`;
  const options = { cause: err };
  if (f.code === 429) return new RateLimitedError(PLATFORM, (f.retryAfterSec ?? 1) * 1000, options);
  // 413 "Request Entity Too Large": an upload over the Bot API's limit (50 MB on Telegram's own servers).
  if (f.code === 413) return new FileTooLargeError(message, PLATFORM, undefined, options);
  // 404 "Not Found" on a Bot API path means a malformed token, not a missing chat.
  if (f.code === 401 || f.code === 404) return new AuthError(`${message} (check TELEGRAM_BOT_TOKEN)`, PLATFORM, options);
  if (f.code === 403) return new AuthError(message, PLATFORM, options);
  if (f.code >= 500) return new NetworkError(message, PLATFORM, options);
  if (f.code === 400) {
    if (isParseEntitiesError(err)) return new FormattingError(message, PLATFORM, options);
    if (/not found|chat_id is empty|PEER_ID_INVALID|TOPIC_DELETED/i.test(f.description)) {
      return new NotFoundError(message, PLATFORM, options);
    }
    if (/not enough rights|have no rights|CHAT_WRITE_FORBIDDEN|CHAT_RESTRICTED/i.test(f.description)) {
      return new AuthError(message, PLATFORM, options);
    }
  }
  return new BadRequestError(message, PLATFORM, options);
}
