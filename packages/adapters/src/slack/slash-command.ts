/**
 * Slack's slash command `/herald <sub> [args]` → an InboundMessage whose text is the chat command `/<sub> [args]`
 * (bare `/herald` → `/help`), so the gateway's one command table handles Slack like every other platform.
 *
 * Slash commands carry no message ts: the trigger id (unique per invocation) stands in as the message id. The
 * answer goes to the channel the command was typed in (a DM's top level, or a channel).
 */
import type { InboundMessage } from '../types.js';
import { isSlackId, slackCodec } from './codec.js';
import { stringAt } from '../shared/wire-values.js';

/** The one slash command Herald declares in the Slack app manifest. */
export const SLACK_SLASH_COMMAND = '/herald';
/**
 * With one slash command per command (SLACK_SLASH_COMMANDS=each), each is `/herald-<name>`: Slack's own commands
 * (/status, /remind, …) cannot be taken over by an app, and the prefix keeps Herald's apart from other apps'.
 */
export const SLACK_PER_COMMAND_PREFIX = '/herald-';

export function slashCommandText(text: string): string {
  const sub = text.trim().replace(/^\/+/, '');
  return sub === '' ? '/help' : `/${sub}`;
}

/**
 * Null when the payload lacks what a message needs (user, channel, trigger). `sub`: the command a per-command slash
 * command stands for (`/herald-title Trip` → `/title Trip`).
 */
export function slashCommandToMessage(payload: unknown, now = Date.now(), sub?: string): InboundMessage | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const body = payload as Record<string, unknown>;
  const channel = stringAt(body, 'channel_id');
  const user = stringAt(body, 'user_id');
  const trigger = stringAt(body, 'trigger_id');
  // Ids the codec cannot take are no real Slack's: dropped like missing ones.
  if (!isSlackId(channel) || !isSlackId(user) || trigger === undefined) return null;
  const message: InboundMessage = {
    platform: 'slack',
    messageId: `${channel}:cmd:${trigger}`,
    conversationId: slackCodec.encode({ channel }),
    // DM channel ids start with D; anything else is a channel, where sessions are per user.
    chatType: channel.startsWith('D') ? 'dm' : 'channel',
    chatId: channel,
    userId: user,
    text: slashCommandText(`${sub ?? ''} ${typeof body.text === 'string' ? body.text : ''}`),
    attachments: [],
    platformMessageId: trigger,
    sentAt: now,
  };
  const name = stringAt(body, 'user_name');
  if (name !== undefined) message.userName = name;
  return message;
}
