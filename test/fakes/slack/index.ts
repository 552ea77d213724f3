/**
 * A protocol-faithful Slack stand-in on 127.0.0.1: the Web API (`<url>/api/<method>`), Socket Mode
 * (`apps.connections.open` + `ws://…/link/?ticket=…`), and a signer that POSTs Events API payloads to a Request URL.
 *
 * User events (`dm`, `channelMessage`, `deliver`) go over HTTP when an events URL is set (`setEventsUrl`), else
 * over Socket Mode to the connected client.
 */
import { randomUUID } from 'node:crypto';
import { FakeSlackFiles } from './hosted-files.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseQuery } from 'node:querystring';
import {
  eventCallback,
  newEventId,
  postSignedEvent,
  postSignedForm,
  TsClock,
  urlVerification,
  type PostEventOptions,
  type PostResult,
  type SlackEvent,
} from './events.js';
import { SocketModeServer } from './socket-mode.js';
import {
  DEFAULT_BOT_SCOPES,
  handleApiCall,
  messageKey,
  type ApiContext,
  type CallRecord,
  type EphemeralRecord,
  type HomeViewRecord,
  type Failure,
  type ReactionRecord,
  type SentRecord,
  type StatusRecord,
  type StoredMessage,
  type UpdateRecord,
} from './web-api.js';
import { receiveUpload, SLACK_MAX_FILE_BYTES, type SharedFileRecord } from './files.js';

export type { SharedFileRecord } from './files.js';
export { signSlackRequest, postSignedEvent, postSignedForm, eventCallback, type PostResult } from './events.js';
export { SLACK_TEXT_LIMIT, DEFAULT_BOT_SCOPES } from './web-api.js';
export type {
  MessageMetadata,
  SentRecord,
  UpdateRecord,
  ReactionRecord,
  StatusRecord,
  CallRecord,
  Failure,
  EphemeralRecord,
  HomeViewRecord,
} from './web-api.js';
export type { Envelope, AckRecord } from './socket-mode.js';

export interface SlackFakeOptions {
  botToken?: string;
  appToken?: string;
  signingSecret?: string;
  teamId?: string;
  appId?: string;
  botUserId?: string;
  botId?: string;
  /** Events API Request URL; without it, events go over Socket Mode. */
  eventsUrl?: string;
  ackTimeoutMs?: number;
  maxRedeliveries?: number;
  /** The bot token's OAuth scopes (default `DEFAULT_BOT_SCOPES`); methods needing another answer `missing_scope`. */
  scopes?: string[];
  /** Largest upload the workspace allows (default Slack's 1 GB); above it `file_upload_size_restricted`. */
  maxFileBytes?: number;
}

export interface Delivery {
  channel: string;
  ts: string;
  /** The `event_callback` bodies sent (e.g. `message` then `app_mention`), for redelivery. */
  bodies: Record<string, unknown>[];
  eventIds: string[];
  /** HTTP transport: Slack's view of each POST. */
  responses: PostResult[];
  /** Socket Mode transport: envelope ids, to wait for their acks. */
  envelopeIds: string[];
}

export interface SlashDelivery {
  fields: Record<string, string>;
  /** HTTP transport: Slack's view of the POST. */
  response?: PostResult;
  /** Socket Mode transport: the envelope id, to wait for its ack. */
  envelopeId?: string;
}

export interface DeliverOptions {
  /** HTTP only. */
  retryNum?: number;
  retryReason?: string;
  forgeSignature?: boolean;
  timestampSec?: number;
}

