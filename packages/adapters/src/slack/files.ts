/**
 * Slack file downloads: `url_private(_download)` answers only with the bot token as a bearer (the app needs the
 * `files:read` scope). Without it Slack does not answer 401 but serves its sign-in page (HTML, sometimes after a
 * redirect), so an HTML answer for a file that is not HTML counts as refused.
 */
import { downloadCapped } from '../shared/download.js';
import type { Attachment, DownloadOptions, FileDownload, PlatformFiles } from '../types.js';

const PLATFORM = 'slack';

export interface SlackFilesOptions {
  botToken: string;
}

export class SlackFiles implements PlatformFiles {
  readonly platform = PLATFORM;

  constructor(private readonly opts: SlackFilesOptions) {}

  async download(attachment: Attachment, opts: DownloadOptions): Promise<FileDownload> {
    const expectsHtml = attachment.mimeType === 'text/html';
    return downloadCapped({
      platform: PLATFORM,
      url: attachment.url,
      maxBytes: opts.maxBytes,
      knownSize: attachment.size,
      signal: opts.signal,
      headers: { authorization: `Bearer ${this.opts.botToken}` },
      refused: (res) =>
        !expectsHtml && res.headers.get('content-type')?.startsWith('text/html') ? 'got the sign-in page (check SLACK_BOT_TOKEN and the files:read scope)' : null,
    });
  }
}
