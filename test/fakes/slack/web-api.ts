/**
 * The Slack Web API methods Herald uses, at `/api/<method>`: form or JSON bodies, `Authorization: Bearer`,
 * answers `{ok:true,…}` / `{ok:false,error}` with HTTP 200, and 429 + `Retry-After` for `ratelimited`.
 */
import type { TsClock, Workspace } from './events.js';
import { completeUploadExternal, getUploadURLExternal, type FilesState } from './files.js';
import type { ApiReply } from './reply.js';
import { metadataOf, type MessageMetadata } from './metadata.js';
import { blocksOf, ephemeralOf, homeViewOf, type EphemeralRecord, type HomeViewRecord } from './blocks.js';

export type { EphemeralRecord, HomeViewRecord } from './blocks.js';

/** chat.postMessage / chat.update reject text above this (Slack's documented limit). */
export const SLACK_TEXT_LIMIT = 40_000;
/** conversations.history's default page; conversations.replies returns up to 1000 unless told fewer. */
const HISTORY_DEFAULT_LIMIT = 100;
const REPLIES_DEFAULT_LIMIT = 1000;
const MAX_LIMIT = 1000;

/** The bot token's scopes when a test does not choose: everything the methods here need. */
export const DEFAULT_BOT_SCOPES = [
  'app_mentions:read',
  'assistant:write',
  'channels:history',
  'chat:write',
  'files:read',
  'files:write',
  'groups:history',
  'im:history',
  'mpim:history',
  'reactions:write',
];

export type { MessageMetadata } from './metadata.js';

export interface StoredMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  user?: string;
  botId?: string;
  text: string;
  /** emoji name → user ids */
  reactions: Map<string, Set<string>>;
  metadata?: MessageMetadata;
  /** Block Kit blocks, as posted (JSON-decoded when the body was a form). */
  blocks?: unknown[];
}

export interface SentRecord {
  channel: string;
  ts: string;
  text: string;
  threadTs?: string;
  mrkdwn?: boolean;
  metadata?: MessageMetadata;
  args: Record<string, unknown>;
}
export interface UpdateRecord {
  channel: string;
  ts: string;
  text: string;
}
export interface ReactionRecord {
  action: 'add' | 'remove';
  channel: string;
  ts: string;
  name: string;
}
export interface StatusRecord {
  channelId: string;
  threadTs: string;
  status: string;
}
export interface CallRecord {
  method: string;
  args: Record<string, unknown>;
  token: string | undefined;
  at: number;
}

export interface Failure {
  error: string;
  /** For `ratelimited`: the Retry-After header in seconds (default 1). */
  retryAfterSec?: number;
  /** Answer with this HTTP status instead (e.g. 500 for an outage). */
  httpStatus?: number;
  /** Never answer at all (a connection that died quietly). */
  silence?: boolean;
}

export type { ApiReply } from './reply.js';

export interface ApiContext {
  ws: Workspace & { botId: string; botToken: string; appToken: string };
  clock: TsClock;
  messages: Map<string, StoredMessage>;
  sent: SentRecord[];
  updates: UpdateRecord[];
  reactions: ReactionRecord[];
  statuses: StatusRecord[];
  ephemerals: EphemeralRecord[];
  homeViews: HomeViewRecord[];
  calls: CallRecord[];
  failures: Map<string, Failure[]>;
  /** The bot token's OAuth scopes: a method whose scope is missing answers `missing_scope`. */
  scopes: Set<string>;
  /** apps.connections.open: a fresh one-time WebSocket URL. */
  openConnection(): string;
  /** Files upload v2 (files.ts). */
  files: FilesState;
  /** A shared file's full object (hosted-files.ts), for `files.info`. */
  fileInfo(id: string): Record<string, unknown> | undefined;
}

const CHANNEL_RE = /^[CDG][A-Z0-9]+$/;
const APP_TOKEN_METHODS = new Set(['apps.connections.open']);

const ok = (body: Record<string, unknown> = {}): ApiReply => ({ status: 200, headers: {}, body: { ok: true, ...body } });
const fail = (error: string, extra: Record<string, unknown> = {}): ApiReply => ({
  status: 200,
  headers: {},
  body: { ok: false, error, ...extra },
});

export function messageKey(channel: string, ts: string): string {
  return `${channel}:${ts}`;
}

