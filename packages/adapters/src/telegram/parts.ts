/**
 * Which messages the bot takes are parts of one message, tagged (`InboundMessage.partOf`) so that the gateway's
 * worker answers them as one turn. Nothing is held back here: every part is handed over at once.
 *
 * Albums: Telegram sends each file of an album as its own message with the same media_group_id (normalize.ts tags
 * them). Split texts: a client cuts a text longer than 4096 characters into parts sent back to back. A plain text
 * long enough to have been cut (TELEGRAM_SPLIT_MIN_PART) may be a split's first part; the next message is its next
 * part when it is plain text from the same user in the same conversation, with the very next message id, dated
 * within TELEGRAM_SPLIT_MAX_GAP_SEC; a part too short to have been cut is the last one.
 *
 * In a group only one part carries the mention (an album's caption, a split text's first part): once a part was
 * taken, the others follow it through the mention check. Telegram delivers one chat's updates in order, one at a
 * time (to the webhook as to getUpdates), so a first part is always seen before the rest — by whichever ingress
 * process gets it, when what was taken is remembered where all of them look (PartsMemory).
 */
import type { InboundMessage, MessagePart } from '../types.js';
import { TELEGRAM_SPLIT_MAX_GAP_SEC } from './config.js';
import { LocalPartsMemory, type OpenSplit, type PartsMemory } from './parts-memory.js';
import type { TgMessage } from './wire.js';

export type { OpenSplit, PartsMemory } from './parts-memory.js';

/** What the split decision needs to know of a message. */
export interface TextCandidate {
  messageId: number;
  date: number;
  /** Length of the text as sent (UTF-16 code units, as Telegram counts its limit), mention included. */
  length: number;
  /** Plain text: no command, no file. */
  joinable: boolean;
}

/** Whether `next` is the next part of the split `open` belongs to. */
function continuesSplit(open: OpenSplit | undefined, next: TextCandidate): open is OpenSplit {
  return open !== undefined && next.joinable && next.messageId === open.messageId + 1 && next.date - open.date <= TELEGRAM_SPLIT_MAX_GAP_SEC;
}

/**
 * The part of a split text `next` is: the next part of `open`, the possible first part of a new split (a plain text
 * long enough to have been cut), or none.
 */
export function textPartOf(open: OpenSplit | undefined, next: TextCandidate, chatId: string, minPartLength: number): MessagePart | undefined {
  const last = next.length < minPartLength;
  if (continuesSplit(open, next)) return { id: open.id, kind: 'text', ...(last && { last: true }) };
  return next.joinable && !last ? { id: `${chatId}:${next.messageId}`, kind: 'text' } : undefined;
}

export class IncomingParts {
  constructor(
    private readonly minPartLength: number,
    private readonly memory: PartsMemory = new LocalPartsMemory(),
  ) {}

  /** Whether a message the bot was not addressed in is a later part of one it took (an album's, a split text's). */
  async follows(msg: InboundMessage, raw: TgMessage, joinable: boolean): Promise<boolean> {
    if (msg.partOf?.kind === 'album') return this.memory.hasAlbum(albumKey(msg, msg.partOf));
    return continuesSplit(await this.memory.openSplit(splitKey(msg)), candidate(raw, joinable));
  }

  /** The taken message as handed over, tagged when it is (or may start) a split text; remembered for the parts after it. */
  async take(msg: InboundMessage, raw: TgMessage, joinable: boolean): Promise<InboundMessage> {
    const key = splitKey(msg);
    // Whatever it is, the message before it is continued by nothing else.
    const open = await this.memory.takeSplit(key);
    if (msg.partOf?.kind === 'album') {
      await this.memory.rememberAlbum(albumKey(msg, msg.partOf));
      return msg;
    }
    const partOf = textPartOf(open, candidate(raw, joinable), msg.chatId, this.minPartLength);
    if (partOf === undefined) return msg;
    if (!partOf.last) await this.memory.rememberSplit(key, { id: partOf.id, messageId: raw.message_id, date: raw.date });
    return { ...msg, partOf };
  }
}

function candidate(raw: TgMessage, joinable: boolean): TextCandidate {
  return { messageId: raw.message_id, date: raw.date, length: raw.text?.length ?? 0, joinable };
}

const splitKey = (msg: InboundMessage): string => `${msg.conversationId}|${msg.userId}`;
const albumKey = (msg: InboundMessage, part: MessagePart): string => `${msg.conversationId}|${part.id}`;
