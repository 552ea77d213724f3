/**
 * Events API payloads as Slack builds them, and the signed HTTP POST Slack makes to a Request URL.
 */
import { createHmac, randomBytes } from 'node:crypto';

export interface Workspace {
  teamId: string;
  appId: string;
  botUserId: string;
  verificationToken: string;
}

export type SlackEvent = Record<string, unknown> & { type: string };

/** `event_callback` envelope around one event, with `event_id`, `event_time` and `authorizations`. */
export function eventCallback(ws: Workspace, event: SlackEvent, eventId = newEventId()): Record<string, unknown> {
  return {
    token: ws.verificationToken,
    team_id: ws.teamId,
    context_team_id: ws.teamId,
    context_enterprise_id: null,
    api_app_id: ws.appId,
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: ws.teamId, user_id: ws.botUserId, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
    event_context: `4-${randomBytes(12).toString('hex')}`,
  };
}

export function urlVerification(ws: Workspace, challenge: string): Record<string, unknown> {
  return { token: ws.verificationToken, challenge, type: 'url_verification' };
}

export function newEventId(): string {
  return `Ev${randomBytes(5).toString('hex').toUpperCase()}`;
}

/** `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the signing secret. */
export function signSlackRequest(signingSecret: string, timestampSec: number, body: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestampSec}:${body}`).digest('hex')}`;
}

export interface PostEventOptions {
  signingSecret: string;
  /** Request timestamp in seconds; default now. Pass `now - 600` for a stale (10-minute-old) request. */
  timestampSec?: number;
  /** Sign with a wrong secret. */
  forgeSignature?: boolean;
  /** Adds X-Slack-Retry-Num / X-Slack-Retry-Reason as Slack does on redelivery. */
  retryNum?: number;
  retryReason?: string;
}

export interface PostResult {
  status: number;
  body: string;
  contentType: string | null;
}

export async function postSignedEvent(url: string, payload: unknown, opts: PostEventOptions): Promise<PostResult> {
  const body = JSON.stringify(payload);
  const ts = opts.timestampSec ?? Math.floor(Date.now() / 1000);
  const secret = opts.forgeSignature ? `${opts.signingSecret}-forged` : opts.signingSecret;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
    'x-slack-request-timestamp': String(ts),
    'x-slack-signature': signSlackRequest(secret, ts, body),
  };
  if (opts.retryNum !== undefined) {
    headers['x-slack-retry-num'] = String(opts.retryNum);
    headers['x-slack-retry-reason'] = opts.retryReason ?? 'http_timeout';
  }
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, body: await res.text(), contentType: res.headers.get('content-type') };
}

/** A slash command as Slack POSTs it to the Request URL: form-encoded fields, signed like events. */
export async function postSignedForm(url: string, fields: Record<string, string>, opts: PostEventOptions): Promise<PostResult> {
  const body = new URLSearchParams(fields).toString();
  const ts = opts.timestampSec ?? Math.floor(Date.now() / 1000);
  const secret = opts.forgeSignature ? `${opts.signingSecret}-forged` : opts.signingSecret;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': signSlackRequest(secret, ts, body),
    },
    body,
  });
  return { status: res.status, body: await res.text(), contentType: res.headers.get('content-type') };
}

/** Slack timestamps: seconds and a per-channel sequence, unique and increasing. */
export class TsClock {
  private lastSec = 0;
  private seq = 0;

  next(): string {
    const sec = Math.floor(Date.now() / 1000);
    if (sec > this.lastSec) {
      this.lastSec = sec;
      this.seq = 0;
    }
    this.seq += 1;
    return `${this.lastSec}.${String(this.seq).padStart(6, '0')}`;
  }
}
