/**
 * Finding the chunks of a reply that an earlier attempt sent but never recorded (a worker that died between
 * Slack accepting a chunk and the gateway recording it). Every chunk sent with an idempotency key carries
 * `metadata: { event_type: 'herald_reply', event_payload: { key, chunk } }`; conversations.history and
 * conversations.replies return it with `include_all_metadata`, so the bot can read its own recent chunks back.
 */
import type { MessageMetadata } from '@slack/web-api';
import { SLACK_RECOVER_LOOKBACK_MS, SLACK_REPLY_METADATA_EVENT } from './config.js';

export function replyMetadata(key: string, chunk: number): MessageMetadata {
  return { event_type: SLACK_REPLY_METADATA_EVENT, event_payload: { key, chunk } };
}

/** A message as conversations.history / conversations.replies return it, as far as the look-up reads it. */
export interface HistoryMessage {
  ts?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

/** Oldest message time the look-up asks for, in Slack's `ts` form. */
export function lookbackOldest(now = Date.now()): string {
  return ((now - SLACK_RECOVER_LOOKBACK_MS) / 1000).toFixed(6);
}

/**
 * Adds to `found` (chunk index → ts) the messages that are chunks of the reply `key` with an index in `wanted`.
 * Metadata can only be attached by an app, and the key is unique to the reply, so the key alone identifies our
 * chunks. A chunk seen twice (an earlier duplicate) keeps its first message.
 */
export function collectChunks(messages: readonly HistoryMessage[], key: string, wanted: ReadonlySet<number>, found: Map<number, string>): void {
  for (const m of messages) {
    if (m.ts === undefined || m.metadata?.event_type !== SLACK_REPLY_METADATA_EVENT) continue;
    const payload = m.metadata.event_payload;
    const chunk = payload?.chunk;
    if (payload?.key !== key || typeof chunk !== 'number' || !wanted.has(chunk)) continue;
    const seen = found.get(chunk);
    if (seen === undefined || tsBefore(m.ts, seen)) found.set(chunk, m.ts);
  }
}

/** Slack ts values are `<seconds>.<6 digits>`: compared as numbers they lose the last digits, so compare parts. */
function tsBefore(a: string, b: string): boolean {
  const [aSec, aFrac = ''] = a.split('.');
  const [bSec, bFrac = ''] = b.split('.');
  if (aSec !== bSec) return Number(aSec) < Number(bSec);
  return aFrac.padEnd(6, '0') < bFrac.padEnd(6, '0');
}