export interface SlackFake {
  url: string;
  /** Web API base to give the SDK (`slackApiUrl`), with its trailing slash. */
  apiUrl: string;
  apiRoot: string;
  botToken: string;
  appToken: string;
  signingSecret: string;
  teamId: string;
  appId: string;
  botUserId: string;
  botId: string;
  sent: SentRecord[];
  updates: UpdateRecord[];
  reactions: ReactionRecord[];
  statuses: StatusRecord[];
  /** chat.postEphemeral messages (seen by one user only). */
  ephemerals: EphemeralRecord[];
  /** views.publish calls (App Home tabs), in order. */
  homeViews: HomeViewRecord[];
  calls: CallRecord[];
  /** Files shared through files upload v2 (files.completeUploadExternal), with their bytes. */
  files: SharedFileRecord[];
  socket: SocketModeServer;
  setEventsUrl(url: string | undefined): void;
  /** Re-installs the app with these bot scopes (e.g. without `im:history`): later calls are checked against them. */
  setScopes(scopes: string[]): void;
  /** The next call of `method` fails: `{ok:false, error}`, or 429 + Retry-After for `ratelimited`. Queued. */
  failNext(method: string, error: string, opts?: Omit<Failure, 'error'>): void;
  dm(opts: { user: string; text: string; threadTs?: string; channel?: string; files?: unknown[] }): Promise<Delivery>;
  /** Private file hosting (hosted-files.ts): `share` stores a file and returns the object to put in `dm({ files })`. */
  hosted: FakeSlackFiles;
  /** A channel message; with `<@botUserId>` in the text Slack sends `message` and `app_mention`, as here. */
  channelMessage(opts: { channel: string; user: string; text: string; threadTs?: string }): Promise<Delivery>;
  /**
   * A user types a slash command (default `/herald`) in a channel (default: their DM with the bot): over HTTP the
   * signed form POST, over Socket Mode a `slash_commands` envelope. Returns the fields and the transport's view.
   */
  slashCommand(opts: { user: string; text: string; command?: string; channel?: string }): Promise<SlashDelivery>;
  /**
   * A user presses a Block Kit button under a bot message (`block_actions`): over HTTP a signed form POST with a
   * `payload` field, over Socket Mode an `interactive` envelope. The button must be on the message.
   */
  pressButton(opts: { user: string; channel: string; ts: string; actionId: string }): Promise<SlashDelivery>;
  /** Any event (bot messages, edits, …) wrapped in an `event_callback` and delivered. */
  deliver(event: SlackEvent, opts?: DeliverOptions & { eventId?: string }): Promise<Delivery>;
  /** Sends an `event_callback` body again: HTTP with X-Slack-Retry-Num, or a Socket Mode envelope with retry_attempt. */
  redeliver(body: Record<string, unknown>, retryNum?: number): Promise<Delivery>;
  /** POSTs any body, signed, to the events URL (url_verification, forged signature, stale timestamp…). */
  post(body: unknown, opts?: Omit<PostEventOptions, 'signingSecret'>): Promise<PostResult>;
  urlVerification(challenge: string): Promise<PostResult>;
  message(channel: string, ts: string): StoredMessage | undefined;
  dmChannel(user: string): string;
  /** Stops listening (connections cut), keeping all state; `restart()` listens again on the same port. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startSlackFake(opts: SlackFakeOptions = {}): Promise<SlackFake> {
  const ws = {
    teamId: opts.teamId ?? 'T0HERALD1',
    appId: opts.appId ?? 'A0HERALD1',
    botUserId: opts.botUserId ?? 'U0HERALDBOT',
    botId: opts.botId ?? 'B0HERALD1',
    botToken: opts.botToken ?? 'xoxb-fake-bot-token',
    appToken: opts.appToken ?? 'xapp-1-A0HERALD1-fake-app-token',
    verificationToken: 'fake-verification-token',
  };
  const signingSecret = opts.signingSecret ?? 'fake-signing-secret';
  const clock = new TsClock();
  const socket = new SocketModeServer({ appId: ws.appId, ackTimeoutMs: opts.ackTimeoutMs ?? 3_000, maxRetries: opts.maxRedeliveries ?? 3 });
  let eventsUrl = opts.eventsUrl;
  let origin = '';

  const ctx: ApiContext = {
    ws,
    clock,
    messages: new Map(),
    sent: [],
    updates: [],
    reactions: [],
    statuses: [],
    ephemerals: [],
    homeViews: [],
    calls: [],
    failures: new Map(),
    scopes: new Set(opts.scopes ?? DEFAULT_BOT_SCOPES),
    openConnection: () => socket.issueUrl(origin),
    files: { pending: new Map(), shared: [], origin: () => origin, maxFileBytes: opts.maxFileBytes ?? SLACK_MAX_FILE_BYTES },
    fileInfo: (id) => hosted.info(id),
  };

  const hosted = new FakeSlackFiles(
    () => origin,
    ws.teamId,
    (token) => token === ws.botToken && ctx.scopes.has('files:read'),
  );
  const server = createServer((req, res) => void (hosted.handle(req, res) || serveApi(ctx, req, res)));
  server.on('upgrade', (req, sock, head) => socket.handleUpgrade(req, sock, head));
  await listen(server, 0);
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;

  const storeUserMessage = (channel: string, user: string, text: string, threadTs?: string): string => {
    const ts = clock.next();
    const m: StoredMessage = { channel, ts, user, text, reactions: new Map() };
    if (threadTs !== undefined) m.threadTs = threadTs;
    ctx.messages.set(messageKey(channel, ts), m);
    return ts;
  };

  const send = async (bodies: Record<string, unknown>[], o: DeliverOptions = {}): Promise<Omit<Delivery, 'channel' | 'ts'>> => {
    const out = { bodies, eventIds: bodies.map((b) => String(b.event_id)), responses: [] as PostResult[], envelopeIds: [] as string[] };
    for (const body of bodies) {
      if (eventsUrl !== undefined) {
        out.responses.push(await postSignedEvent(eventsUrl, body, { signingSecret, ...o }));
      } else {
        const retry = o.retryNum === undefined ? undefined : { attempt: o.retryNum, reason: o.retryReason ?? 'timeout' };
        out.envelopeIds.push(socket.send(body, retry).envelope_id);
      }
    }
    return out;
  };

  const fake: SlackFake = {
    url: origin,
    apiUrl: `${origin}/api/`,
    apiRoot: `${origin}/api/`,
    botToken: ws.botToken,
    appToken: ws.appToken,
    signingSecret,
    teamId: ws.teamId,
    appId: ws.appId,
    botUserId: ws.botUserId,
    botId: ws.botId,
    sent: ctx.sent,
    updates: ctx.updates,
    reactions: ctx.reactions,
    statuses: ctx.statuses,
    ephemerals: ctx.ephemerals,
    homeViews: ctx.homeViews,
    calls: ctx.calls,
    files: ctx.files.shared,
    socket,
    hosted,
    setEventsUrl(url) {
      eventsUrl = url;
    },
    setScopes(scopes) {
      ctx.scopes = new Set(scopes);
    },
    failNext(method, error, o = {}) {
      const q = ctx.failures.get(method) ?? [];
      q.push({ error, ...o });
      ctx.failures.set(method, q);
    },
    async dm({ user, text, threadTs, channel, files }) {
      const ch = channel ?? fake.dmChannel(user);
      const ts = storeUserMessage(ch, user, text, threadTs);
      const event: SlackEvent = {
        type: 'message',
        channel: ch,
        user,
        text,
        ts,
        event_ts: ts,
        channel_type: 'im',
        team: ws.teamId,
        client_msg_id: randomUUID(),
        blocks: richText(text),
      };
      if (threadTs !== undefined) Object.assign(event, { thread_ts: threadTs, parent_user_id: user });
      if (files !== undefined) Object.assign(event, { subtype: 'file_share', files, upload: false, display_as_bot: false });
      return { channel: ch, ts, ...(await send([eventCallback(ws, event)])) };
    },
    async channelMessage({ channel, user, text, threadTs }) {
      const ts = storeUserMessage(channel, user, text, threadTs);
      const common = { user, text, ts, event_ts: ts, channel, team: ws.teamId, client_msg_id: randomUUID(), blocks: richText(text) };
      const thread = threadTs === undefined ? {} : { thread_ts: threadTs, parent_user_id: user };
      const bodies = [eventCallback(ws, { type: 'message', ...common, ...thread, channel_type: channel.startsWith('G') ? 'group' : 'channel' })];
      if (text.includes(`<@${ws.botUserId}>`)) bodies.push(eventCallback(ws, { type: 'app_mention', ...common, ...thread }));
      return { channel, ts, ...(await send(bodies)) };
    },
    async slashCommand({ user, text, command, channel }) {
      const ch = channel ?? fake.dmChannel(user);
      const fields: Record<string, string> = {
        token: ws.verificationToken,
        team_id: ws.teamId,
        team_domain: 'herald-test',
        channel_id: ch,
        channel_name: ch.startsWith('D') ? 'directmessage' : 'general',
        user_id: user,
        user_name: user.toLowerCase(),
        command: command ?? '/herald',
        text,
        api_app_id: ws.appId,
        is_enterprise_install: 'false',
        response_url: `${origin}/commands/${randomUUID()}`,
        trigger_id: `${Date.now()}.${randomUUID().slice(0, 8)}`,
      };
      if (eventsUrl !== undefined) return { fields, response: await postSignedForm(eventsUrl, fields, { signingSecret }) };
      return { fields, envelopeId: socket.send(fields, undefined, 'slash_commands').envelope_id };
    },
    async pressButton({ user, channel, ts, actionId }) {
      const stored = ctx.messages.get(messageKey(channel, ts));
      const actions = (stored?.blocks ?? []) as Array<{ type?: string; block_id?: string; elements?: Array<Record<string, unknown>> }>;
      const block = actions.find((b) => b.type === 'actions' && b.elements?.some((e) => e.action_id === actionId));
      const button = block?.elements?.find((e) => e.action_id === actionId);
      if (!stored || !block || !button) throw new Error(`no button ${actionId} on message ${channel}/${ts}`);
      const payload = {
        type: 'block_actions',
        user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: ws.teamId },
        api_app_id: ws.appId,
        token: ws.verificationToken,
        container: {
          type: 'message',
          message_ts: ts,
          channel_id: channel,
          is_ephemeral: false,
          ...(stored.threadTs !== undefined && { thread_ts: stored.threadTs }),
        },
        trigger_id: `${Date.now()}.${randomUUID().slice(0, 8)}`,
        team: { id: ws.teamId, domain: 'herald-test' },
        channel: { id: channel, name: channel.startsWith('D') ? 'directmessage' : 'general' },
        message: {
          type: 'message',
          ts,
          text: stored.text,
          user: stored.user,
          bot_id: stored.botId,
          blocks: stored.blocks,
          ...(stored.threadTs !== undefined && { thread_ts: stored.threadTs }),
        },
        response_url: `${origin}/actions/${randomUUID()}`,
        actions: [{ ...button, block_id: block.block_id ?? 'actions', action_ts: clock.next() }],
      };
      if (eventsUrl !== undefined)
        return {
          fields: { payload: JSON.stringify(payload) },
          response: await postSignedForm(eventsUrl, { payload: JSON.stringify(payload) }, { signingSecret }),
        };
      return { fields: { payload: JSON.stringify(payload) }, envelopeId: socket.send(payload, undefined, 'interactive').envelope_id };
    },
    async deliver(event, o = {}) {
      const body = eventCallback(ws, event, o.eventId ?? newEventId());
      return { channel: String(event.channel ?? ''), ts: String(event.ts ?? ''), ...(await send([body], o)) };
    },
    async redeliver(body, retryNum = 1) {
      const event = (body.event ?? {}) as Record<string, unknown>;
      return { channel: String(event.channel ?? ''), ts: String(event.ts ?? ''), ...(await send([body], { retryNum, retryReason: 'timeout' })) };
    },
    async post(body, o = {}) {
      if (eventsUrl === undefined) throw new Error('Slack fake: no events URL set');
      return postSignedEvent(eventsUrl, body, { signingSecret, ...o });
    },
    urlVerification(challenge) {
      return fake.post(urlVerification(ws, challenge));
    },
    message: (channel, ts) => ctx.messages.get(messageKey(channel, ts)),
    dmChannel: (user) => `D${user.replace(/^[UW]/, '')}`,
    async stop() {
      socket.drop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async restart() {
      await listen(server, port);
    },
    async close() {
      socket.close();
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

async function serveApi(ctx: ApiContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const upload = /^\/upload\/v1\/(\w+)$/.exec(url.pathname);
  if (upload !== null) return receiveUpload(ctx.files, upload[1], req, res);
  const m = /^\/api\/([\w.]+)$/.exec(url.pathname);
  if (m === null) return reply(res, 404, {}, { ok: false, error: 'unknown_method' });
  const raw = await readBody(req);
  const contentType = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  let args: Record<string, unknown> = Object.fromEntries(url.searchParams);
  try {
    if (contentType === 'application/json' && raw !== '') args = { ...args, ...(JSON.parse(raw) as Record<string, unknown>) };
    else if (raw !== '') args = { ...args, ...parseQuery(raw) };
  } catch {
    return reply(res, 200, {}, { ok: false, error: 'invalid_json' });
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
  const token = bearer?.[1] ?? (typeof args.token === 'string' ? args.token : undefined);
  delete args.token;
  const answer = handleApiCall(ctx, m[1], args, token);
  if (answer.status === 0) return; // silence: the request stays open until the client gives up
  reply(res, answer.status, answer.headers, answer.body);
}

function reply(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const type = typeof body === 'string' ? 'text/html' : 'application/json; charset=utf-8';
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The rich_text block Slack clients attach to what a user types. */
function richText(text: string): unknown[] {
  return [{ type: 'rich_text', block_id: 'b1', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }] }];
}

/** Polls `predicate` until it holds (tests wait for asynchronous hand-over this way). */
export async function waitFor(predicate: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
