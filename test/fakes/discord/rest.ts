/**
 * The stand-in's REST API under `/v10` (also accepted under `/api/v10`), with Discord's status codes, JSON error
 * bodies `{ message, code, errors? }`, `Authorization: Bot <token>` checks and rate-limit headers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isMultipart, readRaw } from '../media/multipart.js';
import { channelJson, userJson, type JsonObject } from './model.js';
import { attachmentsOf, readMessageUpload, type MessageUpload } from './uploads.js';
import { DiscordHttpError } from './rules.js';
import type { World } from './world.js';
import { componentsOf, type FakeInteractions } from './interactions.js';

export type RestRoute =
  | 'gatewayBot'
  | 'getMe'
  | 'createDm'
  | 'getChannel'
  | 'createMessage'
  | 'getMessage'
  | 'editMessage'
  | 'typing'
  | 'startThread'
  | 'addReaction'
  | 'removeReaction'
  | 'putCommands'
  | 'getCommands'
  | 'putGuildCommands'
  | 'getGuildCommands'
  | 'interactionCallback'
  | 'editOriginalResponse'
  | 'followUp'
  | 'refreshAttachmentUrls';

/** What the next call of a route answers instead of doing its work. */
export interface FailureSpec {
  status: number;
  code?: number;
  message?: string;
  errors?: JsonObject;
  /** 429 only: seconds, as Discord's `retry_after`. */
  retryAfter?: number;
  global?: boolean;
}

export interface SentRecord {
  id: string;
  channelId: string;
  content: string;
  message_reference?: JsonObject;
  allowed_mentions?: JsonObject;
  nonce?: string | number;
  /** Buttons under the message (action rows), as sent. */
  components?: JsonObject[];
  /** Files the message carries (multipart uploads), as they arrived. */
  files?: Array<{ filename: string; contentType: string; data: Buffer }>;
}

export interface RestRecords {
  sent: SentRecord[];
  edits: { channelId: string; messageId: string; content: string }[];
  threadsCreated: { id: string; parentId: string; messageId: string; name: string; autoArchiveDuration?: number }[];
  typingCalls: { channelId: string; at: number }[];
  reactions: { channelId: string; messageId: string; emoji: string; action: 'add' | 'remove' }[];
  requests: { method: string; path: string; route: RestRoute | null; status: number }[];
}

export interface RestContext {
  world: World;
  token: string;
  gatewayUrl(): string;
  records: RestRecords;
  failures: Map<RestRoute, FailureSpec[]>;
  /** The channels' upload limit per message (uploads.ts). */
  uploadLimitBytes: number;
  interactions: FakeInteractions;
  /** A fresh signed URL for a CDN attachment URL (cdn.ts). */
  refreshUrl(url: string): string;
}

const VERSION_PREFIX = /^(?:\/api)?\/v10(\/.*)$/;
const RATE_LIMIT = 50;

interface RouteDef {
  method: string;
  pattern: RegExp;
  route: RestRoute;
  /** Interaction endpoints: the token in the path authorises, no `Authorization` header needed. */
  noAuth?: true;
}

const ROUTES: RouteDef[] = [
  { method: 'GET', pattern: /^\/gateway\/bot$/, route: 'gatewayBot' },
  { method: 'GET', pattern: /^\/users\/@me$/, route: 'getMe' },
  { method: 'POST', pattern: /^\/users\/@me\/channels$/, route: 'createDm' },
  { method: 'GET', pattern: /^\/channels\/(\d+)$/, route: 'getChannel' },
  { method: 'POST', pattern: /^\/channels\/(\d+)\/messages$/, route: 'createMessage' },
  { method: 'GET', pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/, route: 'getMessage' },
  { method: 'PATCH', pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/, route: 'editMessage' },
  { method: 'POST', pattern: /^\/channels\/(\d+)\/typing$/, route: 'typing' },
  { method: 'POST', pattern: /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/, route: 'startThread' },
  { method: 'PUT', pattern: /^\/channels\/(\d+)\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/, route: 'addReaction' },
  { method: 'DELETE', pattern: /^\/channels\/(\d+)\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/, route: 'removeReaction' },
  { method: 'PUT', pattern: /^\/applications\/(\d+)\/commands$/, route: 'putCommands' },
  { method: 'GET', pattern: /^\/applications\/(\d+)\/commands$/, route: 'getCommands' },
  { method: 'PUT', pattern: /^\/applications\/(\d+)\/guilds\/(\d+)\/commands$/, route: 'putGuildCommands' },
  { method: 'GET', pattern: /^\/applications\/(\d+)\/guilds\/(\d+)\/commands$/, route: 'getGuildCommands' },
  { method: 'POST', pattern: /^\/interactions\/(\d+)\/([^/]+)\/callback$/, route: 'interactionCallback', noAuth: true },
  { method: 'PATCH', pattern: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/(?:@|%40)original$/, route: 'editOriginalResponse', noAuth: true },
  { method: 'POST', pattern: /^\/webhooks\/(\d+)\/([^/]+)$/, route: 'followUp', noAuth: true },
  { method: 'POST', pattern: /^\/attachments\/refresh-urls$/, route: 'refreshAttachmentUrls' },
];

