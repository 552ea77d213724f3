/**
 * Why a file could not be used, twice: in words for the user ("too large (31 MB; the limit is 20 MB)") and as a
 * short code for the log. Neither ever quotes an error's own message, which could carry a URL (Telegram's holds
 * the bot token) or a piece of the file.
 */
import { AuthError, FileTooLargeError, NetworkError, NotFoundError, PlatformError, RateLimitedError, platformDisplayName } from '@herald/adapters';
import { isRecord } from '@herald/agent-core';
import { CorruptFileError } from './documents.js';

function sizeText(bytes: number): string {
  if (bytes >= 1_000_000) return `${(bytes / 1_000_000).toFixed(1).replace(/\.0$/, '')} MB`;
  if (bytes >= 1_000) return `${Math.round(bytes / 1_000)} KB`;
  return `${bytes} bytes`;
}

export interface Reason {
  why: string;
  log: string;
}

/** `messageLimit`: the download was capped by what was left of the turn's byte budget rather than the file limit. */
export function reasonOf(err: unknown, platform: string, limits: { cap: number; messageLimit?: number }): Reason {
  const from = platformDisplayName(platform);
  if (err instanceof FileTooLargeError) {
    if (limits.messageLimit !== undefined && (err.size === undefined || err.size <= limits.cap)) {
      return { why: `the files of this message together are over the ${sizeText(limits.messageLimit)} limit`, log: 'over message limit' };
    }
    const size = err.size === undefined ? '' : `${sizeText(err.size)}; `;
    return { why: `too large (${size}the limit is ${sizeText(Math.min(err.limitBytes ?? limits.cap, limits.cap))})`, log: 'too large' };
  }
  if (err instanceof CorruptFileError) return { why: 'the file looks damaged and could not be read', log: `corrupt: ${err.message}` };
  if (err instanceof NotFoundError) return { why: `${from} no longer has the file (it may have expired); please send it again`, log: 'download: not found' };
  if (err instanceof AuthError) return { why: `${from} refused the download (check the bot's file permissions)`, log: 'download: refused' };
  if (err instanceof RateLimitedError) return { why: `${from} asked to slow down; please send it again in a minute`, log: 'download: rate limited' };
  if (err instanceof NetworkError || err instanceof PlatformError)
    return { why: `the download from ${from} failed; please send it again`, log: `download: ${err.name}` };
  return { why: 'it could not be processed', log: errorLabel(err) };
}

/** An error's class and HTTP status, when it has one: enough to tell failures apart in a log, nothing it carries. */
export function errorLabel(err: unknown): string {
  const name = err instanceof Error ? err.name : 'error';
  const status = isRecord(err) && typeof err.status === 'number' ? ` HTTP ${err.status}` : '';
  return `${name}${status}`;
}
