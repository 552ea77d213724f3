/**
 * Slack's App Home tab: when a user opens it (`app_home_opened`, tab `home`), the gateway answers `/status` for the
 * user's DM conversation, and the answer is published as the tab's view (views.publish), so the tab shows what the
 * conversation with Herald is doing.
 */
import type { InboundMessage } from '../types.js';
import { isSlackId, slackCodec } from './codec.js';
import { stringAt } from '../shared/wire-values.js';

/** Slack: a home view holds up to 100 blocks; a section's text 3000 characters. */
const SECTION_TEXT_MAX = 3000;

/** Null for anything but the Home tab opened by a user with a DM channel. */
export function homeOpenedToMessage(event: unknown, now = Date.now()): InboundMessage | null {
  if (typeof event !== 'object' || event === null) return null;
  const e = event as Record<string, unknown>;
  const user = stringAt(e, 'user');
  const channel = stringAt(e, 'channel');
  if (e.tab !== 'home' || !isSlackId(user) || !isSlackId(channel)) return null;
  const eventTs = stringAt(e, 'event_ts') ?? String(now / 1000);
  return {
    platform: 'slack',
    messageId: `${channel}:home:${eventTs}`,
    conversationId: slackCodec.encode({ channel }),
    chatType: 'dm',
    chatId: channel,
    userId: user,
    text: '/status',
    attachments: [],
    platformMessageId: eventTs,
    sentAt: now,
    interaction: { kind: 'home', id: eventTs, ephemeral: true },
  };
}

/** The tab's view: a header and the status text. */
export function homeView(text: string): Record<string, unknown> {
  const body = text.length <= SECTION_TEXT_MAX ? text : `${text.slice(0, SECTION_TEXT_MAX - 1)}…`;
  return {
    type: 'home',
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Herald' } },
      { type: 'section', text: { type: 'mrkdwn', text: body } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: 'Message me in the Messages tab; `/herald help` lists the commands.' }] },
    ],
  };
}
