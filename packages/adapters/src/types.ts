/**
 * The one contract every platform implements (see STYLE.md, after vercel/chat).
 *
 * An adapter has two halves:
 *  - ingress: holds the platform connection (polling, webhook, gateway WebSocket, Socket Mode, Events HTTP),
 *    turns platform events into `InboundMessage`s and hands them to the gateway;
 *  - egress: send / edit / typing / react through the platform's REST API only, so any worker process can reply.
 * Locks, queues, dedupe across processes and sessions belong to the gateway, not here.
 */

export type Platform = 'telegram' | 'discord' | 'slack';
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
   * One post the platform delivers as several messages (a Telegram album: one message per picture, all with the
   * same media_group_id). Every part is handed over at once; the worker answers the parts as one turn.
   */
  albumId?: string;
}

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
   * Where the platform's convention is to show a turn's progress on the user's message (Slack: 👀 while working,
   * ✅ once answered), the two emoji; absent elsewhere. The gateway's turn runner applies them.
   */
  readonly turnReactions?: TurnReactions;
}

export interface TurnReactions {
  working: string;
  done: string;
}

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
