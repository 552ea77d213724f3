/**
 * Telegram file downloads: getFile names the file's path, then the client's file URL (`<apiRoot>/file/bot<token>/
 * <path>`) serves it. That URL holds the bot token, so it lives only inside `download` (never logged, stored or put
 * in an error).
 */
import type { Logger } from 'pino';
import { FileTooLargeError, NotFoundError } from '../errors.js';
import { downloadCapped } from '../shared/download.js';
import type { Attachment, DownloadOptions, FileDownload, PlatformFiles } from '../types.js';
import { apiFailure, toPlatformError } from './api-errors.js';
import { TelegramApi } from './api.js';
import { TELEGRAM_FILE_REF_PREFIX, TELEGRAM_MAX_DOWNLOAD_BYTES } from './config.js';

const PLATFORM = 'telegram';

export interface TelegramFilesOptions {
  token: string;
  apiRoot?: string;
  logger: Logger;
}

export class TelegramFiles implements PlatformFiles {
  readonly platform = PLATFORM;
  private readonly api: TelegramApi;

  constructor(opts: TelegramFilesOptions) {
    this.api = new TelegramApi({ token: opts.token, apiRoot: opts.apiRoot, logger: opts.logger });
  }

  async download(attachment: Attachment, opts: DownloadOptions): Promise<FileDownload> {
    const fileId = attachment.fileId ?? attachment.url.replace(TELEGRAM_FILE_REF_PREFIX, '');
    // Telegram said how big it is: no call at all for a file we would refuse anyway.
    if (attachment.size !== undefined && attachment.size > opts.maxBytes) throw FileTooLargeError.over(PLATFORM, opts.maxBytes, attachment.size);
    let path: string | undefined;
    try {
      path = (await this.api.call('getFile', { file_id: fileId }, opts.signal)).file_path;
    } catch (err) {
      // The Bot API serves files up to 20 MB; a larger one is refused by getFile itself.
      const description = apiFailure(err)?.description ?? '';
      if (/file is too big/i.test(description)) {
        throw FileTooLargeError.over(PLATFORM, Math.min(opts.maxBytes, TELEGRAM_MAX_DOWNLOAD_BYTES), attachment.size, { cause: err });
      }
      // A file id Telegram no longer knows (or one from another bot).
      if (/invalid file_id|wrong file_id|file is temporarily unavailable/i.test(description)) {
        throw new NotFoundError(`getFile failed: ${description}`, PLATFORM, { cause: err });
      }
      throw toPlatformError(err, 'getFile');
    }
    if (!path) throw new NotFoundError('getFile returned no file_path', PLATFORM);
    return downloadCapped({ platform: PLATFORM, url: this.api.fileUrl(path), maxBytes: opts.maxBytes, signal: opts.signal });
  }
}
