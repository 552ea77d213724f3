/**
 * Buttons on Slack: Block Kit. A message with buttons carries its text in a `section` block and the buttons in an
 * `actions` block (`text` stays as the notification fallback); a press arrives as a `block_actions` payload whose
 * action's `value` is the button's data. Herald's buttons share one action_id prefix, so the ingress takes them all.
 */
import type { Button } from '../types.js';

export const SLACK_BUTTON_ACTION_PREFIX = 'herald_button_';
/** Block Kit: a section's text holds 3000 characters, a button's text 75, an actions block 25 elements. */
const SECTION_TEXT_MAX = 3000;
const BUTTON_TEXT_MAX = 75;
const MAX_BUTTONS = 25;

export type SlackBlock = Record<string, unknown>;

/** The blocks for a chunk with buttons under it; null when the chunk is too long for a section (sent as text only). */
export function blocksWithButtons(text: string, buttons: readonly Button[], mrkdwn: boolean): SlackBlock[] | null {
  if (text.length > SECTION_TEXT_MAX) return null;
  return [
    { type: 'section', text: { type: mrkdwn ? 'mrkdwn' : 'plain_text', text } },
    {
      type: 'actions',
      elements: buttons.slice(0, MAX_BUTTONS).map((b, i) => ({
        type: 'button',
        action_id: `${SLACK_BUTTON_ACTION_PREFIX}${i}`,
        text: { type: 'plain_text', text: b.label.length <= BUTTON_TEXT_MAX ? b.label : `${b.label.slice(0, BUTTON_TEXT_MAX - 1)}…`, emoji: true },
        value: b.data,
      })),
    },
  ];
}
