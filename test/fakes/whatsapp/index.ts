/**
 * A WhatsApp Cloud API stand-in on 127.0.0.1, written from Meta's public docs: the Graph routes Herald calls
 * (`POST /<version>/<phone-number-id>/messages`, `POST /<version>/<phone-number-id>/media`, `GET /<version>/<media-id>`,
 * the media download URL with the bearer token), Graph's error bodies (`{ error: { message, type, code,
 * error_data, fbtrace_id } }`), the 24-hour window (131047), injected failures (rate limits 130429 / 131056 / 80007 / 4,
 * HTTP 429, 5xx), and a webhook sender that signs what it posts.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { messagesPayload, postWebhook, signWebhook, type NumberMeta, type PostResult } from './webhook.js';

export { signWebhook, postWebhook, messagesPayload, type PostResult } from './webhook.js';

export const GRAPH_VERSION = 'v22.0';
const TEXT_LIMIT = 4_096;
const WINDOW_MS = 24 * 60 * 60_000;

/** Every message Herald sent, as Graph took it. */
export interface SentRecord {
  id: string;
  phoneNumberId: string;
  to: string;
  type: string;
  /** text.body, an interactive body, or a media caption. */
  text: string;
  body: Record<string, unknown>;
  replyTo?: string;
}

/** A status call: a read receipt, with typing when `typing`. */
export interface ReadRecord {
  phoneNumberId: string;
  messageId: string;
  typing: boolean;
}

export interface Upload {
  id: string;
  mimeType: string;
  name: string;
  bytes: Buffer;
}

export interface InjectedFailure {
  status: number;
  code: number;
  message?: string;
  /** Only calls whose path ends with this (default `/messages`). */
  path?: string;
  /** Let this many matching calls through first. */
  after?: number;
  /** Only messages of this `type` (text, interactive, audio…), not read receipts or typing: fails the reply itself. */
  messageType?: string;
}

export interface InboundOptions {
  from: string;
  name?: string;
  /** Seconds since epoch; default now. */
  timestamp?: number;
  id?: string;
  replyTo?: string;
  phoneNumberId?: string;
}

export interface WhatsAppFake {
  apiUrl: string;
  accessToken: string;
  appSecret: string;
  verifyToken: string;
  phoneNumberId: string;
  displayPhone: string;
  sent: SentRecord[];
  reads: ReadRecord[];
  uploads: Map<string, Upload>;
  /** Media downloads served (the bytes behind a media URL), by media id. */
  downloads: string[];
  /** Media a user sent: served at GET /<media-id>, then at its download URL. */
  hostMedia(bytes: Buffer, mimeType: string): string;
  failNext(...failures: InjectedFailure[]): void;
  /** The injected failures served so far, in order (those still waiting are not here). */
  failed: InjectedFailure[];
  /** Where webhooks go: `<gateway>/whatsapp/webhook`. */
  setWebhookUrl(url: string): void;
  addNumber(num: NumberMeta): void;
  /** As if the user had written at `atMs` (default now), without a webhook: the window Graph enforces. */
  openWindow(waId: string, atMs?: number, phoneNumberId?: string): void;
  /** Posts one user message (signed); the message id is returned with the answer. */
  text(text: string, opts: InboundOptions): Promise<PostResult & { id: string }>;
  message(partial: Record<string, unknown>, opts: InboundOptions): Promise<PostResult & { id: string }>;
  /** Posts any payload signed (or with `signature` as given / none). */
  post(payload: unknown, signature?: string | null): Promise<PostResult>;
  postRaw(raw: string, signature?: string | null): Promise<PostResult>;
  sentTo(waId: string): SentRecord[];
  close(): Promise<void>;
}

export interface WhatsAppFakeOptions {
  phoneNumberId?: string;
  displayPhone?: string;
  /** Fixed credentials (a secrets test); random otherwise. */
  accessToken?: string;
  appSecret?: string;
  verifyToken?: string;
}

