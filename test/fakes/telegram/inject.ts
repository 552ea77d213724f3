/**
 * Building user messages the way Telegram delivers them: entities detected server-side, forum topics with
 * `is_topic_message` (and `reply_to_message` pointing at the topic's creation message when the user replied to
 * nothing), reply chains in plain supergroups carrying a `message_thread_id`, files as file_id references.
 */
import { detectEntities, type ChatType, type FakeChat, type Json, type JsonObject, type World } from './state.js';
import type { Entity } from './html.js';

export interface InjectMessageOptions {
  chatId: number;
  /** Default: private when chatId > 0, supergroup otherwise. */
  chatType?: ChatType;
  userId: number;
  text?: string;
  caption?: string;
  /** Forum topic to post in (created on first use); makes the chat a forum. */
  threadId?: number;
  /** Mark the chat as a forum even without a topic (messages then land in General). */
  isForum?: boolean;
  /** message_id in the same chat this message replies to. */
  replyTo?: number;
  /** The part of the replied-to message the user quoted. */
  quote?: string;
  /** Overrides the detected entities. */
  entities?: Entity[];
  userName?: string;
  firstName?: string;
  isBot?: boolean;
  chatTitle?: string;
  /** A photo: Telegram stores a JPEG in several sizes; `content` is the largest (default: a JPEG of `bytes` bytes). */
  photo?: boolean | { bytes?: number; content?: Buffer };
  document?: { fileName: string; mimeType: string; content?: string | Buffer };
  voice?: { duration?: number; content?: string | Buffer };
  /** Albums: every message of one carries the same media_group_id. */
  mediaGroupId?: string;
  /** Unix seconds; default now. */
  date?: number;
}

export function userOf(o: InjectMessageOptions): JsonObject {
  return {
    id: o.userId,
    is_bot: o.isBot ?? false,
    first_name: o.firstName ?? `User${o.userId}`,
    ...(o.userName !== undefined && { username: o.userName }),
    language_code: 'en',
  };
}

/** Creates a forum topic: a service message whose id becomes the topic id. */
export function createTopic(world: World, chat: FakeChat, name: string, creator: JsonObject, id?: number): number {
  world.makeForum(chat);
  const topicId = id ?? world.allocateMessageId(chat);
  if (id !== undefined && id >= chat.nextMessageId) chat.nextMessageId = id + 1;
  chat.topics.add(topicId);
  chat.messages.set(topicId, {
    message_id: topicId,
    from: creator,
    chat: world.chatJson(chat),
    date: Math.floor(Date.now() / 1000),
    message_thread_id: topicId,
    forum_topic_created: { name, icon_color: 7322096 },
    is_topic_message: true,
  });
  return topicId;
}

export function buildUserMessage(world: World, o: InjectMessageOptions): JsonObject {
  const type = o.chatType ?? (o.chatId > 0 ? 'private' : 'supergroup');
  const chat = world.ensureChat(o.chatId, type, { title: o.chatTitle, isForum: o.isForum });
  if (o.isForum || o.threadId !== undefined) world.makeForum(chat);
  const from = userOf(o);
  if (o.threadId !== undefined && o.threadId !== 1 && !chat.topics.has(o.threadId)) {
    createTopic(world, chat, `Topic ${o.threadId}`, from, o.threadId);
  }
  const replied = o.replyTo === undefined ? undefined : chat.messages.get(o.replyTo);
  if (o.replyTo !== undefined && !replied) throw new Error(`injectMessage: no message ${o.replyTo} in chat ${o.chatId}`);

  const msg: JsonObject = {
    message_id: world.allocateMessageId(chat),
    from,
    chat: world.chatJson(chat, { id: o.userId, first_name: String(from.first_name), username: o.userName }),
    date: o.date ?? Math.floor(Date.now() / 1000),
  };
  if (chat.isForum && o.threadId !== undefined && o.threadId !== 1) {
    msg.message_thread_id = o.threadId;
    msg.is_topic_message = true;
    msg.reply_to_message = world.replyView(replied ?? chat.messages.get(o.threadId)!);
  } else if (replied) {
    msg.reply_to_message = world.replyView(replied);
    // In plain supergroups a reply chain gets a thread id (its root), with no is_topic_message.
    if (chat.type === 'supergroup' && !chat.isForum) {
      msg.message_thread_id = (replied.message_thread_id as number | undefined) ?? (replied.message_id as number);
    }
  }
  if (o.quote !== undefined) msg.quote = { text: o.quote, position: 0 };

  if (o.text !== undefined) {
    msg.text = o.text;
    const entities = o.entities ?? detectEntities(o.text);
    if (entities.length > 0) msg.entities = entities as unknown as Json;
  }
  if (o.caption !== undefined) {
    msg.caption = o.caption;
    const entities = o.entities ?? detectEntities(o.caption);
    if (entities.length > 0) msg.caption_entities = entities as unknown as Json;
  }
  if (o.photo) {
    const given = typeof o.photo === 'object' ? o.photo.content : undefined;
    const bytes = given?.length ?? (typeof o.photo === 'object' ? (o.photo.bytes ?? 2048) : 2048);
    const small = world.addFile(jpegOf(Math.ceil(bytes / 8)), 'photo', 'jpg');
    const large = world.addFile(given ?? jpegOf(bytes), 'photo', 'jpg');
    msg.photo = [
      { file_id: small.fileId, file_unique_id: small.fileUniqueId, file_size: small.content.length, width: 90, height: 90 },
      { file_id: large.fileId, file_unique_id: large.fileUniqueId, file_size: large.content.length, width: 1280, height: 1280 },
    ];
  }
  if (o.document) {
    const ext = o.document.fileName.split('.').pop() ?? 'bin';
    const f = world.addFile(Buffer.from(o.document.content ?? 'document'), 'document', ext);
    msg.document = {
      file_id: f.fileId,
      file_unique_id: f.fileUniqueId,
      file_name: o.document.fileName,
      mime_type: o.document.mimeType,
      file_size: f.content.length,
    };
  }
  if (o.voice) {
    const f = world.addFile(Buffer.from(o.voice.content ?? 'OggS'), 'voice', 'oga');
    msg.voice = {
      file_id: f.fileId,
      file_unique_id: f.fileUniqueId,
      duration: o.voice.duration ?? 3,
      mime_type: 'audio/ogg',
      file_size: f.content.length,
    };
  }
  if (o.mediaGroupId !== undefined) msg.media_group_id = o.mediaGroupId;
  chat.messages.set(msg.message_id as number, msg);
  return msg;
}

/** Bytes that start like a JPEG (SOI + APP0 "JFIF"), padded to `size`: what Telegram's photo sizes are. */
export function jpegOf(size: number): Buffer {
  const head = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00]);
  const out = Buffer.alloc(Math.max(size, head.length + 2));
  head.copy(out);
  out[out.length - 2] = 0xff;
  out[out.length - 1] = 0xd9;
  return out;
}
