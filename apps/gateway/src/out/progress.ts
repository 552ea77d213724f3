/**
 * What the user sees while the agent works: status reactions on the user's messages (showTurnProgress, at the end
 * of this file), and, rendered from the agent loop's event stream:
 *   - "typing…" once the turn has run HERALD_TYPING_DELAY_MS (a quicker answer needs none), kept alive until it ends;
 *   - tool progress (HERALD_TOOL_PROGRESS off | new | all), a "thinking…" line when a reasoning model thinks, and
 *     retry / fallback / compression notices, as short lines of one status message edited in place;
 *   - the reply itself, streamed (HERALD_STREAMING / <PLATFORM>_STREAMING, on by default): a draft in Telegram
 *     private chats, else one message edited in place; while the model writes a tool call the preview shows
 *     "🔧 name …". The final text is then an edit of that message (plus chunks if it is long), never a second copy.
 * Edits of one chat are spaced out (1 s; Telegram 1.1 s in private chats, 3 s in groups) so a fast model cannot
 * run into the platform's rate limits; whatever changed meanwhile goes out with the next edit.
 */
import { chunkMessage, type Platform, type PlatformEgress, type StatusReactions } from '@herald/adapters';
import type { AgentEvent } from '@herald/agent-core';
import type { ProgressSettings, ToolProgressMode } from '../support/config/progress.js';
import { DEFAULT_TYPING_DELAY_MS } from '../support/config/settings.js';
import type { Logger } from '../support/logger.js';
import { TurnAbort } from '../queue/worker.js';
import { deliver } from './send-reply.js';
import { ChatOutlet, LiveMessage } from './live-message.js';
import { canDraft, DraftPreview } from './draft-preview.js';
import { sendTyping } from './typing.js';

const EDIT_INTERVAL_MS = 1_000;
const TELEGRAM_PRIVATE_EDIT_INTERVAL_MS = 1_100;
const TELEGRAM_GROUP_EDIT_INTERVAL_MS = 3_000;
/** Shown at the end of a streamed text while more is coming. */
export const STREAM_CURSOR = ' ▌';
export const STOPPED_MARK = '\n\n⏹ stopped';
/** Room kept below the platform's limit when a streamed text is shown in one message (cursor, formatting). */
const STREAM_MARGIN = 64;
/** The status message keeps its latest lines only. */
const MAX_STATUS_LINES = 12;
const ARGS_PREVIEW_CHARS = 60;
const STATUS_ICONS = { retry: '⏳', fallback: '🔀', compression: '🗜' } as const;
/** Shown in the streamed preview while the model writes a tool call's arguments. */
export const TOOL_WRITING_ICON = '🔧';
/** The status line a reasoning model's thinking gets (its content is never shown here). */
export const THINKING_LINE = '💭 thinking…';

export function editIntervalMs(platform: string, chatType: string): number {
  if (platform !== 'telegram') return EDIT_INTERVAL_MS;
  return chatType === 'dm' ? TELEGRAM_PRIVATE_EDIT_INTERVAL_MS : TELEGRAM_GROUP_EDIT_INTERVAL_MS;
}

export interface LiveTurnOptions {
  egress: PlatformEgress;
  conversationId: string;
  platform: string;
  chatType: string;
  /** The user's message the first status/stream message answers. */
  replyTo?: string;
  /** Absent: typing only (no tool progress, no streaming). */
  settings?: ProgressSettings;
  signal: AbortSignal;
  /** Checked before the first message of the turn goes out: a superseded turn shows nothing. */
  canDeliver: () => Promise<boolean>;
  log: Logger;
  /** Delivery backoff base for the chunks after a streamed reply; tests shrink it. */
  deliveryBaseDelayMs?: number;
  /** Overrides the platform's edit spacing (tests). */
  editIntervalMs?: number;
  /** The message an earlier run of this turn streamed into: written into again instead of posting a new one. */
  streamMessageId?: string | null;
  /** Told the streamed reply's message id as soon as it exists (recorded so a re-run can reuse it). */
  onStreamCreated?: (id: string) => Promise<void>;
}

