/**
 * Server-sent events for streaming requests. The status line is held back until the first text (or a few
 * seconds): a turn that fails before saying anything — the model provider's rate limit, say — still answers with
 * a real status code (429 with Retry-After) instead of a 200 stream carrying an error. Once open, a comment line
 * every 15 s keeps proxies from closing a stream while tools run.
 */
import type { FastifyReply } from 'fastify';
import { sendApiError, type ApiError } from './errors.js';
import type { Answer, ExchangeOutcome } from './exchange.js';

export interface SseEvent {
  /** The `event:` line (the Responses API names its events; Chat Completions does not). */
  event?: string;
  data: unknown;
}

/** What one wire format says at each point of the stream. */
export interface StreamFormat {
  /** Sent when the stream opens. */
  open(): SseEvent[];
  text(chunk: string): SseEvent[];
  /** The turn answered; `shown` is all the text the client was sent. */
  success(answer: Answer, shown: string): SseEvent[];
  failure(error: ApiError): SseEvent[];
  /** The last line, if the format has one (`[DONE]`). */
  readonly terminator?: string;
}

const OPEN_AFTER_MS = 3_000;
const KEEPALIVE_MS = 15_000;

export class SseSink {
  private opened = false;
  private ended = false;
  private readonly held: string[] = [];
  private keepalive: NodeJS.Timeout | null = null;

  constructor(
    private readonly reply: FastifyReply,
    private readonly format: StreamFormat,
    private readonly headers: Record<string, string>,
  ) {}

  /** Given to the exchange: text as it grows. */
  readonly text = (chunk: string): void => {
    if (!this.opened) {
      this.held.push(chunk);
      this.open();
      return;
    }
    this.write(this.format.text(chunk));
  };

  /** Runs the stream until the exchange settles; `shown` reads the text the client was sent. */
  async run(outcome: Promise<ExchangeOutcome>, shown: () => string): Promise<void> {
    const timer = setTimeout(() => this.open(), OPEN_AFTER_MS);
    try {
      const o = await outcome;
      if (!this.opened && !o.ok) return await sendApiError(this.reply, o.error);
      this.open();
      this.write(o.ok ? this.format.success(o.answer, shown()) : this.format.failure(o.error));
      if (o.ok && this.format.terminator) this.writeRaw(`data: ${this.format.terminator}\n\n`);
    } finally {
      clearTimeout(timer);
      this.end();
    }
  }

  private open(): void {
    if (this.opened || this.ended) return;
    this.opened = true;
    this.reply.hijack();
    const raw = this.reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...this.headers,
    });
    this.write(this.format.open());
    for (const chunk of this.held.splice(0)) this.write(this.format.text(chunk));
    this.keepalive = setInterval(() => this.writeRaw(': keepalive\n\n'), KEEPALIVE_MS);
  }

  private write(events: SseEvent[]): void {
    for (const e of events) this.writeRaw(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
  }

  private writeRaw(s: string): void {
    const raw = this.reply.raw;
    if (!this.ended && !raw.destroyed && !raw.writableEnded) raw.write(s);
  }

  private end(): void {
    if (this.keepalive) clearInterval(this.keepalive);
    this.keepalive = null;
    if (this.opened && !this.ended) this.reply.raw.end();
    this.ended = true;
  }
}
