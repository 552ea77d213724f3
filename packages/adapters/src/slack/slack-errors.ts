/**
 * Maps @slack/web-api errors to Herald's typed errors, so delivery decides retry / fallback / give up
 * without string matching.
 */
import { ErrorCode, type WebAPICallError } from '@slack/web-api';
import { AuthError, BadRequestError, FileTooLargeError, FormattingError, NetworkError, NotFoundError, PlatformError, RateLimitedError } from '../errors.js';

const PLATFORM = 'slack';
/** Slack answers `ratelimited` in a 200 body on some paths; Retry-After is then absent. */
const DEFAULT_RETRY_AFTER_MS = 1_000;

const AUTH_ERRORS = new Set([
  'invalid_auth',
  'not_authed',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'missing_scope',
  'no_permission',
  'not_allowed_token_type',
  'access_denied',
  'ekm_access_denied',
  'team_access_not_granted',
  'org_login_required',
  'team_disabled',
  'user_removed_from_team',
  'file_uploads_disabled',
]);
const NOT_FOUND_ERRORS = new Set([
  'channel_not_found',
  'thread_not_found',
  'message_not_found',
  'not_in_channel',
  'user_not_found',
  'file_not_found',
  'file_deleted',
]);
const FORMATTING_ERRORS = new Set(['invalid_blocks', 'invalid_blocks_format', 'invalid_attachments', 'markdown_text_conflict']);
const TRANSIENT_ERRORS = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

/** Slack's error code from any @slack/web-api error (`channel_not_found`), or undefined. */
export function slackErrorCode(err: unknown): string | undefined {
  if (!isSlackError(err) || err.code !== ErrorCode.PlatformError) return undefined;
  return err.data.error;
}

function isSlackError(err: unknown): err is WebAPICallError {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('slack_webapi_');
}

export function toPlatformError(err: unknown, method: string): PlatformError {
  if (err instanceof PlatformError) return err;
  const opts = { cause: err };
  if (!isSlackError(err)) {
    const text = err instanceof Error ? err.message : String(err);
    return new NetworkError(`slack ${method}: ${text}`, PLATFORM, opts);
  }
  switch (err.code) {
    case ErrorCode.RateLimitedError:
      return new RateLimitedError(PLATFORM, err.retryAfter * 1000, opts);
    case ErrorCode.RequestError:
      return new NetworkError(`slack ${method}: ${err.original.message}`, PLATFORM, opts);
    case ErrorCode.HTTPError: {
      const what = `slack ${method}: HTTP ${err.statusCode}`;
      if (err.statusCode >= 500) return new NetworkError(what, PLATFORM, opts);
      if (err.statusCode === 401 || err.statusCode === 403) return new AuthError(what, PLATFORM, opts);
      if (err.statusCode === 404) return new NotFoundError(what, PLATFORM, opts);
      if (err.statusCode === 413) return new FileTooLargeError(what, PLATFORM, undefined, opts);
      return new BadRequestError(what, PLATFORM, opts);
    }
    case ErrorCode.PlatformError: {
      const code = err.data.error;
      const what = `slack ${method}: ${code}`;
      if (code === 'ratelimited') {
        const sec = err.data.response_metadata?.retryAfter;
        return new RateLimitedError(PLATFORM, sec === undefined ? DEFAULT_RETRY_AFTER_MS : sec * 1000, opts);
      }
      if (AUTH_ERRORS.has(code)) return new AuthError(what, PLATFORM, opts);
      if (code === 'file_upload_size_restricted') return new FileTooLargeError(what, PLATFORM, undefined, opts);
      if (NOT_FOUND_ERRORS.has(code)) return new NotFoundError(what, PLATFORM, opts);
      if (FORMATTING_ERRORS.has(code)) return new FormattingError(what, PLATFORM, opts);
      if (TRANSIENT_ERRORS.has(code)) return new NetworkError(what, PLATFORM, opts);
      return new BadRequestError(what, PLATFORM, opts);
    }
  }
  return new BadRequestError(`slack ${method}: ${(err as Error).message}`, PLATFORM, opts);
}
