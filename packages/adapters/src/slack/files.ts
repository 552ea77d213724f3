/**
 * Slack file downloads: `url_private(_download)` answers only with the bot token as a bearer (the app needs the
 * `files:read` scope). Without it Slack does not answer 401 but serves its sign-in page (HTML, sometimes after a
 * redirect), so an HTML answer for a file that is not HTML counts as refused.
 *
 * Files shared over Slack Connect, and some large files, reach the app as a stub (`file_access: "check_file_info"`:
 * an id, no type, no URL); `resolve` asks `files.info` (the Web API, same token and scope) for the real file object.
 */
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { NotFoundError } from '../errors.js';
import { kindOfMime } from '../shared/attachment-kind.js';
import { downloadCapped } from '../shared/download.js';
import type { Attachment, DownloadOptions, FileDownload, PlatformFiles } from '../types.js';
import { createSlackClient } from './client.js';
import { SLACK_FILE_REF_PREFIX, type SlackWebClientTuning } from './config.js';
import { toPlatformError } from './slack-errors.js';
import { wireString } from '../shared/wire-values.js';

const PLATFORM = 'slack';

export interface SlackFilesOptions {
  botToken: string;
  /** Web API base (files.info), default `https://slack.com/api/`. */
  apiUrl?: string;
  clientOptions?: SlackWebClientTuning;
  logger?: Logger;
  /** The bot's one Web API client (client.ts), shared with its ingress and egress; built from the options when absent. */
  client?: WebClient;
}

export class SlackFiles implements PlatformFiles {
  readonly platform = PLATFORM;
  private readonly client: WebClient;

  constructor(private readonly opts: SlackFilesOptions) {
    // The caller reports a failure and /retry tries again: no retries (nor rate-limit waits) hidden in the client.
    this.client = opts.client ?? createSlackClient(opts);
  }

  async resolve(attachment: Attachment, signal?: AbortSignal): Promise<Attachment> {
    // A stored reference of a stub (a /retry) is still only an id.
    if (!attachment.unresolved && !attachment.url.startsWith(SLACK_FILE_REF_PREFIX)) return attachment;
    const id = attachment.fileId ?? '';
    let file: Record<string, unknown> | undefined;
    try {
      signal?.throwIfAborted();
      file = (await this.client.files.info({ file: id })).file as Record<string, unknown> | undefined;
    } catch (err) {
      throw toPlatformError(err, 'files.info');
    }
    const url = wireString(file?.url_private_download) ?? wireString(file?.url_private);
    if (!file || url === undefined) throw new NotFoundError('files.info returned no file URL', PLATFORM);
    const mimeType = wireString(file.mimetype);
    const out: Attachment = { kind: kindOfMime(mimeType), url, fileId: id };
    if (mimeType !== undefined) out.mimeType = mimeType;
    const name = wireString(file.name);
    if (name !== undefined) out.name = name;
    if (typeof file.size === 'number') out.size = file.size;
    if (file.subtype === 'slack_audio') out.voice = true;
    return out;
  }

  async download(attachment: Attachment, opts: DownloadOptions): Promise<FileDownload> {
    const att = await this.resolve(attachment, opts.signal);
    const expectsHtml = att.mimeType === 'text/html';
    return downloadCapped({
      platform: PLATFORM,
      url: att.url,
      maxBytes: opts.maxBytes,
      knownSize: att.size,
      signal: opts.signal,
      headers: { authorization: `Bearer ${this.opts.botToken}` },
      refused: (res) =>
        !expectsHtml && res.headers.get('content-type')?.startsWith('text/html')
          ? 'got the sign-in page (check SLACK_BOT_TOKEN and the files:read scope)'
          : null,
    });
  }
}
