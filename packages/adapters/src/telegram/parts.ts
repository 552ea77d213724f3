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
import { RecentIds } from '../shared/recent-ids.js';
import { TELEGRAM_SPLIT_MAX_GAP_SEC } from './config.js';
import type { TgMessage } from './wire.js';

/** Albums and open splits remembered at once (in one process); far more than can be arriving at the same time. */
const PARTS_REMEMBERED = 1_000;

/** A taken text that a next part may still follow. */
export interface OpenSplit {
  id: string;
  messageId: number;
  /** Unix seconds, as Telegram dates messages. */
  date: number;
}

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
export function continuesSplit(open: OpenSplit | undefined, next: TextCandidate): open is OpenSplit {
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

/**
 * What ingress remembers of the parts it took: the albums, and the split texts a next message may continue. In this
 * process by default; the gateway keeps it in Redis, so that parts reaching different ingress processes (webhooks
 * behind a balancer) are still seen as one message. Keys are `<conversation>|<album id>` and `<conversation>|<user>`.
 */
export interface PartsMemory {
  /** Remembers that a part of this album was taken. */
  rememberAlbum(key: string): Promise<void>;
  /** Whether a part of this album was taken. */
  hasAlbum(key: string): Promise<boolean>;
  /** The split a next message of this user here may continue (left as it is). */
  openSplit(key: string): Promise<OpenSplit | undefined>;
  /** The same, forgotten in the same step: whatever the next message is, nothing else continues that split. */
  takeSplit(key: string): Promise<OpenSplit | undefined>;
  rememberSplit(key: string, split: OpenSplit): Promise<void>;
}

/** PartsMemory in this process's memory: enough for one ingress process (polling, or a single webhook). */
export class LocalPartsMemory implements PartsMemory {
  private readonly albums = new RecentIds<string>(PARTS_REMEMBERED);
  /** Insertion order is age, so the first key is the oldest. */
  private readonly open = new Map<string, OpenSplit>();

  async rememberAlbum(key: string): Promise<void> {
    this.albums.add(key);
  }

  async hasAlbum(key: string): Promise<boolean> {
    return this.albums.has(key);
  }

  async openSplit(key: string): Promise<OpenSplit | undefined> {
    return this.open.get(key);
  }

  async takeSplit(key: string): Promise<OpenSplit | undefined> {
    const open = this.open.get(key);
    this.open.delete(key);
    return open;
  }

  async rememberSplit(key: string, split: OpenSplit): Promise<void> {
    this.open.set(key, split);
    if (this.open.size > PARTS_REMEMBERED) {
      const oldest = this.open.keys().next();
      if (!oldest.done) this.open.delete(oldest.value);
    }
  }
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

/** Runs steps one at a time per key, in the order they were given: each starts once the one before it settled. */
export class InOrder {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, step: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(step);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}

function candidate(raw: TgMessage, joinable: boolean): TextCandidate {
  return { messageId: raw.message_id, date: raw.date, length: raw.text?.length ?? 0, joinable };
}

const splitKey = (msg: InboundMessage): string => `${msg.conversationId}|${msg.userId}`;
const albumKey = (msg: InboundMessage, part: MessagePart): string => `${msg.conversationId}|${part.id}`;