export function handleApiCall(ctx: ApiContext, method: string, args: Record<string, unknown>, token: string | undefined): ApiReply {
  ctx.calls.push({ method, args, token, at: Date.now() });

  const auth = checkToken(ctx, method, token);
  if (auth !== null) return auth;

  const scope = scopeError(ctx, method, args);
  if (scope !== null) return scope;

  const queued = ctx.failures.get(method);
  const failure = queued?.shift();
  if (failure !== undefined) {
    if (failure.silence) return { status: 0, headers: {}, body: null };
    if (failure.error === 'ratelimited') {
      return { status: 429, headers: { 'retry-after': String(failure.retryAfterSec ?? 1) }, body: { ok: false, error: 'ratelimited' } };
    }
    if (failure.httpStatus !== undefined) return { status: failure.httpStatus, headers: {}, body: `<html>${failure.error}</html>` };
    return fail(failure.error, failure.error === 'missing_scope' ? { needed: 'assistant:write', provided: 'chat:write' } : {});
  }

  switch (method) {
    case 'auth.test':
      return ok({
        url: 'https://herald-fake.slack.com/',
        team: 'Herald Fake',
        user: 'herald',
        team_id: ctx.ws.teamId,
        user_id: ctx.ws.botUserId,
        bot_id: ctx.ws.botId,
        is_enterprise_install: false,
      });
    case 'apps.connections.open':
      return ok({ url: ctx.openConnection() });
    case 'chat.postMessage':
      return postMessage(ctx, args);
    case 'chat.update':
      return update(ctx, args);
    case 'chat.postEphemeral': {
      const ephemeral = ephemeralOf(args);
      if (typeof ephemeral === 'string') return fail(ephemeral);
      ctx.ephemerals.push(ephemeral);
      return ok({ message_ts: ctx.clock.next() });
    }
    case 'views.publish': {
      const home = homeViewOf(args);
      if (typeof home === 'string') return fail(home);
      ctx.homeViews.push(home);
      return ok({ view: { id: `V${ctx.homeViews.length}`, ...home.view } });
    }
    case 'reactions.add':
    case 'reactions.remove':
      return react(ctx, method === 'reactions.add' ? 'add' : 'remove', args);
    case 'conversations.history':
      return history(ctx, args);
    case 'conversations.replies':
      return replies(ctx, args);
    case 'assistant.threads.setStatus':
      return setStatus(ctx, args);
    case 'files.info': {
      // `file` (the id) is required; an id Slack does not know (or deleted) answers file_not_found.
      const id = str(args, 'file');
      if (id === undefined) return fail('invalid_arguments');
      const file = ctx.fileInfo(id);
      return file ? ok({ file, comments: [], response_metadata: { next_cursor: '' } }) : fail('file_not_found');
    }
    case 'files.getUploadURLExternal':
      return getUploadURLExternal(ctx.files, args);
    case 'files.completeUploadExternal':
      return completeUploadExternal(ctx.files, args, (channel, text, threadTs) => storeBotMessage(ctx, channel, text, threadTs).ts);
    default:
      return fail('unknown_method');
  }
}

function checkToken(ctx: ApiContext, method: string, token: string | undefined): ApiReply | null {
  if (token === undefined || token === '') return fail('not_authed');
  const wanted = APP_TOKEN_METHODS.has(method) ? ctx.ws.appToken : ctx.ws.botToken;
  if (token === wanted) return null;
  if (token === ctx.ws.appToken || token === ctx.ws.botToken) return fail('not_allowed_token_type');
  return fail('invalid_auth');
}

/** The scope a bot token needs for a method (history scopes follow the conversation type: C, G or D). */
function scopeNeeded(method: string, args: Record<string, unknown>): string | undefined {
  switch (method) {
    case 'chat.postMessage':
    case 'chat.update':
    case 'chat.postEphemeral':
      return 'chat:write';
    case 'reactions.add':
    case 'reactions.remove':
      return 'reactions:write';
    case 'assistant.threads.setStatus':
      return 'assistant:write';
    case 'files.getUploadURLExternal':
    case 'files.completeUploadExternal':
      return 'files:write';
    case 'files.info':
      return 'files:read';
    case 'conversations.history':
    case 'conversations.replies': {
      const channel = str(args, 'channel') ?? '';
      if (channel.startsWith('D')) return 'im:history';
      return channel.startsWith('G') ? 'groups:history' : 'channels:history';
    }
    default:
      return undefined;
  }
}

function scopeError(ctx: ApiContext, method: string, args: Record<string, unknown>): ApiReply | null {
  const needed = scopeNeeded(method, args);
  if (needed === undefined || ctx.scopes.has(needed)) return null;
  return fail('missing_scope', { needed, provided: [...ctx.scopes].join(',') });
}

function str(args: Record<string, unknown>, key: string): string | undefined {
  const v = args[key];
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}

