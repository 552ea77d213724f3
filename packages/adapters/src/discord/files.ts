/**
 * Discord file downloads: attachments are served by Discord's CDN at the URL the message carried. Those URLs are
 * signed and expire (about a day: `ex` is the expiry in hex Unix seconds, `is` the issue time, `hm` the signature);
 * an expired one answers 404 (or 403). The bot then asks the REST API for a fresh one
 * (`POST /attachments/refresh-urls`, with the bot token) and downloads that: a /retry or a later turn still gets
 * an old attachment. One the CDN no longer has at all stays a NotFoundError, reported like any failed download.
 */
import type { REST } from 'discord.js';
import { AuthError, NotFoundError } from '../errors.js';
import { downloadCapped } from '../shared/download.js';
import type { Attachment, DownloadOptions, FileDownload, PlatformFiles } from '../types.js';
import { createDiscordRest, DISCORD_REFRESH_ROUTE } from './rest.js';
import { toPlatformError } from './rest-errors.js';

const PLATFORM = 'discord';

export interface DiscordFilesOptions {
  botToken: string;
  /** REST base, default `https://discord.com/api`. */
  apiUrl?: string;
  /** The bot's one REST client (rest.ts), shared with its egress; built from the options above when absent. */
  rest?: REST;
}

interface RefreshAnswer {
  refreshed_urls?: Array<{ original?: string; refreshed?: string }>;
}

export class DiscordFiles implements PlatformFiles {
  readonly platform = PLATFORM;
  private readonly rest: REST;

  constructor(opts: DiscordFilesOptions) {
    // A failed download is reported to the user, and /retry tries again: the client neither retries nor waits out
    // a rate limit on the refresh route.
    this.rest = opts.rest ?? createDiscordRest(opts);
  }

  async download(attachment: Attachment, opts: DownloadOptions): Promise<FileDownload> {
    const get = (url: string): Promise<FileDownload> =>
      downloadCapped({ platform: PLATFORM, url, maxBytes: opts.maxBytes, knownSize: attachment.size, signal: opts.signal });
    const expiry = expiryOf(attachment.url);
    // Past its expiry by our clock: refreshed before trying it (saves the CDN a request that must fail).
    if (expiry !== undefined && expiry <= Date.now()) return get(await this.refresh(attachment.url, opts.signal));
    try {
      return await get(attachment.url);
    } catch (err) {
      // The CDN says 404/403 for an expired signature too (clocks differ): a signed URL gets one fresh try.
      if (!(err instanceof NotFoundError || err instanceof AuthError) || expiry === undefined) throw err;
      const fresh = await this.refresh(attachment.url, opts.signal);
      if (fresh === attachment.url) throw err;
      return get(fresh);
    }
  }

  /** A freshly signed URL for a CDN attachment URL (Discord answers the same URL for one it cannot refresh). */
  private async refresh(url: string, signal?: AbortSignal): Promise<string> {
    let answer: RefreshAnswer;
    try {
      answer = (await this.rest.post(DISCORD_REFRESH_ROUTE, { body: { attachment_urls: [url] }, signal })) as RefreshAnswer;
    } catch (err) {
      throw toPlatformError(err);
    }
    const refreshed = answer.refreshed_urls?.find((r) => r.original === url)?.refreshed;
    if (!refreshed) throw new NotFoundError('attachments/refresh-urls returned no URL', PLATFORM);
    return refreshed;
  }
}

/** When a signed CDN URL expires (ms), from its `ex` parameter; undefined for a URL that carries none. */
export function expiryOf(url: string): number | undefined {
  let ex: string | null;
  try {
    ex = new URL(url).searchParams.get('ex');
  } catch {
    return undefined;
  }
  if (ex === null || !/^[0-9a-f]+$/i.test(ex)) return undefined;
  return Number.parseInt(ex, 16) * 1000;
}