export async function startWhatsAppFake(opts: WhatsAppFakeOptions = {}): Promise<WhatsAppFake> {
  const state = new FakeState(opts.phoneNumberId ?? '106540352242922', opts.displayPhone ?? '15550001111', opts);
  const server = createServer((req, res) => {
    state.handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) graphError(res, 500, 1, `fake failure: ${String(err)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.base = base;
  return state.api(base, server);
}

function graphError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({ error: { message, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: message }, fbtrace_id: 'Afake' } }),
  );
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A /messages body's `type` (a read receipt has none). */
function messageTypeOf(raw: Buffer): string | undefined {
  try {
    const body = JSON.parse(raw.toString('utf8')) as { type?: unknown; status?: unknown };
    return body.status === undefined ? String(body.type ?? 'text') : undefined;
  } catch {
    return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

class FakeState {
  base = '';
  readonly accessToken: string;
  readonly appSecret: string;
  readonly verifyToken: string;
  readonly sent: SentRecord[] = [];
  readonly reads: ReadRecord[] = [];
  readonly uploads = new Map<string, Upload>();
  readonly downloads: string[] = [];
  readonly hosted = new Map<string, { bytes: Buffer; mimeType: string }>();
  readonly failures: InjectedFailure[] = [];
  readonly failed: InjectedFailure[] = [];
  readonly numbers = new Map<string, NumberMeta>();
  /** Each user's last message time per number (ms), from the webhooks this fake sent: the 24-hour window. */
  readonly lastInbound = new Map<string, number>();
  webhookUrl = '';
  private seq = 0;

  constructor(
    readonly phoneNumberId: string,
    readonly displayPhone: string,
    given: WhatsAppFakeOptions,
  ) {
    this.accessToken = given.accessToken ?? `EAAG${randomBytes(16).toString('hex')}`;
    this.appSecret = given.appSecret ?? randomBytes(16).toString('hex');
    this.verifyToken = given.verifyToken ?? `verify-${randomBytes(6).toString('hex')}`;
    this.numbers.set(phoneNumberId, { phoneNumberId, displayPhone });
  }

  nextId(prefix: string): string {
    this.seq += 1;
    return `${prefix}${Date.now().toString(36)}${this.seq.toString().padStart(6, '0')}${randomBytes(3).toString('hex')}`;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    if (url.pathname.startsWith('/download/')) return this.download(url.pathname.slice('/download/'.length), req, res);
    const prefix = `/${GRAPH_VERSION}/`;
    if (!url.pathname.startsWith(prefix)) return graphError(res, 400, 100, 'Unknown path components');
    if (req.headers.authorization !== `Bearer ${this.accessToken}`) {
      return graphError(res, 401, 190, 'Error validating access token: The session is invalid.');
    }
    const path = url.pathname.slice(prefix.length);
    const raw = req.method === 'POST' ? await readBody(req) : Buffer.alloc(0);
    const f = req.method === 'POST' ? this.takeFailure(path, raw) : undefined;
    if (f) return graphError(res, f.status, f.code, f.message ?? `injected failure ${f.code}`);
    const [first, second] = path.split('/');
    if (req.method === 'POST' && second === 'messages' && this.numbers.has(first)) return this.messages(first, raw, res);
    if (req.method === 'POST' && second === 'media' && this.numbers.has(first)) return this.upload(req, raw, res);
    if (req.method === 'GET' && second === undefined && this.numbers.has(first)) {
      return json(res, { display_phone_number: this.numbers.get(first)?.displayPhone, verified_name: 'Herald Test', id: first });
    }
    if (req.method === 'GET' && second === undefined && this.hosted.has(first)) {
      const m = this.hosted.get(first);
      return json(res, {
        messaging_product: 'whatsapp',
        url: `${this.base}/download/${first}`,
        mime_type: m?.mimeType,
        sha256: 'x',
        file_size: m?.bytes.length,
        id: first,
      });
    }
    return graphError(res, 400, 100, `Unsupported request - method type: ${req.method?.toLowerCase()}`);
  }

  /** The first injected failure this call matches, once its `after` has run out; counts down `after` otherwise. */
  private takeFailure(path: string, raw: Buffer): InjectedFailure | undefined {
    const i = this.failures.findIndex((f) => path.endsWith(f.path ?? '/messages') && (f.messageType === undefined || messageTypeOf(raw) === f.messageType));
    if (i === -1) return undefined;
    const f = this.failures[i];
    if ((f.after ?? 0) > 0) {
      f.after = (f.after ?? 0) - 1;
      return undefined;
    }
    this.failures.splice(i, 1);
    this.failed.push(f);
    return f;
  }

  private download(id: string, req: IncomingMessage, res: ServerResponse): void {
    const m = this.hosted.get(id);
    if (req.headers.authorization !== `Bearer ${this.accessToken}`) return void res.writeHead(401).end();
    if (!m) return void res.writeHead(404).end();
    this.downloads.push(id);
    res.writeHead(200, { 'content-type': m.mimeType, 'content-length': String(m.bytes.length) });
    res.end(m.bytes);
  }

  private messages(phoneNumberId: string, raw: Buffer, res: ServerResponse): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return graphError(res, 400, 100, 'Invalid JSON');
    }
    if (body.messaging_product !== 'whatsapp') return graphError(res, 400, 100, '(#100) The parameter messaging_product is required.');
    if (body.status === 'read') {
      if (typeof body.message_id !== 'string') return graphError(res, 400, 100, '(#100) message_id is required');
      this.reads.push({ phoneNumberId, messageId: body.message_id, typing: typeof body.typing_indicator === 'object' });
      return json(res, { success: true });
    }
    const to = String(body.to ?? '');
    const type = String(body.type ?? 'text');
    const part = (body[type] ?? {}) as Record<string, unknown>;
    const text =
      type === 'text'
        ? String(part.body ?? '')
        : type === 'interactive'
          ? String((part.body as { text?: string } | undefined)?.text ?? '')
          : String(part.caption ?? '');
    if (type === 'text' && (text.length === 0 || text.length > TEXT_LIMIT))
      return graphError(res, 400, 100, "(#100) Param text['body'] must be at most 4096 characters long.");
    const last = this.lastInbound.get(`${phoneNumberId}:${to}`);
    if (type !== 'template' && type !== 'reaction' && (last === undefined || Date.now() - last > WINDOW_MS)) {
      return graphError(res, 400, 131047, 'Re-engagement message');
    }
    if ((type === 'image' || type === 'audio' || type === 'document') && !this.uploads.has(String(part.id))) {
      return graphError(res, 400, 131053, 'Media upload error');
    }
    const id = this.nextId('wamid.OUT');
    const context = body.context as { message_id?: string } | undefined;
    this.sent.push({ id, phoneNumberId, to, type, text, body, ...(context?.message_id && { replyTo: context.message_id }) });
    json(res, { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id }] });
  }

  private async upload(req: IncomingMessage, raw: Buffer, res: ServerResponse): Promise<void> {
    let form: FormData;
    try {
      form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: raw }).formData();
    } catch {
      return graphError(res, 400, 100, 'Invalid multipart body');
    }
    const file = form.get('file');
    if (form.get('messaging_product') !== 'whatsapp' || !(file instanceof Blob))
      return graphError(res, 400, 100, '(#100) file and messaging_product are required');
    const id = this.nextId('MEDIA');
    this.uploads.set(id, {
      id,
      mimeType: String(form.get('type') ?? file.type),
      name: (file as File).name ?? '',
      bytes: Buffer.from(await file.arrayBuffer()),
    });
    json(res, { id });
  }

  inboundMessage(partial: Record<string, unknown>, o: InboundOptions): { id: string; payload: Record<string, unknown> } {
    const id = o.id ?? this.nextId('wamid.IN');
    const timestamp = o.timestamp ?? Math.floor(Date.now() / 1000);
    const num = this.numbers.get(o.phoneNumberId ?? this.phoneNumberId) ?? { phoneNumberId: o.phoneNumberId ?? '', displayPhone: '' };
    this.lastInbound.set(`${num.phoneNumberId}:${o.from}`, Math.max(this.lastInbound.get(`${num.phoneNumberId}:${o.from}`) ?? 0, timestamp * 1000));
    const message = { from: o.from, id, timestamp: String(timestamp), ...(o.replyTo && { context: { from: num.displayPhone, id: o.replyTo } }), ...partial };
    return {
      id,
      payload: messagesPayload(num, { contacts: [{ profile: { name: o.name ?? `User ${o.from.slice(-4)}` }, wa_id: o.from }], messages: [message] }),
    };
  }

  api(base: string, server: Server): WhatsAppFake {
    const post = (payload: unknown, signature?: string | null) => {
      const raw = JSON.stringify(payload);
      return postWebhook(this.webhookUrl, raw, signature === undefined ? signWebhook(this.appSecret, raw) : signature);
    };
    const message = async (partial: Record<string, unknown>, o: InboundOptions) => {
      const { id, payload } = this.inboundMessage(partial, o);
      return { ...(await post(payload)), id };
    };
    return {
      apiUrl: `${base}/${GRAPH_VERSION}`,
      accessToken: this.accessToken,
      appSecret: this.appSecret,
      verifyToken: this.verifyToken,
      phoneNumberId: this.phoneNumberId,
      displayPhone: this.displayPhone,
      sent: this.sent,
      reads: this.reads,
      uploads: this.uploads,
      downloads: this.downloads,
      hostMedia: (bytes, mimeType) => {
        const id = this.nextId('IN');
        this.hosted.set(id, { bytes, mimeType });
        return id;
      },
      failNext: (...f) => void this.failures.push(...f),
      failed: this.failed,
      setWebhookUrl: (url) => void (this.webhookUrl = url),
      addNumber: (num) => void this.numbers.set(num.phoneNumberId, num),
      openWindow: (waId, atMs = Date.now(), pnid = this.phoneNumberId) => void this.lastInbound.set(`${pnid}:${waId}`, atMs),
      text: (text, o) => message({ type: 'text', text: { body: text } }, o),
      message,
      post,
      postRaw: (raw, signature) => postWebhook(this.webhookUrl, raw, signature === undefined ? signWebhook(this.appSecret, raw) : signature),
      sentTo: (waId) => this.sent.filter((s) => s.to === waId),
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }
}