/** Everything shown for one turn. `onEvent` goes to runConversation; `finish` delivers the final text if streamed. */
export class LiveTurn {
  /** Made when something is first shown (a turn without streaming or tool lines never needs one). */
  private outlet: ChatOutlet | null = null;
  private readonly editInterval: number;
  private readonly toolMode: ToolProgressMode;
  private readonly statusLines: string[] = [];
  private readonly toolLines = new Map<string, number>();
  private lastToolName: string | null = null;
  /** The tool lines' message: made at the first line; null while there is none. */
  private statusMessage: LiveMessage | null = null;
  /** The status message may change no more (finished, closed or stopped): one made after that is frozen at once. */
  private statusEnded = false;
  /** The streamed reply: a draft where the platform has them (Telegram private chats), else a message edited in place. */
  private stream: LiveMessage | DraftPreview | null;
  private streamed = '';
  /** The next delta starts a new model response (after tools ran): what was streamed before is replaced. */
  private newResponse = false;
  /** A tool call the model is writing right now (its arguments are streaming in): the preview says so. */
  private writingTool: string | null = null;
  /** This model response already has its thinking line. */
  private thinkingShown = false;
  private typingTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly opts: LiveTurnOptions) {
    const platform = opts.platform as Platform;
    this.editInterval = opts.editIntervalMs ?? editIntervalMs(opts.platform, opts.chatType);
    // A platform without edits (WhatsApp) gets neither a status message nor a streamed reply: both are edited in place.
    const editable = opts.egress.editable !== false;
    this.toolMode = editable ? (opts.settings?.toolProgress[platform] ?? 'off') : 'off';
    this.stream = editable && (opts.settings?.streaming[platform] || opts.streamMessageId) ? this.newStream(!opts.streamMessageId) : null;
    if (this.stream && opts.streamMessageId) this.stream.id = opts.streamMessageId;
    opts.signal.addEventListener('abort', () => this.stopTimers(), { once: true });
  }

  /** The chat's sends and edits for this turn, in order (live-message.ts). */
  private get out(): ChatOutlet {
    this.outlet ??= new ChatOutlet(this.opts.egress, this.opts.conversationId, this.editInterval, this.opts.log);
    return this.outlet;
  }

  /** The status message, made when its first line comes (frozen at once when the display already ended). */
  private get status(): LiveMessage {
    if (!this.statusMessage) {
      const render = (): string => this.statusLines.slice(-MAX_STATUS_LINES).join('\n');
      this.statusMessage = new LiveMessage(this.out, render, 'status message', this.mayStart, this.opts.replyTo);
      if (this.statusEnded) this.statusMessage.freeze();
    }
    return this.statusMessage;
  }

  /** No more changes to the status message: one last edit with what changed (`flush`), or none. */
  private endStatus(flush: boolean): void {
    this.statusEnded = true;
    if (flush) this.statusMessage?.flushNow();
    else this.statusMessage?.freeze();
  }

  /** Whether the turn may show something new: not stopped, and still the conversation's current turn. */
  private readonly mayStart = async (): Promise<boolean> => !this.opts.signal.aborted && (await this.opts.canDeliver());

  /** The streamed reply: a draft where the platform has them (Telegram private chats), else a message edited in place. */
  private newStream(mayDraft: boolean): LiveMessage | DraftPreview {
    const { opts } = this;
    const streamMessage = (): LiveMessage =>
      new LiveMessage(this.out, () => this.streamView(), 'streamed reply', this.mayStart, opts.replyTo, opts.onStreamCreated);
    const draft = mayDraft && canDraft(opts.egress, opts.platform, opts.chatType);
    return draft ? new DraftPreview(this.out, () => this.streamView(), streamMessage, this.mayStart, opts.log) : streamMessage();
  }

  /**
   * Text the model wrote before its tool calls becomes a message of its own: the streamed message keeps it (and
   * the next response streams into a new one), or, without streaming or when it was only a draft, it is sent now.
   */
  private showInterim(text: string): void {
    if (!this.opts.settings?.interimMessages) return;
    if (this.stream) {
      const shown = this.stream.settle(text);
      this.stream = this.newStream(true);
      this.streamed = '';
      if (shown) return;
    }
    const { egress, conversationId, deliveryBaseDelayMs } = this.opts;
    void this.out.run('sending an interim message', async () => {
      if (await this.mayStart()) await deliver(egress, conversationId, text, { baseDelayMs: deliveryBaseDelayMs });
    });
  }

  /**
   * Shows "typing…" once the turn has run the typing delay, and refreshes it before it fades, until stopTyping (or
   * the turn ends). A reply that comes within the delay goes out without it: one request to the platform less, and
   * nothing the user could have seen (Telegram clears the indicator the moment the reply arrives anyway).
   */
  startTyping(): void {
    if (this.typingTimer || this.opts.signal.aborted) return;
    const tick = (): void => sendTyping(this.opts.egress, this.opts.conversationId);
    const refresh = (): void => {
      tick();
      this.typingTimer = setInterval(tick, this.opts.egress.typingRefreshMs);
    };
    const delayMs = this.opts.settings?.typingDelayMs ?? DEFAULT_TYPING_DELAY_MS;
    if (delayMs === 0) refresh();
    else this.typingTimer = setTimeout(refresh, delayMs);
  }

  stopTyping(): void {
    // clearInterval clears a timeout as well: the timer is the delay's until the first tick, then the refresh's.
    if (this.typingTimer) clearInterval(this.typingTimer);
    this.typingTimer = null;
  }

  readonly onEvent = (event: AgentEvent): void => {
    if (this.closed || this.opts.signal.aborted) return;
    switch (event.type) {
      case 'text_delta':
        if (!this.stream) return;
        if (this.newResponse) this.streamed = '';
        this.newResponse = false;
        this.streamed += event.text;
        this.stream.touch();
        return;
      case 'reasoning_delta':
        if (this.toolMode === 'off' || this.thinkingShown) return;
        this.thinkingShown = true;
        this.addStatusLine(THINKING_LINE);
        return;
      case 'tool_call_delta':
        this.toolBeingWritten(event.name);
        return;
      case 'tool_start':
        this.writingTool = null;
        this.newResponse = true;
        this.thinkingShown = false;
        this.toolStarted(event.id, event.name, event.args);
        return;
      case 'tool_end':
        if (!event.ok) this.toolFailed(event.id);
        return;
      case 'interim_text':
        this.showInterim(event.text);
        return;
      case 'step':
        this.opts.log.debug({ iteration: event.iteration, remaining: event.remaining }, 'agent step');
        return;
      case 'status':
        if (event.kind === 'info') return;
        // Text streamed for an attempt that is being retried or replaced belongs to nothing: start over.
        if (event.kind === 'retry' || event.kind === 'fallback') this.streamed = '';
        this.addStatusLine(`${STATUS_ICONS[event.kind]} ${code(event.message)}`);
        return;
      default:
        return;
    }
  };

  /**
   * Delivers the final text as the streamed message (edited; long texts continue in new messages) and returns
   * the platform ids, or null when nothing was streamed and the caller should send the text itself.
   */
  async finish(text: string): Promise<string[] | null> {
    this.stopTyping();
    this.endStatus(true);
    this.stream?.freeze();
    await this.outlet?.idle();
    const id = this.stream?.id ?? null;
    if (id === null) return null;
    const { egress, conversationId } = this.opts;
    const chunks = chunkMessage(text, egress.maxMessageLength - STREAM_MARGIN);
    try {
      await egress.edit(conversationId, id, chunks[0]);
    } catch (err) {
      this.opts.log.warn({ err }, 'final edit of the streamed reply failed; sending the reply instead');
      return null;
    }
    const ids = [id];
    for (const chunk of chunks.slice(1)) {
      ids.push(...(await deliver(egress, conversationId, chunk, { baseDelayMs: this.opts.deliveryBaseDelayMs })));
    }
    return ids;
  }

  /**
   * Ends the turn's display: typing off; a reply streamed by a turn the user stopped or interrupted says so (a
   * turn handed to another worker says nothing: it is answered again there).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const { signal } = this.opts;
    this.stopTimers();
    if (!signal.aborted) this.endStatus(true);
    await this.outlet?.idle();
    const id = this.stream?.id ?? null;
    const byUser = signal.reason instanceof TurnAbort && (signal.reason.kind === 'stop' || signal.reason.kind === 'interrupt');
    if (id !== null && byUser && this.streamed.trim() !== '') {
      await this.opts.egress.edit(this.opts.conversationId, id, this.truncated(this.streamed) + STOPPED_MARK).catch(() => undefined);
    }
  }

  private stopTimers(): void {
    this.stopTyping();
    this.endStatus(false);
    this.stream?.freeze();
  }

  private toolStarted(id: string, name: string, args: Record<string, unknown>): void {
    if (this.toolMode === 'off') return;
    if (this.toolMode === 'new' && name === this.lastToolName) return;
    this.lastToolName = name;
    const preview = argsPreview(args);
    this.toolLines.set(id, this.statusLines.length);
    this.addStatusLine(`⚙️ ${code(preview ? `${name}: ${preview}` : name)}`);
  }

  private toolFailed(id: string): void {
    const index = this.toolLines.get(id);
    if (index === undefined) return;
    this.statusLines[index] += ' ✗';
    this.status.touch();
  }

  private addStatusLine(line: string): void {
    this.statusLines.push(line);
    this.status.touch();
  }

  /**
   * The model is writing a tool call (Hermes' tool preview): the streamed preview shows "🔧 name …" below the text
   * so far until the call starts, so a long argument (a file, a script) being written is not a silent pause.
   */
  private toolBeingWritten(name: string): void {
    if (!this.stream || name === '' || name === this.writingTool) return;
    if (this.newResponse) this.streamed = '';
    this.newResponse = false;
    this.writingTool = name;
    this.stream.touch();
  }

  private streamView(): string {
    const text = this.streamed.trim() === '' ? '' : this.truncated(this.streamed);
    if (this.writingTool !== null) return `${text === '' ? '' : `${text}\n\n`}${TOOL_WRITING_ICON} ${code(this.writingTool)} …`;
    return text === '' ? '' : text + STREAM_CURSOR;
  }

  /** A streamed text longer than one message shows its beginning until the final text is chunked. */
  private truncated(text: string): string {
    const max = this.opts.egress.maxMessageLength - STREAM_MARGIN;
    return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
  }
}

