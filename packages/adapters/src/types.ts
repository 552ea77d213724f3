/**
 * The one contract every platform implements (see STYLE.md, after vercel/chat).
 *
 * An adapter has two halves:
 *  - ingress: holds the platform connection (polling, webhook, gateway WebSocket, Socket Mode, Events HTTP),
 *    turns platform events into `InboundMessage`s and hands them to the gateway;
 *  - egress: send / edit / typing / react through the platform's REST API only, so any worker process can reply.
 * Locks, queues, dedupe across processes and sessions belong to the gateway, not here.
 */

export type Platform = 'telegram' | 'discord' | 'slack' | 'whatsapp' | 'matrix';
/**
 * Where a reply can go: a chat platform, or `api`, the gateway's OpenAI-compatible HTTP API (its requests arrive on
 * the gateway's own HTTP server and its egress lives there too, answering the waiting request through Redis).
 */
export type ReplyPlatform = Platform | 'api';
export type ChatType = 'dm' | 'group' | 'thread' | 'channel';

/** Attachments are descriptions a worker can fetch later, never buffers or class instances. */
export interface Attachment {
  kind: 'image' | 'audio' | 'video' | 'file';
  /**
   * What the platform's `PlatformFiles.download` fetches: Telegram `tg-file:<file_id>` (never the download URL,
   * which holds the bot token), the Discord CDN URL, Slack's `url_private_download`.
   */
  url: string;
  /** The platform's own id of the file: Telegram file_id, Discord attachment id, Slack file id. */
  fileId?: string;
  mimeType?: string;
  name?: string;
  size?: number;
  /** Telegram voice notes and Discord voice messages: a recorded voice message rather than an audio file. */
  voice?: boolean;
  /**
   * The platform sent only the file's id, not what it is or where (Slack, for files shared over Slack Connect and
   * some large files: `file_access: "check_file_info"`): `PlatformFiles.resolve` asks the platform for the rest.
   */
  unresolved?: boolean;
}

/** A downloaded file: its bytes and the type the platform served it as. */
export interface FileDownload {
  bytes: Buffer;
  mimeType?: string;
}

export interface DownloadOptions {
  /** Larger files fail with FileTooLargeError, before or while downloading (never buffered whole). */
  maxBytes: number;
  signal?: AbortSignal;
}

/**
 * Fetching the files users send, through the platform's own API (REST only, usable from any worker): Telegram
 * getFile + the file download route, Discord's CDN, Slack's url_private with the bot token. Failures are the
 * shared typed errors; their messages never carry a URL or a token.
 */
export interface PlatformFiles {
  readonly platform: Platform;
  download(attachment: Attachment, opts: DownloadOptions): Promise<FileDownload>;
  /** An `unresolved` attachment made whole (its type, name, size and download URL); platforms that never send one need not. */
  resolve?(attachment: Attachment, signal?: AbortSignal): Promise<Attachment>;
}

/**
 * A normalised inbound message. Plain JSON: it travels through Redis to whichever worker runs the turn.
 */
export interface InboundMessage {
  platform: Platform;
  /** Unique per platform (Telegram: `<chat_id>:<message_id>`, Discord: snowflake, Slack: `<channel>:<ts>`). */
  messageId: string;
  /** Encoded conversation id, platform-prefixed: `telegram:<chat>[:<topic>]`, `discord:<channel>[:<thread>]`, `slack:<channel>[:<thread_ts>]`. */
  conversationId: string;
  chatType: ChatType;
  chatId: string;
  /** Telegram forum topic, Discord thread channel id, Slack thread_ts. */
  threadId?: string;
  /** The space the chat belongs to: the Discord guild (server), the Slack team (workspace). */
  spaceId?: string;
  /**
   * The bot account that received it, when the gateway runs more than one per platform (set by the gateway, not
   * the adapter); absent: the platform's default account.
   */
  account?: string;
  userId: string;
  userName?: string;
  /** Text with the bot mention stripped; reply-to context already folded in where the platform needs it. */
  text: string;
  attachments: Attachment[];
  /** The platform's own id of this message (Telegram message_id, Discord snowflake, Slack ts): reply to it, react on it. */
  platformMessageId: string;
  /** The message this one replies to, when it does; the gateway adds `[Replying to: "…"]` if it is not in history. */
  quoted?: { platformMessageId: string; text: string; fromBot: boolean };
  /** ms since epoch when the platform says it was sent. */
  sentAt: number;
  /**
   * A part of one message the platform delivers as several (`MessagePart`). Every part is handed over at once,
   * tagged; the worker answers the parts as one turn.
   */
  partOf?: MessagePart;
  /**
   * Set when the message came from a platform-native interaction (a Discord application command) that must be
   * answered through the interaction rather than as a new chat message (egress `answerInteraction`).
   * Never enqueued: the router answers commands on the ingress and turns keep only `payloadFrom` fields.
   */
  interaction?: InteractionRef;
  /** A button press (then `text` is empty): the `data` of the button pressed, and `interaction` to answer it. */
  press?: { data: string };
}

