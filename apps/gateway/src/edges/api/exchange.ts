/**
 * One request's side of a turn: reads the turn's reply events (reply-channel.ts) as they come and settles what the
 * request answers — the reply, or an error in OpenAI's shape. Streaming requests also get the text as it grows
 * (through StreamedText, so what they were shown stays consistent with the reply).
 */
import { ApiError } from './errors.js';
import type { ReplyEvent } from './reply-channel.js';
import { StreamedText } from './stream-text.js';

export interface TurnUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface Answer {
  text: string;
  usage: TurnUsage | null;
  /** The model that answered (`gpt-4.1-mini`), when the agent loop ran. */
  model: string | null;
}

export type ExchangeOutcome = { ok: true; answer: Answer } | { ok: false; error: ApiError };

/** Seconds a client is told to wait after the model provider rate limited the turn. */
const PROVIDER_RETRY_AFTER_S = 60;

export class ApiExchange {
  readonly streamed = new StreamedText();
  readonly outcome: Promise<ExchangeOutcome>;
  private settle!: (o: ExchangeOutcome) => void;
  private settled = false;
  private result: { usage: TurnUsage; model: string; error: string | null } | null = null;
  private notice: string | null = null;

  /** `onText`: streaming requests, told each piece of text to send (never empty). */
  constructor(private readonly onText: ((chunk: string) => void) | null = null) {
    this.outcome = new Promise((resolve) => (this.settle = resolve));
  }

  get done(): boolean {
    return this.settled;
  }

  readonly handle = (events: ReplyEvent[]): void => {
    for (const e of events) {
      if (this.settled) return;
      this.apply(e);
    }
  };

  /** Ends the exchange from outside (the server is shutting down, Redis failed): the error is the answer. */
  fail(error: ApiError): void {
    this.finish({ ok: false, error });
  }

  private apply(e: ReplyEvent): void {
    switch (e.t) {
      case 'start':
      case 'retry':
        this.streamed.restart();
        return;
      case 'delta':
        this.send(this.streamed.delta(e.text));
        return;
      case 'tool':
        if (e.phase === 'start') this.streamed.toolStarted();
        return;
      case 'result':
        this.result = { usage: e.usage, model: e.model, error: e.error };
        return;
      case 'message':
        if (!e.final) {
          this.notice = e.text;
          return;
        }
        if (this.result?.error) {
          this.finish({ ok: false, error: providerError(this.result.error, e.text) });
          return;
        }
        this.send(this.streamed.final(e.text));
        this.finish({ ok: true, answer: { text: e.text, usage: this.result?.usage ?? null, model: this.result?.model ?? null } });
        return;
      case 'end':
        // The turn is over without a reply of its own: it failed (its notice says how) or was abandoned.
        this.finish({ ok: false, error: new ApiError(500, this.notice ?? 'The turn ended without an answer.', 'server_error', 'turn_failed') });
        return;
    }
  }

  private send(chunk: string): void {
    if (chunk !== '' && this.onText) this.onText(chunk);
  }

  private finish(o: ExchangeOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(o);
  }
}

/** The model provider's failure, as the status an OpenAI client expects for it; the message is the turn's reply. */
function providerError(kind: string, message: string): ApiError {
  switch (kind) {
    case 'rate_limit':
      return new ApiError(429, message, 'rate_limit_error', 'rate_limit_exceeded', null, PROVIDER_RETRY_AFTER_S);
    case 'overloaded':
      return new ApiError(503, message, 'server_error', 'overloaded', null, 30);
    case 'context_overflow':
    case 'payload_too_large':
      return new ApiError(400, message, 'invalid_request_error', 'context_length_exceeded', 'messages');
    default:
      return new ApiError(502, message, 'server_error', `upstream_${kind}`);
  }
}
