/**
 * A Block Kit button press (`block_actions`) → an InboundMessage with `press.data` (the button's value) and no
 * text, in the conversation of the message the button is under (its thread, if it is in one). Slack's
 * `action_ts` makes it unique. The presser alone sees any note about it (chat.postEphemeral).
 */
import type { InboundMessage } from '../types.js';
import { isSlackId, isSlackTs, slackCodec } from './codec.js';
import { isRecord, type Json, stringAt } from '../shared/wire-values.js';

const record = (v: unknown): Json | undefined => (isRecord(v) ? v : undefined);

/** Null when the payload lacks what a press needs (user, channel, the message, the button's value). */
export function pressToMessage(body: unknown, action: unknown, now = Date.now()): InboundMessage | null {
  const payload = record(body);
  const act = record(action);
  const user = record(payload?.user);
  const container = record(payload?.container);
  const message = record(payload?.message);
  const userId = stringAt(user, 'id');
  const channel = stringAt(record(payload?.channel), 'id') ?? stringAt(container, 'channel_id');
  const messageTs = stringAt(container, 'message_ts') ?? stringAt(message, 'ts');
  const value = stringAt(act, 'value');
  const actionTs = stringAt(act, 'action_ts') ?? String(now / 1000);
  const threadTs = stringAt(message, 'thread_ts') ?? stringAt(container, 'thread_ts');
  // Ids the codec cannot take are no real Slack's: dropped like missing ones.
  if (!isSlackId(userId) || !isSlackId(channel) || messageTs === undefined || value === undefined) return null;
  if (threadTs !== undefined && !isSlackTs(threadTs)) return null;
  const inThread = threadTs !== undefined;
  const msg: InboundMessage = {
    platform: 'slack',
    messageId: `${channel}:press:${actionTs}`,
    conversationId: slackCodec.encode(inThread ? { channel, threadTs } : { channel }),
    chatType: channel.startsWith('D') ? 'dm' : inThread ? 'thread' : 'channel',
    chatId: channel,
    ...(inThread && { threadId: threadTs }),
    userId,
    text: '',
    attachments: [],
    platformMessageId: messageTs,
    sentAt: now,
    interaction: { kind: 'press', id: actionTs, ephemeral: true },
    press: { data: value },
  };
  const name = stringAt(user, 'username') ?? stringAt(user, 'name');
  if (name !== undefined) msg.userName = name;
  return msg;
}