/**
 * What ties the parts of one message together. Ingress never holds a part back waiting for the next one (a webhook
 * answer held back would hold back the next update too: Telegram sends a chat's next update only after the last
 * one was answered); the gateway's worker waits for the rest instead, in Redis.
 */
export interface MessagePart {
  /** The same for every part of one message; unique in its conversation. */
  id: string;
  /**
   * `album`: one post of several files (a Telegram album: one message per picture, all with the same media_group_id);
   * `text`: a text the client cut at the platform's length limit and sent as several messages (answered as one
   * text, the parts joined by a line break).
   */
  kind: 'album' | 'text';
  /** The platform can tell that no part follows this one (a text part too short to have been cut): the worker stops waiting. */
  last?: boolean;
}

/**
 * An interaction the platform wants answered through its own endpoints, exactly once:
 *  - Discord: the interaction token's webhook (valid 15 minutes), already acknowledged by the ingress (a command
 *    with a deferred response, a button press with a deferred update);
 *  - Telegram: a callback query (`id`), answered with answerCallbackQuery (a short note, or nothing);
 *  - Slack: a button press, acknowledged by the ingress; a note goes to the user alone (chat.postEphemeral).
 */
export interface InteractionRef {
  /** `home`: Slack's App Home tab was opened; the answer (the user's status) becomes the tab's view. */
  kind: 'command' | 'press' | 'home';
  id: string;
  /** Discord only. */
  applicationId?: string;
  token?: string;
  /** The deferred response is ephemeral (only the user who invoked it sees the answer). */
  ephemeral: boolean;
}

/** A button under a message; pressing it comes back as an InboundMessage with `press.data`. */
export interface Button {
  label: string;
  /** Opaque, at most BUTTON_DATA_MAX bytes (Telegram's callback_data limit). */
  data: string;
}

export const BUTTON_DATA_MAX = 64;

export interface SendOptions {
  /** Platform message id the first chunk replies to. */
  replyTo?: string;
  /** Send as plain text, no formatting conversion. */
  plain?: boolean;
  /** Leading chunks an earlier attempt already delivered (the count of its error's `sentIds`): not sent again. */
  skipChunks?: number;
  /**
   * A key unique to this reply (the gateway passes the turn id). Where the platform makes creates idempotent
   * (Discord: `nonce` + `enforce_nonce`), every chunk carries a key derived from it and its index, so sending the
   * same chunk again returns the first message instead of posting a second one.
   */
  idempotencyKey?: string;
  /**
   * An earlier attempt may have sent chunks it never recorded (a crash between sending and recording). Where the
   * platform lets the bot see its recent messages (Slack: they carry the key in their metadata), the egress looks
   * for those chunks first and returns their ids instead of sending them again. Needs `idempotencyKey`.
   */
  recover?: boolean;
  /**
   * Called as the platform accepts each chunk, in order, with its index in the whole reply (recorded as it goes).
   * With `recover`, a chunk found already sent is reported in its place too, so it gets recorded as well.
   * `last`: this was the reply's final chunk (a caller that records the whole reply next may skip recording it).
   */
  onChunkSent?: (index: number, messageId: string, last: boolean) => void | Promise<void>;
  /** Buttons under the last chunk (Telegram inline keyboard, Discord components, Slack Block Kit actions). */
  buttons?: Button[];
}

/**
 * A file the agent sends (send_file, a picture from its reply, a voice reply). The bytes travel with it: the
 * gateway keeps them in the turn's outbox until the platform has taken them.
 *  - `image`: shown as a picture where the platform can (Telegram sendPhoto), else an attachment;
 *  - `voice`: a spoken reply: a voice note where the platform has one (Telegram sendVoice, OGG/Opus), else an
 *    audio file;
 *  - `audio`: an audio file (Telegram sendAudio for MP3/M4A);
 *  - `file`: any other document.
 */
export interface OutboundFile {
  kind: 'image' | 'voice' | 'audio' | 'file';
  /** File name as the user sees it, with its extension. */
  name: string;
  mimeType: string;
  data: Buffer;
  /** Short text shown with the file; cut to the platform's caption limit. */
  caption?: string;
  /** Voice and audio: length in seconds, where the platform shows it. */
  durationSec?: number;
}

export interface SendFileOptions {
  /** Platform message id the file replies to, where the platform supports it. */
  replyTo?: string;
  /** As for `send`: where creates are idempotent (Discord), the upload carries a nonce derived from it. */
  idempotencyKey?: string;
}

/** Which audio a voice reply is made in: OGG/Opus plays as a Telegram voice note; MP3 as an audio file elsewhere. */
export type VoiceFormat = 'ogg_opus' | 'mp3';

export interface SentMessage {
  /** Platform ids of every chunk sent (or, with `recover`, found already sent), in order. */
  messageIds: string[];
  /** With `recover`: how many of `messageIds` an earlier attempt had sent already. */
  recovered?: number;
}