function bool(args: Record<string, unknown>, key: string): boolean | undefined {
  const v = args[key];
  if (v === undefined) return undefined;
  return v === true || v === 'true' || v === '1' || v === 1;
}

function postMessage(ctx: ApiContext, args: Record<string, unknown>): ApiReply {
  const channel = str(args, 'channel');
  if (channel === undefined) return fail('channel_not_found');
  if (!CHANNEL_RE.test(channel)) return fail('channel_not_found');
  const text = str(args, 'text');
  if (text === undefined && args.blocks === undefined) return fail('no_text');
  if (text !== undefined && text.length > SLACK_TEXT_LIMIT) return fail('msg_too_long');
  const metadata = metadataOf(args.metadata);
  if (typeof metadata === 'string') return fail(metadata);
  const threadTs = str(args, 'thread_ts');
  const blocks = blocksOf(args.blocks);
  if (typeof blocks === 'string') return fail(blocks);
  const stored = storeBotMessage(ctx, channel, text ?? '', threadTs);
  const { ts } = stored;
  if (metadata !== undefined) stored.metadata = metadata;
  if (blocks !== undefined) stored.blocks = blocks;
  const record: SentRecord = { channel, ts, text: text ?? '', args };
  if (threadTs !== undefined) record.threadTs = threadTs;
  if (metadata !== undefined) record.metadata = metadata;
  const mrkdwn = bool(args, 'mrkdwn');
  if (mrkdwn !== undefined) record.mrkdwn = mrkdwn;
  ctx.sent.push(record);
  return ok({ channel, ts, message: toWire(stored, ctx) });
}

/** A message by the bot in the conversation (a post, or the message that shares uploaded files). */
function storeBotMessage(ctx: ApiContext, channel: string, text: string, threadTs: string | undefined): StoredMessage {
  const ts = ctx.clock.next();
  const stored: StoredMessage = { channel, ts, text, user: ctx.ws.botUserId, botId: ctx.ws.botId, reactions: new Map() };
  if (threadTs !== undefined) stored.threadTs = threadTs;
  ctx.messages.set(messageKey(channel, ts), stored);
  return stored;
}

function update(ctx: ApiContext, args: Record<string, unknown>): ApiReply {
  const channel = str(args, 'channel');
  const ts = str(args, 'ts');
  if (channel === undefined || !CHANNEL_RE.test(channel)) return fail('channel_not_found');
  if (ts === undefined) return fail('invalid_arguments');
  const msg = ctx.messages.get(messageKey(channel, ts));
  if (msg === undefined) return fail('message_not_found');
  if (msg.botId !== ctx.ws.botId) return fail('cant_update_message');
  const text = str(args, 'text') ?? '';
  if (text.length > SLACK_TEXT_LIMIT) return fail('msg_too_long');
  msg.text = text;
  ctx.updates.push({ channel, ts, text });
  return ok({ channel, ts, text, message: toWire(msg, ctx) });
}