export function createRestHandler(ctx: RestContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void handle(ctx, req, res).catch((err: unknown) => {
      const message = `stand-in error: ${err instanceof Error ? err.message : String(err)}`;
      if (!res.headersSent) sendJson(res, 500, { message, code: 0 });
    });
  };
}

async function handle(ctx: RestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
  const bytes = await readRaw(req);
  const contentType = req.headers['content-type'];
  let raw = bytes.toString('utf8');
  const record = (route: RestRoute | null, status: number): void => {
    ctx.records.requests.push({ method, path, route, status });
  };

  const versioned = VERSION_PREFIX.exec(path);
  const def = versioned ? ROUTES.find((r) => r.method === method && r.pattern.test(versioned[1])) : undefined;
  if (!versioned || !def) {
    record(null, 404);
    return sendJson(res, 404, { message: '404: Not Found', code: 0 });
  }
  const params = def.pattern.exec(versioned[1])?.slice(1) ?? [];

  if (!def.noAuth && req.headers.authorization !== `Bot ${ctx.token}`) {
    record(def.route, 401);
    return sendJson(res, 401, { message: '401: Unauthorized', code: 0 });
  }

  const failure = ctx.failures.get(def.route)?.shift();
  if (failure) {
    record(def.route, failure.status);
    return sendFailure(res, def.route, failure);
  }

  let upload: MessageUpload | undefined;
  if (isMultipart(contentType)) {
    try {
      upload = await readMessageUpload(bytes, contentType ?? '', ctx.uploadLimitBytes);
    } catch (err) {
      if (!(err instanceof DiscordHttpError)) throw err;
      record(def.route, err.status);
      return sendJson(res, err.status, err.body(), rateLimitHeaders(def.route));
    }
    raw = '';
  }
  let body: JsonObject = upload?.body ?? {};
  let list: unknown[] | null = null;
  if (raw.length > 0) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (Array.isArray(parsed)) list = parsed;
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) body = parsed as JsonObject;
    } catch {
      record(def.route, 400);
      return sendJson(res, 400, { message: 'The request body contains invalid JSON.', code: 50109 });
    }
  }

  try {
    const result = route(ctx, def.route, params, body, upload, list);
    record(def.route, result.status);
    if (result.status === 204) {
      // No Content-Type on 204: @discordjs/rest parses any application/json body and would choke on an empty one.
      res.writeHead(204, rateLimitHeaders(def.route));
      res.end();
      return;
    }
    sendJson(res, result.status, result.body ?? {}, rateLimitHeaders(def.route));
  } catch (err) {
    if (!(err instanceof DiscordHttpError)) throw err;
    record(def.route, err.status);
    sendJson(res, err.status, err.body(), rateLimitHeaders(def.route));
  }
}

interface RouteResult {
  status: number;
  body?: JsonObject;
}