/**
 * What a platform can do against a reply sent twice after a crash between sending and recording:
 *  - `idempotent`: a repeated create with the same key returns the first message (Discord, for a few minutes);
 *  - `detectable`: the bot can find its earlier message and skip it (Slack, metadata on recent messages);
 *  - `none`: neither (Telegram): the gateway counts the possible duplicate instead.
 */
export type DuplicateSafety = 'idempotent' | 'detectable' | 'none';

/** What the gateway needs from a platform to reply: REST only, usable from any worker. */
export interface PlatformEgress {
  readonly platform: ReplyPlatform;
  /** Longest message the platform accepts (Telegram 4096, Discord 2000, Slack 39000). */
  readonly maxMessageLength: number;
  /** How a repeated send of the same reply is avoided on this platform (see `DuplicateSafety`). */
  readonly duplicateSafety: DuplicateSafety;
  /** Formats Markdown for the platform, chunks at its limit, falls back to plain text on a formatting rejection. */
  send(conversationId: string, markdown: string, opts?: SendOptions): Promise<SentMessage>;
  /**
   * Streams a preview of a reply that is still being written, without creating a message (Telegram's
   * sendMessageDraft, Bot API 9.3+, private chats only): the same `draftId` updates one animated draft, which
   * vanishes on its own; the final text is then sent as a normal message. Absent where the platform has none.
   */
  draft?(conversationId: string, draftId: number, markdown: string): Promise<void>;
  /** False where the platform cannot edit messages (WhatsApp): no streamed reply, no tool progress there. Absent: it can. */
  readonly editable?: boolean;
  /** Edits a message in place (streaming, tool progress). "Not modified" counts as success. */
  edit(conversationId: string, messageId: string, markdown: string): Promise<void>;
  /** Shows "typing…" once; the caller refreshes it (see `typingRefreshMs`). */
  typing(conversationId: string): Promise<void>;
  readonly typingRefreshMs: number;
  /**
   * Uploads one file into the conversation through the platform's own upload API (Telegram sendPhoto /
   * sendDocument / sendVoice / sendAudio, Discord message attachments, Slack files upload v2). Resolves with the
   * platform id of what carries it (message id; Slack: the file id). A file the platform refuses for its size
   * rejects with FileTooLargeError; rate limits the adapter does not wait out with RateLimitedError.
   */
  sendFile(conversationId: string, file: OutboundFile, opts?: SendFileOptions): Promise<string>;
  /** The audio format voice replies are made in for this platform. */
  readonly voiceFormat: VoiceFormat;
  /** Adds (or with `remove`, removes) a reaction; platforms without reactions resolve silently. */
  react(conversationId: string, messageId: string, emoji: string, remove?: boolean): Promise<void>;
  /**
   * The emoji this platform takes for status reactions on the user's message (Telegram allows only a fixed set),
   * used when the operator switches them on without naming their own. Absent: no reactions here.
   */
  readonly statusReactions?: StatusReactions;
  /**
   * Answers an interaction once. A command (Discord): the first chunk fills the deferred response, further chunks
   * follow up, `buttons` go under the last. A press: `markdown` is a short note only the presser sees (null: no
   * note, just close it where the platform needs that, as Telegram's answerCallbackQuery).
   */
  answerInteraction?(interaction: InteractionRef, markdown: string | null, where: InteractionTarget): Promise<void>;
}

/** Where an interaction happened: its conversation and the user who made it. */
export interface InteractionTarget {
  conversationId: string;
  userId: string;
  buttons?: Button[];
}

/** Status reactions on a user's message, by stage; '' leaves a stage out. */
export interface StatusReactions {
  /** Taken: the message is being worked on. */
  queued: string;
  /** The agent is running tools. */
  tools: string;
  /** Answered. */
  done: string;
  /** Answered with an error. */
  error: string;
}

/**
 * The status reactions of every platform that takes any emoji (Discord, Slack, WhatsApp, Matrix): 👀 while the turn
 * runs (⚙️ with tools), then ✅ (⚠️ on an error) — Slack's convention for a bot at work on a message. Telegram keeps
 * its own, as it allows only a fixed set. Slack reacts by name: slackEmojiName maps each of these.
 */
export const DEFAULT_STATUS_REACTIONS: StatusReactions = Object.freeze({ queued: '👀', tools: '⚙️', done: '✅', error: '⚠️' });

export type AdapterState = 'connected' | 'connecting' | 'disconnected' | 'disabled' | 'fatal';

export interface AdapterHealth {
  state: AdapterState;
  lastEventAt: number | null;
  error: string | null;
}

/** Called by ingress for every accepted message. Resolves once the gateway has durably taken it. */
export type InboundHandler = (msg: InboundMessage) => Promise<void>;

/** The connection half. Only ingress processes create these. */
export interface PlatformIngress {
  readonly platform: Platform;
  start(handler: InboundHandler): Promise<void>;
  stop(): Promise<void>;
  health(): AdapterHealth;
}

/** Encode/decode of conversation ids; every adapter exports one and runs the round-trip contract test. */
export interface ConversationCodec<T> {
  encode(parts: T): string;
  decode(id: string): T;
}
