/**
 * The stand-in's world: the bot, chats (private, group, supergroup, forum), their messages, forum topics, files
 * and the queue of updates waiting to be fetched. Message and update JSON follow the Bot API object shapes.
 * Independent of telegraf on purpose: the fake speaks the wire format, it does not mirror the client under test.
 */
import type { Entity } from './html.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };
export type JsonObject = { [key: string]: Json | undefined };

export type ChatType = 'private' | 'group' | 'supergroup';

export interface FakeChat {
  id: number;
  type: ChatType;
  title?: string;
  isForum: boolean;
  /** Topic ids that exist (General, id 1, is implicit in every forum). */
  topics: Set<number>;
  /** Message ids are per chat in Telegram. */
  nextMessageId: number;
  messages: Map<number, JsonObject>;
  /** When false, every reaction is REACTION_INVALID (the chat disabled them). */
  reactionsEnabled: boolean;
}

export interface FakeFile {
  fileId: string;
  fileUniqueId: string;
  filePath: string;
  content: Buffer;
}

export interface StoredUpdate {
  update_id: number;
  update: JsonObject;
}

/** First update id handed out; real ones are large and arbitrary. */
const FIRST_UPDATE_ID = 500_000_000;

export class World {
  readonly chats = new Map<number, FakeChat>();
  readonly files = new Map<string, FakeFile>();
  /** Unconfirmed updates, oldest first. */
  readonly updates: StoredUpdate[] = [];
  private nextUpdateId = FIRST_UPDATE_ID;
  private nextFile = 1;

  constructor(readonly bot: { id: number; username: string; first_name: string }) {}

  botUser(): JsonObject {
    return { id: this.bot.id, is_bot: true, first_name: this.bot.first_name, username: this.bot.username };
  }

  ensureChat(id: number, type: ChatType, opts: { title?: string; isForum?: boolean } = {}): FakeChat {
    let chat = this.chats.get(id);
    if (!chat) {
      chat = {
        id,
        type,
        title: opts.title ?? (type === 'private' ? undefined : `Chat ${id}`),
        isForum: opts.isForum ?? false,
        topics: new Set(),
        nextMessageId: opts.isForum ? 2 : 1,
        messages: new Map(),
        reactionsEnabled: true,
      };
      this.chats.set(id, chat);
    }
    return chat;
  }

  chatJson(chat: FakeChat, user?: { id: number; first_name: string; username?: string }): JsonObject {
    if (chat.type === 'private') {
      return { id: chat.id, type: 'private', first_name: user?.first_name ?? 'User', username: user?.username };
    }
    return { id: chat.id, type: chat.type, title: chat.title, ...(chat.isForum && { is_forum: true }) };
  }

  /** Parses `chat_id` (number or numeric string) to a known chat, or undefined. */
  findChat(chatId: unknown): FakeChat | undefined {
    const id = typeof chatId === 'number' ? chatId : typeof chatId === 'string' && /^-?\d+$/.test(chatId) ? Number(chatId) : NaN;
    return this.chats.get(id);
  }

  /** Forums reserve message id 1 for the General topic. */
  makeForum(chat: FakeChat): void {
    chat.isForum = true;
    if (chat.nextMessageId <= 1) chat.nextMessageId = 2;
  }

  allocateMessageId(chat: FakeChat): number {
    return chat.nextMessageId++;
  }

  /** A message as it appears inside `reply_to_message`: without its own reply. */
  replyView(msg: JsonObject): JsonObject {
    const { reply_to_message: _dropped, ...rest } = msg;
    return rest;
  }

  enqueue(update: JsonObject): StoredUpdate {
    const stored = { update_id: this.nextUpdateId++, update };
    stored.update.update_id = stored.update_id;
    this.updates.push(stored);
    return stored;
  }

  /** getUpdates `offset`: positive confirms everything below it; negative keeps only the last |offset|. */
  confirm(offset: number): void {
    if (offset > 0) {
      while (this.updates.length > 0 && this.updates[0].update_id < offset) this.updates.shift();
    } else if (offset < 0) {
      this.updates.splice(0, Math.max(0, this.updates.length + offset));
    }
  }

  addFile(content: Buffer, kind: string, ext: string): FakeFile {
    const n = this.nextFile++;
    const file: FakeFile = {
      fileId: `AgAC${kind}${n}x${Buffer.from(String(n)).toString('base64url')}`,
      fileUniqueId: `AQAD${n}`,
      filePath: `${kind}s/file_${n}.${ext}`,
      content,
    };
    this.files.set(file.fileId, file);
    return file;
  }
}

/** Telegram detects commands and @mentions server-side and sends them as entities; so does the fake. */
export function detectEntities(text: string): Entity[] {
  const out: Entity[] = [];
  for (const m of text.matchAll(/(^|\s)(\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?)(?![\w@])/g)) {
    out.push({ type: 'bot_command', offset: m.index + m[1].length, length: m[2].length });
  }
  for (const m of text.matchAll(/(^|[^\w@/])(@[A-Za-z0-9_]{5,32})(?!\w)/g)) {
    out.push({ type: 'mention', offset: m.index + m[1].length, length: m[2].length });
  }
  return out.sort((a, b) => a.offset - b.offset);
}