function route(ctx: RestContext, name: RestRoute, params: string[], body: JsonObject, upload: MessageUpload | undefined, list: unknown[] | null): RouteResult {
  const { world, records, interactions } = ctx;
  switch (name) {
    case 'putCommands':
      return { status: 200, body: interactions.overwrite(params[0], undefined, list) as unknown as JsonObject };
    case 'putGuildCommands':
      return { status: 200, body: interactions.overwrite(params[0], params[1], list) as unknown as JsonObject };
    case 'getCommands':
      return { status: 200, body: interactions.list(params[0], undefined) as unknown as JsonObject };
    case 'getGuildCommands':
      return { status: 200, body: interactions.list(params[0], params[1]) as unknown as JsonObject };
    case 'interactionCallback':
      interactions.callback(params[0], params[1], body);
      return { status: 204 };
    case 'editOriginalResponse':
      return { status: 200, body: interactions.editOriginal(params[0], params[1], body) };
    case 'followUp':
      return { status: 200, body: interactions.followUp(params[0], params[1], body) };
    case 'gatewayBot':
      return {
        status: 200,
        body: {
          url: ctx.gatewayUrl(),
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
        },
      };
    case 'getMe':
      return { status: 200, body: userJson(world.bot) };
    case 'createDm': {
      const user = typeof body.recipient_id === 'string' ? world.users.get(body.recipient_id) : undefined;
      if (!user) throw new DiscordHttpError(400, 50033, 'Invalid Recipient(s)');
      return { status: 200, body: channelJson(world.openDm(user)) };
    }
    case 'getChannel':
      return { status: 200, body: channelJson(world.channel(params[0])) };
    case 'createMessage': {
      const components = componentsOf(body);
      const attachments = upload ? attachmentsOf(world, params[0], upload) : [];
      const { message, created } = world.postBotMessage(params[0], body, attachments);
      // A repeat with enforce_nonce is answered with the earlier message: nothing new was sent.
      if (!created) return { status: 200, body: message };
      if (components) message.components = components;
      const sent: SentRecord = { id: String(message.id), channelId: params[0], content: String(message.content), ...(components && { components }) };
      if (upload) sent.files = upload.files.map((f, i) => ({ filename: String(attachments[i].filename), contentType: f.contentType, data: f.data }));
      if (isObject(body.message_reference)) sent.message_reference = body.message_reference;
      if (isObject(body.allowed_mentions)) sent.allowed_mentions = body.allowed_mentions;
      if (typeof body.nonce === 'string' || typeof body.nonce === 'number') sent.nonce = body.nonce;
      records.sent.push(sent);
      return { status: 200, body: message };
    }
    case 'getMessage':
      return { status: 200, body: world.message(params[0], params[1]).json };
    case 'editMessage': {
      const message = world.editBotMessage(params[0], params[1], body);
      records.edits.push({ channelId: params[0], messageId: params[1], content: String(message.content) });
      return { status: 200, body: message };
    }
    case 'typing':
      world.channel(params[0]);
      records.typingCalls.push({ channelId: params[0], at: Date.now() });
      return { status: 204 };
    case 'startThread': {
      const thread = world.startThreadFromMessage(params[0], params[1], body);
      records.threadsCreated.push({
        id: String(thread.id),
        parentId: params[0],
        messageId: params[1],
        name: String(thread.name),
        ...(typeof body.auto_archive_duration === 'number' ? { autoArchiveDuration: body.auto_archive_duration } : {}),
      });
      return { status: 201, body: thread };
    }
    case 'refreshAttachmentUrls': {
      // `attachment_urls`: 1 to 50 CDN URLs; answered with `{original, refreshed}` for each.
      const urls = body.attachment_urls;
      if (!Array.isArray(urls) || urls.length === 0 || urls.length > 50 || !urls.every((u) => typeof u === 'string')) {
        throw new DiscordHttpError(400, 50035, 'Invalid Form Body');
      }
      return { status: 200, body: { refreshed_urls: urls.map((original) => ({ original, refreshed: ctx.refreshUrl(original) })) } };
    }
    case 'addReaction':
    case 'removeReaction': {
      const channel = world.channel(params[0]);
      world.message(channel.id, params[1]);
      const emoji = decodeURIComponent(params[2]);
      // A custom emoji must be name:id; a bare name is not a Unicode emoji Discord knows.
      if (/^\w+$/.test(emoji) || (emoji.includes(':') && !/^\w+:\d+$/.test(emoji))) {
        throw new DiscordHttpError(400, 10014, 'Unknown Emoji');
      }
      const action = name === 'addReaction' ? 'add' : 'remove';
      records.reactions.push({ channelId: params[0], messageId: params[1], emoji, action });
      return { status: 204 };
    }
  }
}

function sendFailure(res: ServerResponse, route: RestRoute, f: FailureSpec): void {
  if (f.status === 429) {
    const retryAfter = f.retryAfter ?? 1;
    const headers: Record<string, string> = {
      'Retry-After': String(Math.ceil(retryAfter)),
      'X-RateLimit-Limit': String(RATE_LIMIT),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': (Date.now() / 1000 + retryAfter).toFixed(3),
      'X-RateLimit-Reset-After': retryAfter.toFixed(3),
      'X-RateLimit-Bucket': bucketOf(route),
      'X-RateLimit-Scope': f.global ? 'global' : 'user',
    };
    if (f.global) headers['X-RateLimit-Global'] = 'true';
    const body: JsonObject = {
      message: f.message ?? 'You are being rate limited.',
      retry_after: retryAfter,
      global: f.global ?? false,
    };
    if (f.code !== undefined) body.code = f.code;
    return sendJson(res, 429, body, headers);
  }
  const body: JsonObject = { message: f.message ?? 'Error', code: f.code ?? 0 };
  if (f.errors) body.errors = f.errors;
  sendJson(res, f.status, body, rateLimitHeaders(route));
}

function rateLimitHeaders(route: RestRoute): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(RATE_LIMIT),
    'X-RateLimit-Remaining': String(RATE_LIMIT - 1),
    'X-RateLimit-Reset': (Date.now() / 1000 + 1).toFixed(3),
    'X-RateLimit-Reset-After': '1.000',
    'X-RateLimit-Bucket': bucketOf(route),
  };
}

function bucketOf(route: RestRoute): string {
  return Buffer.from(route).toString('hex').slice(0, 16);
}

function sendJson(res: ServerResponse, status: number, body: JsonObject, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