/** The first string argument (a query, a path, a URL), else the arguments as JSON; shortened. */
export function argsPreview(args: Record<string, unknown>): string {
  const first = Object.values(args).find((v): v is string => typeof v === 'string' && v.trim() !== '');
  const text = (first ?? (Object.keys(args).length ? JSON.stringify(args) : '')).replace(/\s+/g, ' ').trim();
  return text.length > ARGS_PREVIEW_CHARS ? `${text.slice(0, ARGS_PREVIEW_CHARS - 1)}…` : text;
}

/** An inline code span: tool names and provider messages are full of `_` and `*` that Markdown would eat. */
function code(text: string): string {
  return `\`${text.replace(/`/g, "'")}\``;
}

/*
 * Status reactions on the user's messages (HERALD_STATUS_REACTIONS / <PLATFORM>_STATUS_REACTIONS; Slack by default):
 * 👀 when a worker takes the messages of a turn (a message that waits behind a running turn gets it from the ingress
 * as it is queued: edges/ingress/router.ts), ⚙️ added while tools run, and at the end both removed and ✅ (or ⚠️
 * when the turn ended in an error) added; a turn that ends without an answer of its own (interrupted, stopped)
 * just loses its reactions. Telegram keeps one reaction per message, so each stage there replaces the last.
 * Best effort: a reaction that fails never fails the turn.
 */

