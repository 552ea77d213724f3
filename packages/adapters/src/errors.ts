/**
 * Typed errors shared by every adapter, so delivery decides retry / fallback / give up without string matching.
 */

export class PlatformError extends Error {
  /**
   * Platform ids of the chunks a multi-chunk send delivered before this failure: a retry passes their count as
   * `skipChunks`, so the user never sees the first part of an answer twice.
   */
  sentIds: string[] = [];

  constructor(
    message: string,
    readonly platform: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The platform asked us to slow down. */
export class RateLimitedError extends PlatformError {
  constructor(
    platform: string,
    readonly retryAfterMs: number,
    options?: { cause?: unknown },
  ) {
    super(`${platform} rate limit: retry after ${retryAfterMs} ms`, platform, options);
  }
}

/** Token wrong or revoked, or a missing permission/scope: retrying will not help. */
export class AuthError extends PlatformError {}

/** Chat, thread or message does not exist (or the bot cannot see it). */
export class NotFoundError extends PlatformError {}

/** The platform rejected our formatting (Telegram "can't parse entities", Slack invalid blocks). Resend as plain text. */
export class FormattingError extends PlatformError {}

/** Connection reset, DNS, timeout, 5xx: worth retrying. */
export class NetworkError extends PlatformError {}

/** The request itself is wrong (too long, bad parameter): do not retry unchanged. */
export class BadRequestError extends PlatformError {}

/**
 * A file over a size limit: the platform refused an upload for its size (HTTP 413, Discord 40005, Slack
 * file_upload_size_restricted), or a download would pass the limit we were given. `limitBytes` when the limit is
 * known, `size` when the file's size is.
 */
export class FileTooLargeError extends BadRequestError {
  readonly size?: number;

  constructor(
    message: string,
    platform: string,
    readonly limitBytes?: number,
    options?: { cause?: unknown; size?: number },
  ) {
    super(message, platform, options);
    this.size = options?.size;
  }

  /** A download over `limit` bytes (its size when the platform said it, or the download passed the limit). */
  static over(platform: string, limit: number, size?: number, options?: { cause?: unknown }): FileTooLargeError {
    const message = `${platform} file is larger than ${limit} bytes${size === undefined ? '' : ` (${size} bytes)`}`;
    return new FileTooLargeError(message, platform, limit, { ...options, size });
  }
}
