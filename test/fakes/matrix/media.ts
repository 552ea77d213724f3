/**
 * Media routes: upload (`/_matrix/media/v3/upload`, 413 M_TOO_LARGE over m.upload.size), the authenticated
 * download and thumbnail of v1.11 (`/_matrix/client/v1/media/...`, token required), its config, and the legacy
 * unauthenticated download answering 404 M_NOT_FOUND as servers with frozen unauthenticated media do.
 */
import type { Ctx, Route } from './http.js';
import type { UploadRecord } from './types.js';
import { MatrixError, type World } from './world.js';

const SEG = '([^/]+)';

export interface MediaRecords {
  uploads: UploadRecord[];
  /** mxc URLs served by the authenticated download or thumbnail routes. */
  downloads: string[];
}

export function mediaRoutes(world: World, rec: MediaRecords, maxUploadBytes: number): Route[] {
  const upload = async (ctx: Ctx) => {
    const declared = Number(ctx.req.headers['content-length'] ?? '0');
    if (declared > maxUploadBytes) {
      ctx.req.resume();
      throw new MatrixError(413, 'M_TOO_LARGE', 'Uploaded file is too large');
    }
    const bytes = await ctx.raw();
    if (bytes.length > maxUploadBytes) throw new MatrixError(413, 'M_TOO_LARGE', 'Uploaded file is too large');
    const mediaId = world.newMediaId();
    const filename = ctx.url.searchParams.get('filename') ?? undefined;
    const record: UploadRecord = {
      mxc: `mxc://${world.serverName}/${mediaId}`,
      mediaId,
      bytes,
      contentType: ctx.req.headers['content-type'] ?? 'application/octet-stream',
      ...(filename !== undefined && { filename }),
      uploader: world.botId,
    };
    world.addMedia(record);
    rec.uploads.push(record);
    return { content_uri: record.mxc };
  };

  const download = (ctx: Ctx) => {
    const [server, mediaId] = ctx.params;
    const m = server === world.serverName ? world.media.get(mediaId) : undefined;
    if (!m) throw new MatrixError(404, 'M_NOT_FOUND', 'Not found');
    rec.downloads.push(m.mxc);
    const name = ctx.params[2] ?? m.filename;
    ctx.res.writeHead(200, {
      'content-type': m.contentType,
      'content-length': String(m.bytes.length),
      'content-disposition': name ? `inline; filename*=utf-8''${encodeURIComponent(name)}` : 'inline',
      'cross-origin-resource-policy': 'cross-origin',
    });
    ctx.res.end(m.bytes);
    return undefined;
  };

  const config = () => ({ 'm.upload.size': maxUploadBytes });
  const frozen = () => {
    throw new MatrixError(404, 'M_NOT_FOUND', 'Not found');
  };

  return [
    { method: 'POST', pattern: /^\/_matrix\/media\/(?:v3|r0)\/upload$/, handler: upload },
    { method: 'GET', pattern: new RegExp(`^/_matrix/client/v1/media/download/${SEG}/${SEG}(?:/${SEG})?$`), handler: download },
    { method: 'GET', pattern: new RegExp(`^/_matrix/client/v1/media/thumbnail/${SEG}/${SEG}$`), handler: download },
    { method: 'GET', pattern: /^\/_matrix\/client\/v1\/media\/config$/, handler: config },
    { method: 'GET', pattern: /^\/_matrix\/media\/(?:v3|r0)\/config$/, handler: config },
    { method: 'GET', pattern: /^\/_matrix\/media\/(?:v3|r0)\/(?:download|thumbnail)\/.+$/, handler: frozen, public: true },
  ];
}
