/**
 * Downloading what users send: an `mxc://<server>/<media id>` URI is fetched through the authenticated media
 * endpoint (`GET /_matrix/client/v1/media/download/<server>/<id>`, spec v1.11) with the bearer token, within the
 * size cap (an announced `info.size` over it fetches nothing). The unauthenticated `/_matrix/media/v3` download is
 * frozen on current homeservers and never used.
 */
import { BadRequestError } from '../errors.js';
import { downloadCapped } from '../shared/download.js';
import type { Attachment, DownloadOptions, FileDownload, PlatformFiles } from '../types.js';
import { MatrixClient, seg } from './client.js';
import { MATRIX_MXC_RE, type MatrixConnection } from './config.js';

export class MatrixFiles implements PlatformFiles {
  readonly platform = 'matrix' as const;
  private readonly client: MatrixClient;

  constructor(conn: MatrixConnection, client?: MatrixClient) {
    this.client = client ?? new MatrixClient(conn);
  }

  async download(attachment: Attachment, opts: DownloadOptions): Promise<FileDownload> {
    const m = MATRIX_MXC_RE.exec(attachment.url);
    if (!m) throw new BadRequestError('matrix: not an mxc:// media URI', 'matrix');
    return downloadCapped({
      platform: 'matrix',
      url: this.client.url('client-v1', `/media/download/${seg(m[1])}/${seg(m[2])}`),
      maxBytes: opts.maxBytes,
      knownSize: attachment.size !== undefined && attachment.size > 0 ? attachment.size : undefined,
      headers: this.client.authHeaders(),
      signal: opts.signal,
    });
  }
}
