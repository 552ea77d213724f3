/**
 * The `web_fetch` tool: HTTP GET of one URL, as text. Bodies are streamed and cut at 2 MB (the rest is never
 * downloaded), HTML becomes readable text, and redirects are followed by hand (at most 5) so every hop goes
 * through the same address check: private, loopback and link-local addresses are refused unless the operator
 * allows them (HERALD_FETCH_ALLOW_PRIVATE).
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { TextDecoder } from 'node:util';
import type { Tool } from '../tools/registry.js';
import { ToolInputError, optionalIntArg, stringArg } from './context.js';
import { assertAllowedLiteral, guardedLookup, isPublicAddress, type AddressPolicy, type Resolver } from './address-guard.js';
import { htmlTitle, htmlToText } from './html-to-text.js';

export const WEB_FETCH_TOOL = 'web_fetch';
export const MAX_FETCH_BYTES = 2 * 1024 * 1024;
export const MAX_REDIRECTS = 5;
const FETCH_TIMEOUT_MS = 20_000;
/** Default text handed to the model; the page may be longer. */
const DEFAULT_FETCH_CHARS = 50_000;
const MAX_FETCH_CHARS = 100_000;
const USER_AGENT = 'Herald/0.1 (web_fetch; +https://github.com/)';
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|ecmascript|x-www-form-urlencoded)|application\/[\w.+-]+\+(json|xml))/i;
const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)/i;

export interface WebFetchOptions {
  /** Let requests reach private, loopback and link-local addresses (HERALD_FETCH_ALLOW_PRIVATE). */
  allowPrivate?: boolean;
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
  /** Name resolution; default the system resolver. Whatever it returns goes through the address check. */
  resolve?: Resolver;
  /**
   * Which addresses may be connected to; default the public internet only (`isPublicAddress`). Not a setting:
   * tests use it to stand a loopback address in for a public server.
   */
  addressAllowed?: AddressPolicy;
}

export interface FetchedPage {
  /** The URL the body came from, after redirects. */
  url: string;
  status: number;
  statusText: string;
  contentType: string;
  body: Buffer;
  /** True when the body was cut at the byte limit. */
  truncated: boolean;
}

class FetchError extends Error {
  override name = 'FetchError';
}

/** GET with the address check on every hop and the byte cap; throws FetchError (or BlockedAddressError). */
export async function fetchUrl(rawUrl: string, opts: WebFetchOptions, signal: AbortSignal): Promise<FetchedPage> {
  const maxRedirects = opts.maxRedirects ?? MAX_REDIRECTS;
  const combined = AbortSignal.any([signal, AbortSignal.timeout(opts.timeoutMs ?? FETCH_TIMEOUT_MS)]);
  const allowed: AddressPolicy = opts.allowPrivate ? () => true : (opts.addressAllowed ?? isPublicAddress);
  let url = parseHttpUrl(rawUrl);
  for (let hop = 0; ; hop++) {
    assertAllowedLiteral(url.hostname, allowed);
    const res = await get(url, guardedLookup(opts.resolve, allowed), combined);
    const location = res.headers.location;
    if (res.statusCode !== undefined && res.statusCode >= 300 && res.statusCode < 400 && location) {
      res.destroy(); // a redirect's body is not worth downloading
      if (hop >= maxRedirects) throw new FetchError(`more than ${maxRedirects} redirects (last one to ${location})`);
      url = parseHttpUrl(new URL(location, url).toString());
      continue;
    }
    const { body, truncated } = await readCapped(res, opts.maxBytes ?? MAX_FETCH_BYTES);
    return {
      url: url.toString(),
      status: res.statusCode ?? 0,
      statusText: res.statusMessage ?? '',
      contentType: String(res.headers['content-type'] ?? ''),
      body,
      truncated,
    };
  }
}

function parseHttpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ToolInputError(`"${raw}" is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolInputError(`only http and https URLs can be fetched (got ${url.protocol})`);
  if (url.username || url.password) throw new ToolInputError('URLs with credentials are not fetched');
  return url;
}

function get(url: URL, lookup: LookupFunction, signal: AbortSignal): Promise<IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: 'GET',
      signal,
      headers: { 'user-agent': USER_AGENT, accept: 'text/html,text/*;q=0.9,*/*;q=0.5', 'accept-encoding': 'identity' },
      // The guard resolves the name itself and refuses what the policy does not allow: what it checks is what we
      // connect to.
      lookup,
      // A socket of its own: the global agent keeps sockets alive per host name, and one that another part of the
      // process opened to a private host (a local Bot API server, say) would be reused without any lookup.
      agent: false,
    });
    req.once('response', resolve);
    req.once('error', (err) => reject(signal.aborted && !(err instanceof FetchError) ? abortError(signal) : err));
    req.end();
  });
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') return new FetchError('the server took too long to answer');
  return reason instanceof Error ? reason : new FetchError('aborted');
}

/** Reads at most `max` bytes, then stops the download. */
async function readCapped(res: IncomingMessage, max: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    const room = max - size;
    if (chunk.length > room) {
      chunks.push(chunk.subarray(0, room));
      size += room;
      truncated = true;
      break; // leaving the loop destroys the stream: the rest is never downloaded
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  if (truncated) res.destroy();
  return { body: Buffer.concat(chunks, size), truncated };
}

function decode(body: Buffer, contentType: string): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** The page as the model reads it: where it came from, its status and title, then the text. */
function renderPage(page: FetchedPage, maxChars: number): string {
  const type = page.contentType.split(';')[0].trim().toLowerCase() || 'unknown';
  const head = [`URL: ${page.url}`, `Status: ${page.status} ${page.statusText}`.trim(), `Content-Type: ${type}`];
  const isHtml = HTML_TYPES.test(type) || (type === 'unknown' && /^\s*<(!doctype html|html)/i.test(page.body.subarray(0, 200).toString()));
  if (!isHtml && !TEXT_TYPES.test(type)) {
    return `${head.join('\n')}\n\nThis is not a text document (${page.body.length} bytes of ${type}); there is nothing to show.`;
  }
  const raw = decode(page.body, page.contentType);
  const title = isHtml ? htmlTitle(raw) : null;
  if (title) head.push(`Title: ${title}`);
  if (page.truncated) head.push(`(The page is larger than ${page.body.length} bytes; only its start was read.)`);
  let text = isHtml ? htmlToText(raw) : raw.trim();
  if (text.length > maxChars) text = `${text.slice(0, maxChars)}\n\n[cut at ${maxChars} characters; ${text.length - maxChars} more not shown]`;
  return `${head.join('\n')}\n\n${text || '(no text)'}`;
}

export function createWebFetchTool(opts: WebFetchOptions = {}): Tool {
  return {
    name: WEB_FETCH_TOOL,
    description:
      'Fetch a web page or text file by URL (HTTP GET) and return its text (HTML is converted to plain text). ' +
      'Use it to read a page the user links to or that you know the address of. Public addresses only.',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'http or https URL' },
        max_chars: { type: 'integer', description: `Most text to return (default ${DEFAULT_FETCH_CHARS}, at most ${MAX_FETCH_CHARS})` },
      },
      required: ['url'],
    },
    readOnly: true,
    async execute(args, ctx) {
      const url = stringArg(args, 'url');
      const maxChars = Math.min(Math.max(optionalIntArg(args, 'max_chars') ?? DEFAULT_FETCH_CHARS, 1_000), MAX_FETCH_CHARS);
      return renderPage(await fetchUrl(url, opts, ctx.signal), maxChars);
    },
  };
}
