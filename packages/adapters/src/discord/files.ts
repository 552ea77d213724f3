/**
 * Discord file downloads: attachments are served by Discord's CDN at the URL the message carried. Those URLs are
 * signed and expire (about a day): a later download of an old attachment fails with 404/403 (NotFoundError,
 * AuthError), which the gateway reports like any failed download.
 */
import { downloadCapped } from '../shared/download.js';
import type { Attachment, DownloadOptions, FileDownload, PlatformFiles } from '../types.js';

const PLATFORM = 'discord';

export class DiscordFiles implements PlatformFiles {
  readonly platform = PLATFORM;

  async download(attachment: Attachment, opts: DownloadOptions): Promise<FileDownload> {
    return downloadCapped({ platform: PLATFORM, url: attachment.url, maxBytes: opts.maxBytes, knownSize: attachment.size, signal: opts.signal });
  }
}