/** The message a reaction goes on: the conversation (for the channel) and the platform's id of the message. */
export interface ReactionTarget {
  conversationId: string;
  platformMessageId: string;
}

export interface TurnProgress {
  /** Tools started running (only the first call does anything). */
  tools(): void;
  /** The reply was delivered: 👀 (and ⚙️) → ✅, or ⚠️ when `failed`. */
  done(failed?: boolean): Promise<void>;
  /** The turn ended without an answer of its own (interrupted, stopped, stale): reactions removed, nothing added. */
  clear(): Promise<void>;
}

const NO_PROGRESS: TurnProgress = { tools: () => {}, done: async () => {}, clear: async () => {} };

/** Adds the queued reaction to every message the turn answers, now; the returned handle moves it along. */
export function showTurnProgress(egress: PlatformEgress, emoji: StatusReactions | undefined, targets: ReactionTarget[], log: Logger): TurnProgress {
  if (emoji === undefined || targets.length === 0) return NO_PROGRESS;
  const react = async (t: ReactionTarget, name: string, remove = false): Promise<void> => {
    if (name === '') return;
    try {
      await egress.react(t.conversationId, t.platformMessageId, name, remove);
    } catch (err) {
      log.debug({ err, messageId: t.platformMessageId, emoji: name, remove }, 'status reaction failed; ignored');
    }
  };
  const all = (fn: (t: ReactionTarget) => Promise<void>): Promise<void> => Promise.all(targets.map(fn)).then(() => undefined);
  // Not awaited by the caller, so the LLM call does not wait on it; every later stage waits for the one before, so
  // a reaction is never re-added after it was removed.
  let chain = all((t) => react(t, emoji.queued));
  let toolsShown = false;
  let finished = false;
  const finish = async (end: string | null): Promise<void> => {
    if (finished) return;
    finished = true;
    chain = chain.then(() =>
      all(async (t) => {
        await react(t, emoji.queued, true);
        if (toolsShown) await react(t, emoji.tools, true);
        if (end !== null) await react(t, end);
      }),
    );
    await chain;
  };
  return {
    tools() {
      if (toolsShown || finished || emoji.tools === '') return;
      toolsShown = true;
      chain = chain.then(() => all((t) => react(t, emoji.tools)));
    },
    done: (failed = false) => finish(failed ? emoji.error : emoji.done),
    clear: () => finish(null),
  };
}
