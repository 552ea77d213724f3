/**
 * Conversation ids for Slack: `slack:<channel>` (a DM as a whole) or `slack:<channel>:<thread_ts>` (a thread).
 * Slack channel ids (C…, D…, G…) and timestamps never contain a colon, so the id splits unambiguously.
 */
import type { ConversationCodec } from '../types.js';

export interface SlackConversation {
  channel: string;
  /** Parent message ts of the thread replies go to; absent for a DM's top level. */
  threadTs?: string;
}

const PREFIX = 'slack';
const CHANNEL_RE = /^[A-Z0-9][A-Z0-9_-]*$/i;
const TS_RE = /^\d+\.\d+$/;

/**
 * The id rules, exported so the ingress checks each event's ids by them at the edge (normalize.ts) and never
 * builds a conversation id it cannot encode. User and team ids follow the channel rule (U…, W…, T…).
 */
export function isSlackId(v: unknown): v is string {
  return typeof v === 'string' && CHANNEL_RE.test(v);
}

/** A message timestamp (`ts`, `thread_ts`): `1700000000.000100`. */
export function isSlackTs(v: unknown): v is string {
  return typeof v === 'string' && TS_RE.test(v);
}

function check(parts: SlackConversation, source: string): SlackConversation {
  if (!isSlackId(parts.channel)) throw new Error(`Slack conversation id ${JSON.stringify(source)}: bad channel id`);
  if (parts.threadTs !== undefined && !isSlackTs(parts.threadTs)) {
    throw new Error(`Slack conversation id ${JSON.stringify(source)}: thread_ts must look like 1700000000.000100`);
  }
  return parts;
}

export const slackCodec: ConversationCodec<SlackConversation> = {
  encode(parts) {
    const id = parts.threadTs === undefined ? `${PREFIX}:${parts.channel}` : `${PREFIX}:${parts.channel}:${parts.threadTs}`;
    check(parts, id);
    return id;
  },
  decode(id) {
    const segments = id.split(':');
    if (segments[0] !== PREFIX) throw new Error(`Not a Slack conversation id: ${JSON.stringify(id)}`);
    if (segments.length !== 2 && segments.length !== 3) {
      throw new Error(`Slack conversation id ${JSON.stringify(id)}: expected slack:<channel>[:<thread_ts>]`);
    }
    const parts: SlackConversation = segments.length === 3 ? { channel: segments[1], threadTs: segments[2] } : { channel: segments[1] };
    return check(parts, id);
  },
};
