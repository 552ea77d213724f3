/**
 * One Bot API client for ingress and egress: telegraf's `Telegram` (REST only, never polling on its own),
 * plus the one retry Telegram asks for explicitly: a 429 with `retry_after` is waited out in place a couple of
 * times. Other failures are thrown as telegraf raised them, so callers can pick their platform-specific fallback
 * before mapping them with `toPlatformError`.
 */
import type { Logger } from 'pino';
import { Telegram } from 'telegraf';
import type { Opts, Telegram as ApiMethods } from 'telegraf/types';
import { apiFailure } from './api-errors.js';
import {
  TELEGRAM_DEFAULT_API_ROOT,
  TELEGRAM_MAX_INLINE_RETRY_AFTER_MS,
  TELEGRAM_RATE_LIMIT_RETRIES,
  type Sleep,
} from './config.js';
import { sleep as realSleep } from './sleep.js';

/** telegraf types its `signal` option with the abort-controller polyfill; node-fetch accepts Node's own. */
type CallApiOptions = NonNullable<Parameters<Telegram['callApi']>[2]>;

export interface TelegramApiOptions {
  token: string;
  apiRoot?: string;
  logger: Logger;
  sleep?: Sleep;
  maxInlineRetryAfterMs?: number;
}

export class TelegramApi {
  readonly telegram: Telegram;
  private readonly logger: Logger;
  private readonly sleep: Sleep;
  private readonly maxInlineRetryAfterMs: number;

  constructor(opts: TelegramApiOptions) {
    // webhookReply: false — every call is a real HTTP request with a real result, even inside a webhook.
    this.telegram = new Telegram(opts.token, {
      apiRoot: opts.apiRoot ?? TELEGRAM_DEFAULT_API_ROOT,
      webhookReply: false,
    });
    this.logger = opts.logger;
    this.sleep = opts.sleep ?? realSleep;
    this.maxInlineRetryAfterMs = opts.maxInlineRetryAfterMs ?? TELEGRAM_MAX_INLINE_RETRY_AFTER_MS;
  }

  async call<M extends keyof ApiMethods>(
    method: M,
    payload: Opts<M>,
    signal?: AbortSignal,
  ): Promise<ReturnType<ApiMethods[M]>> {
    const options = (signal ? { signal } : {}) as unknown as CallApiOptions;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.telegram.callApi(method, payload, options);
      } catch (err) {
        const f = apiFailure(err);
        const waitMs = (f?.retryAfterSec ?? 1) * 1000;
        if (f?.code !== 429 || attempt >= TELEGRAM_RATE_LIMIT_RETRIES || waitMs > this.maxInlineRetryAfterMs) throw err;
        this.logger.warn({ method, retryAfterMs: waitMs, attempt: attempt + 1 }, 'telegram rate limit: waiting before retry');
        await this.sleep(waitMs, signal);
        if (signal?.aborted) throw err;
      }
    }
  }
}
