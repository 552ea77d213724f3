/**
 * Is a group message addressed to the bot? Reads Telegram's entities (offsets are UTF-16, like JS strings),
 * strips the bot's own mentions and turns `/cmd@ourbot` into `/cmd` so the gateway sees plain commands.
 */
import type { TgEntity } from './wire.js';

export interface BotIdentity {
  id: number;
  username: string;
}

export interface Addressing {
  /** The text with the bot's mentions removed and its command suffix dropped. */
  text: string;
  /** `@ourbot`, or a text_mention of the bot's user. */
  mentioned: boolean;
  /** A leading `/command`: ours (plain or `@ourbot`), addressed to another bot, or none. */
  command: 'ours' | 'other-bot' | null;
}

/** Leading punctuation people put after an opening mention: "@bot, hi" / "@bot: hi". */
const LEADING_SEPARATORS_RE = /^[\s,:;]+/;

export function readAddressing(text: string, entities: readonly TgEntity[], bot: BotIdentity): Addressing {
  const handle = `@${bot.username}`.toLowerCase();
  let out = text;
  let mentioned = false;
  let command: Addressing['command'] = null;

  // Edit from the end so earlier offsets stay valid.
  const sorted = [...entities].sort((a, b) => b.offset - a.offset);
  for (const e of sorted) {
    const slice = text.slice(e.offset, e.offset + e.length);
    if (e.type === 'mention' && slice.toLowerCase() === handle) {
      mentioned = true;
      out = removeSpan(out, e.offset, e.length);
    } else if (e.type === 'text_mention' && e.user?.id === bot.id) {
      mentioned = true;
      out = removeSpan(out, e.offset, e.length);
    } else if (e.type === 'bot_command' && e.offset === 0) {
      const at = slice.indexOf('@');
      if (at === -1) command = 'ours';
      else if (slice.slice(at).toLowerCase() === handle) {
        command = 'ours';
        out = out.slice(0, at) + out.slice(e.length);
      } else command = 'other-bot';
    }
  }
  return { text: out.trim(), mentioned, command };
}

function removeSpan(s: string, offset: number, length: number): string {
  const before = s.slice(0, offset);
  let after = s.slice(offset + length);
  if (before.trim() === '') return before + after.replace(LEADING_SEPARATORS_RE, '');
  // "hey @bot what" -> "hey what": drop one of the two spaces that surrounded the mention.
  if (/\s$/.test(before) && /^ /.test(after)) after = after.slice(1);
  return before + after;
}
