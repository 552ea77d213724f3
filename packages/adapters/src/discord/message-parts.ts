/**
 * The pieces of a Discord message body that egress builds: allowed mentions, button rows, nonces, reaction emoji,
 * and the conversation id decoded (a foreign one is the caller's mistake).
 */
import { createHash } from 'node:crypto';
import { AllowedMentionsTypes, type APIAllowedMentions } from 'discord.js';
import { BadRequestError } from '../errors.js';
import type { Button } from '../types.js';
import { discordCodec, type DiscordConversation } from './codec.js';
import { DISCORD_NONCE_MAX_LENGTH } from './config.js';

/** Users may be pinged (the agent addressing someone by mention); @everyone, @here and roles never. */
export function allowedMentions(): APIAllowedMentions {
  return { parse: [AllowedMentionsTypes.User], replied_user: true };
}

/** Discord: 5 buttons per action row, 5 rows per message, labels up to 80 characters. */
const BUTTONS_PER_ROW = 5;
const MAX_ROWS = 5;
const BUTTON_LABEL_MAX = 80;
const BUTTON_STYLE_SECONDARY = 2;

/** Action rows of buttons whose `custom_id` is the button's data. */
export function discordComponents(buttons: readonly Button[]): Array<{ type: 1; components: Array<Record<string, unknown>> }> {
  const rows: Array<{ type: 1; components: Array<Record<string, unknown>> }> = [];
  for (let i = 0; i < buttons.length && rows.length < MAX_ROWS; i += BUTTONS_PER_ROW) {
    rows.push({
      type: 1,
      components: buttons.slice(i, i + BUTTONS_PER_ROW).map((b) => ({
        type: 2,
        style: BUTTON_STYLE_SECONDARY,
        label: b.label.length <= BUTTON_LABEL_MAX ? b.label : `${b.label.slice(0, BUTTON_LABEL_MAX - 1)}…`,
        custom_id: b.data,
      })),
    });
  }
  return rows;
}

/** A custom emoji as written in a message, `<:name:id>` or `<a:name:id>`; the reaction route wants `name:id`. */
const CUSTOM_EMOJI_RE = /^<a?:(\w+):(\d+)>$/;

/** An emoji as the reaction route wants it, URL-encoded. */
export function reactionEmoji(emoji: string): string {
  const custom = CUSTOM_EMOJI_RE.exec(emoji.trim());
  return encodeURIComponent(custom ? `${custom[1]}:${custom[2]}` : emoji.trim());
}

/**
 * The nonce of one chunk of one reply: the same key and index always give the same nonce, so a resend after a
 * crash is answered with the message the first attempt created. 25 base64url characters of SHA-256 (150 bits).
 */
export function discordNonce(idempotencyKey: string, chunkIndex: number): string {
  return createHash('sha256').update(`${idempotencyKey}:${chunkIndex}`).digest('base64url').slice(0, DISCORD_NONCE_MAX_LENGTH);
}

/** A conversation id that is not Discord's is the caller's mistake: BadRequestError, never retried. */
export function decodeConversation(conversationId: string): DiscordConversation {
  try {
    return discordCodec.decode(conversationId);
  } catch (err) {
    throw new BadRequestError(err instanceof Error ? err.message : String(err), 'discord', { cause: err });
  }
}