function react(ctx: ApiContext, action: 'add' | 'remove', args: Record<string, unknown>): ApiReply {
  const channel = str(args, 'channel');
  const ts = str(args, 'timestamp');
  const name = str(args, 'name');
  if (channel === undefined || !CHANNEL_RE.test(channel)) return fail('channel_not_found');
  if (ts === undefined) return fail('no_item_specified');
  if (name === undefined || !/^[a-z0-9_+'-]+$/.test(name)) return fail('invalid_name');
  const msg = ctx.messages.get(messageKey(channel, ts));
  if (msg === undefined) return fail('message_not_found');
  const users = msg.reactions.get(name) ?? new Set<string>();
  if (action === 'add') {
    if (users.has(ctx.ws.botUserId)) return fail('already_reacted');
    users.add(ctx.ws.botUserId);
    msg.reactions.set(name, users);
  } else {
    if (!users.delete(ctx.ws.botUserId)) return fail('no_reaction');
    if (users.size === 0) msg.reactions.delete(name);
  }
  ctx.reactions.push({ action, channel, ts, name });
  return ok();
}

/** A time-range and cursor page of messages (given in the method's order), on the wire, as both history methods answer. */
interface Page {
  messages: Record<string, unknown>[];
  hasMore: boolean;
  nextCursor: string;
}

/** The page, or Slack's error code for a bad `limit` / `cursor`. Metadata shows with `include_all_metadata` only. */
function page(ctx: ApiContext, all: StoredMessage[], args: Record<string, unknown>, defaultLimit: number): Page | string {
  const oldest = Number.parseFloat(str(args, 'oldest') ?? '0');
  const latestArg = str(args, 'latest');
  const latest = latestArg === undefined ? Number.POSITIVE_INFINITY : Number.parseFloat(latestArg);
  const inclusive = bool(args, 'inclusive') === true;
  const inRange = all.filter((m) => {
    const t = Number.parseFloat(m.ts);
    return inclusive ? t >= oldest && t <= latest : t > oldest && t < latest;
  });
  const limitArg = str(args, 'limit');
  const limit = limitArg === undefined ? defaultLimit : Number.parseInt(limitArg, 10);
  if (!Number.isInteger(limit) || limit < 0) return 'invalid_limit';
  const size = limit === 0 ? defaultLimit : Math.min(limit, MAX_LIMIT);
  const cursor = str(args, 'cursor');
  let offset = 0;
  if (cursor !== undefined) {
    const m = /^offset:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
    if (m === null) return 'invalid_cursor';
    offset = Number(m[1]);
  }
  const withMetadata = bool(args, 'include_all_metadata') === true;
  const messages = inRange.slice(offset, offset + size).map((m) => toWire(m, ctx, withMetadata));
  const hasMore = offset + size < inRange.length;
  return { messages, hasMore, nextCursor: hasMore ? Buffer.from(`offset:${offset + size}`).toString('base64') : '' };
}

function byTs(a: StoredMessage, b: StoredMessage): number {
  return Number.parseFloat(a.ts) - Number.parseFloat(b.ts);
}

/** Top-level messages of a conversation (thread parents included, replies not), newest first. */
function history(ctx: ApiContext, args: Record<string, unknown>): ApiReply {
  const channel = str(args, 'channel');
  if (channel === undefined || !CHANNEL_RE.test(channel)) return fail('channel_not_found');
  const topLevel = [...ctx.messages.values()]
    .filter((m) => m.channel === channel && (m.threadTs === undefined || m.threadTs === m.ts))
    .sort((a, b) => byTs(b, a));
  const p = page(ctx, topLevel, args, HISTORY_DEFAULT_LIMIT);
  if (typeof p === 'string') return fail(p);
  return ok({
    messages: p.messages,
    has_more: p.hasMore,
    pin_count: 0,
    channel_actions_ts: null,
    channel_actions_count: 0,
    ...(p.hasMore && { response_metadata: { next_cursor: p.nextCursor } }),
  });
}

/** A thread, oldest first (Slack: "the earliest messages in the time range are returned first"). */
function replies(ctx: ApiContext, args: Record<string, unknown>): ApiReply {
  const channel = str(args, 'channel');
  const ts = str(args, 'ts');
  if (channel === undefined || !CHANNEL_RE.test(channel)) return fail('channel_not_found');
  if (ts === undefined) return fail('invalid_arguments');
  const parent = ctx.messages.get(messageKey(channel, ts));
  if (parent === undefined) return fail('thread_not_found');
  const root = parent.threadTs ?? parent.ts;
  const thread = [...ctx.messages.values()].filter((m) => m.channel === channel && (m.ts === root || m.threadTs === root)).sort(byTs);
  const p = page(ctx, thread, args, REPLIES_DEFAULT_LIMIT);
  if (typeof p === 'string') return fail(p);
  return ok({ messages: p.messages, has_more: p.hasMore, response_metadata: { next_cursor: p.nextCursor } });
}

function setStatus(ctx: ApiContext, args: Record<string, unknown>): ApiReply {
  const channelId = str(args, 'channel_id');
  const threadTs = str(args, 'thread_ts');
  const status = typeof args.status === 'string' ? args.status : undefined;
  if (channelId === undefined || threadTs === undefined || status === undefined) return fail('invalid_arguments');
  if (!CHANNEL_RE.test(channelId)) return fail('channel_not_found');
  ctx.statuses.push({ channelId, threadTs, status });
  return ok();
}

/** A message as the Web API shows it; `metadata` only where the caller asked for it (`include_all_metadata`). */
function toWire(m: StoredMessage, ctx: ApiContext, withMetadata = false): Record<string, unknown> {
  const wire: Record<string, unknown> = { type: 'message', ts: m.ts, text: m.text };
  if (m.user !== undefined) wire.user = m.user;
  if (m.botId !== undefined) {
    wire.bot_id = m.botId;
    wire.app_id = ctx.ws.appId;
  }
  if (m.threadTs !== undefined) wire.thread_ts = m.threadTs;
  if (m.blocks !== undefined) wire.blocks = m.blocks;
  if (m.reactions.size > 0) {
    wire.reactions = [...m.reactions].map(([name, users]) => ({ name, users: [...users], count: users.size }));
  }
  if (withMetadata && m.metadata !== undefined) wire.metadata = m.metadata;
  return wire;
}
