/**
 * The one Web API client of a Slack bot: ingress (auth.test at start-up), egress (messages, edits, status,
 * reactions, uploads, look-ups for recover) and files (files.info) share it. Bolt's App cannot be handed a client
 * (it builds its own, and one per workspace): it is built with the same options, and makes no call of its own
 * here (auth.test is skipped by giving it the identity; the handlers use this client through the gateway).
 *
 * Rate limits are not waited out and nothing is retried inside the client: egress honours Retry-After itself
 * (bounded), delivery owns retries of network errors, and a failed download is reported (/retry tries again).
 */
import { ErrorCode, retryPolicies, WebClient, type RetryOptions, type WebClientOptions } from '@slack/web-api';
import pRetry from 'p-retry';
import type { Logger } from 'pino';
import { SLACK_DEFAULT_API_URL, SLACK_REQUEST_TIMEOUT_MS, type SlackWebClientTuning } from './config.js';
import { toSlackLogger } from './slack-logger.js';

export interface SlackClientOptions {
  /** `xoxb-…` bot token. */
  botToken: string;
  /** Web API base, default `https://slack.com/api/`. */
  apiUrl?: string;
  /** Absent: the Web API client's own console logger. */
  logger?: Logger;
  clientOptions?: SlackWebClientTuning;
}

/** The options of a bot's Web API client: a fresh object each time (Bolt writes its logger into the one it gets). */
export function slackClientOptions(opts: Omit<SlackClientOptions, 'botToken'>): WebClientOptions {
  return {
    slackApiUrl: opts.apiUrl ?? SLACK_DEFAULT_API_URL,
    ...(opts.logger && { logger: toSlackLogger(opts.logger) }),
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    timeout: SLACK_REQUEST_TIMEOUT_MS,
    ...opts.clientOptions,
  };
}

export function createSlackClient(opts: SlackClientOptions): WebClient {
  return new WebClient(opts.botToken, slackClientOptions(opts));
}

/**
 * auth.test at start-up. A failure to reach Slack is tried again as the Web API client's default policy would
 * (ten times in about thirty minutes, or the caller's `retryConfig`), so a gateway started during a network blip
 * still connects; an answer from Slack (a bad token) is final.
 */
export async function slackAuthTest(
  client: WebClient,
  logger: Logger,
  retryConfig: RetryOptions = retryPolicies.tenRetriesInAboutThirtyMinutes,
): ReturnType<WebClient['auth']['test']> {
  const unreachable = (error: unknown): boolean => (error as { code?: unknown }).code === ErrorCode.RequestError;
  return pRetry(() => client.auth.test(), {
    ...retryConfig,
    shouldRetry: ({ error }) => unreachable(error),
    onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
      if (unreachable(error) && retriesLeft > 0)
        logger.warn({ err: error.message, attempt: attemptNumber }, 'slack: auth.test could not reach Slack; trying again');
    },
  });
}
