/**
 * Downloading what users send: `GET /<media-id>` gives a short-lived URL (5 minutes), fetched with the same bearer
 * token, within the size cap (an announced `file_size` over it fetches nothing).
 */
import { BadRequestError } from '../errors.js';
import { downloadCapped } from '../shared/download.js';
import type { Attachment, DownloadOptions, FileDownload, PlatformFiles } from '../types.js';
import { WHATSAPP_DEFAULT_API_URL, WHATSAPP_MEDIA_REF_PREFIX } from './config.js';
import { GraphClient, type MediaInfo } from './graph.js';
import { wireNumber } from '../shared/wire-values.js';

export interface WhatsAppFilesOptions {
  accessToken: string;
  apiUrl?: string;
}

export class WhatsAppFiles implements PlatformFiles {
  readonly platform = 'whatsapp' as const;
  private readonly graph: GraphClient;

  constructor(opts: WhatsAppFilesOptions) {
    this.graph = new GraphClient({ apiUrl: opts.apiUrl ?? WHATSAPP_DEFAULT_API_URL, accessToken: opts.accessToken });
  }

  async download(attachment: Attachment, opts: DownloadOptions): Promise<FileDownload> {
    const mediaId = attachment.url.startsWith(WHATSAPP_MEDIA_REF_PREFIX) ? attachment.url.slice(WHATSAPP_MEDIA_REF_PREFIX.length) : '';
    if (!/^[\w.-]{1,128}$/.test(mediaId)) throw new BadRequestError('whatsapp: not a WhatsApp media reference', 'whatsapp');
    const info = await this.graph.get<MediaInfo>('media lookup', `/${mediaId}`, opts.signal);
    if (typeof info.url !== 'string' || !/^https?:\/\//.test(info.url)) throw new BadRequestError('whatsapp media lookup: answer without a URL', 'whatsapp');
    const size = wireNumber(info.file_size);
    const got = await downloadCapped({
      platform: 'whatsapp',
      url: info.url,
      maxBytes: opts.maxBytes,
      knownSize: Number.isFinite(size) && size > 0 ? size : undefined,
      headers: this.graph.authHeaders,
      signal: opts.signal,
    });
    const type = typeof info.mime_type === 'string' ? info.mime_type.split(';')[0]?.trim() : undefined;
    return { bytes: got.bytes, mimeType: type || got.mimeType };
  }
}
