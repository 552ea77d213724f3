/**
 * For end-to-end tests against the Slack stand-in: the gateway environment for either transport, what the bot
 * posted where, and the reactions on a user's message.
 */
import type { FakeLLM } from '../fakes/llm/index.js';
import type { SlackFake } from '../fakes/slack/index.js';
import type { Cluster } from './cluster.js';
import { waitFor } from './ports.js';

export type SlackTransportKind = 'socket' | 'http';

/** The log line the Slack ingress writes once it takes events (Socket Mode connected, or the route is live). */
const INGRESS_STARTED_MSG = 'slack: ingress started';

/**
 * Gateway environment for the Slack stand-in (Socket Mode with the app token, or Events over HTTP with the
 * signing secret) and the OpenAI stand-in, everyone allowed.
 */
export function slackEnv(slack: SlackFake, llm: FakeLLM, transport: SlackTransportKind, extra: Record<string, string> = {}): Record<string, string> {
  const credentials: Record<string, string> = transport === 'socket' ? { SLACK_APP_TOKEN: slack.appToken } : { SLACK_SIGNING_SECRET: slack.signingSecret };
  return {
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_API_URL: slack.apiUrl,
    ...credentials,
    HERALD_MODEL: 'openai:gpt-4.1-mini',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.url,
    GATEWAY_ALLOW_ALL_USERS: 'true',
    ...extra,
  };
}

/** Waits until the gateway's Slack ingress has started; for HTTP, points the stand-in at `/slack/events`. */
export async function waitForSlackIngress(slack: SlackFake, cluster: Cluster, transport: SlackTransportKind): Promise<void> {
  await waitFor(() => cluster.ingress.logs().some((l) => l.msg === INGRESS_STARTED_MSG), {
    timeoutMs: 20_000,
    what: `the Slack ingress to start:\n${cluster.ingress.output.join('\n')}`,
  });
  if (transport === 'http') slack.setEventsUrl(`${cluster.ingress.url}/slack/events`);
}

/**
 * Texts the bot posted (chat.postMessage) in a channel: at its top level when `threadTs` is undefined (a DM),
 * else in that thread.
 */
export function slackRepliesIn(slack: SlackFake, channel: string, threadTs?: string): string[] {
  return slack.sent.filter((s) => s.channel === channel && s.threadTs === threadTs).map((s) => s.text);
}

/** Every text the bot posted in a channel, thread or not. */
export function allSlackRepliesIn(slack: SlackFake, channel: string): string[] {
  return slack.sent.filter((s) => s.channel === channel).map((s) => s.text);
}

/** The bot's reactions now on a message, as Slack emoji names, sorted. */
export function reactionsOn(slack: SlackFake, channel: string, ts: string): string[] {
  const m = slack.message(channel, ts);
  return m === undefined ? [] : [...m.reactions.keys()].sort();
}

/** The reaction calls that succeeded on a message, in order: `+eyes`, `-eyes`, `+white_check_mark`. */
export function reactionHistory(slack: SlackFake, channel: string, ts: string): string[] {
  return slack.reactions.filter((r) => r.channel === channel && r.ts === ts).map((r) => `${r.action === 'add' ? '+' : '-'}${r.name}`);
}
