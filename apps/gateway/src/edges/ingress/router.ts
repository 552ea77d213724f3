/**
 * The ingress router: every adapter hands its InboundMessages here. It authorises, computes the session key,
 * answers commands at once (they bypass the queue), and enqueues the rest.
 *
 * Session keys, in Hermes' format: `agent:<agent>:<platform>:<chat_type>:<chat_id>[:<thread_id>][:<user_id>]`.
 * `<agent>` is the profile (`main` for the default profile, as in Hermes, so a gateway without profiles keeps its
 * keys). DMs: one session per chat (a DM thread, as Slack has, is its own). Groups and plain channels: one session
 * per user, so people in one group do not share a context. Threads: shared by everyone in them.
 */
import type { Button, ChatType, InboundMessage, PlatformEgress } from '@herald/adapters';
import { FOREIGN_PRESS_NOTE, STALE_PRESS_NOTE, type ButtonStore } from '../../features/interactions/buttons.js';
import type { CommandReply } from '../commands/context.js';
import type { Logger } from '../../support/logger.js';
import type { CommandDeps } from '../commands/context.js';
import { runCommand } from '../commands/handlers.js';
import { parseCommand } from '../commands/registry.js';
import { admit, type AccessPolicy, type InboundGuard } from './inbound-guard.js';
import { payloadFrom } from '../../queue/producer.js';
import { DEFAULT_PROFILE } from '../../support/config/profile-names.js';
import { profileKeySegment } from '../../features/profiles/table.js';
import { statusReactionsFor } from '../../support/config/progress.js';

/** Longer inbound texts are refused with an explanation instead of being cut silently. */
export const MAX_INBOUND_CHARS = 64_000;

const QUEUED_ACK = '⏳ Queued — I will answer after the current task.';
/** Closes a platform interaction (a Discord slash command) that nothing else answered, so it never hangs. */
const INTERACTION_DONE = '✅ Done.';
/** An interaction from someone not allowed in a server: only they see it (the deferred answer is ephemeral). */
const INTERACTION_NOT_ALLOWED = '⛔ You are not allowed to use this bot here.';

export interface RouterDeps extends CommandDeps {
  policy: AccessPolicy;
  egress: (platform: string, account?: string) => PlatformEgress;
  log: Logger;
  /** Metrics and the per-user rate limit (edges/ingress/inbound-guard.ts); commands pass it always. */
  guard?: InboundGuard;
  /**
   * The Redis key that exists while a clarify question waits in the session (turn/clarify.ts) is this prefix and
   * the session key: the next message is its answer. Looked at by the producer in the same round trip as the append.
   */
  answerMarkerPrefix?: string;
  /** Buttons under command answers, and what a press means (features/interactions/buttons.ts). Absent: text only. */
  buttons?: ButtonStore;
}

type Reply = (text: string, buttons?: Button[]) => Promise<unknown>;

/** The session key of a message for a profile (Hermes' format, above). */
export function sessionKeyFor(
  msg: Pick<InboundMessage, 'platform' | 'chatType' | 'chatId' | 'threadId' | 'userId'>,
  profile: string = DEFAULT_PROFILE,
): string {
  const parts = ['agent', profileKeySegment(profile), msg.platform, msg.chatType, msg.chatId];
  if (msg.threadId) parts.push(msg.threadId);
  if (perUser(msg.chatType)) parts.push(msg.userId);
  return parts.join(':');
}

function perUser(chatType: ChatType): boolean {
  return chatType === 'group' || chatType === 'channel';
}

export class IngressRouter {
  constructor(private readonly deps: RouterDeps) {}

  /** The InboundHandler given to every adapter: resolves once the message is durably taken (or answered). */
  readonly handle = async (msg: InboundMessage): Promise<void> => {
    // The bot that received the message answers it (roles/platforms.ts: one egress per platform and account).
    const egress = this.deps.egress(msg.platform, msg.account);
    const send: Reply = (text, buttons) => egress.send(msg.conversationId, text, { replyTo: msg.platformMessageId, plain: true, ...(buttons && { buttons }) });
    if (msg.press) return this.press(msg, msg.press.data, egress, send);
    const interaction = msg.interaction;
    if (interaction === undefined || egress.answerInteraction === undefined) {
      await this.route(msg, send, egress);
      return;
    }
    // A platform interaction is answered through itself, exactly once: the first reply fills the deferred response.
    let answered = false;
    const answer: Reply = async (text, buttons) => {
      answered = true;
      await egress.answerInteraction?.(interaction, text, { conversationId: msg.conversationId, userId: msg.userId, buttons });
    };
    // Opening Slack's App Home tab is no request to pair: a stranger just sees that the bot is not for them.
    if (interaction.kind === 'home' && !(await this.deps.policy.isAllowed(msg.platform, msg.userId))) {
      await answer(INTERACTION_NOT_ALLOWED);
      return;
    }
    const admitted = await this.route(msg, answer, egress);
    if (!answered) await answer(admitted ? INTERACTION_DONE : INTERACTION_NOT_ALLOWED);
  };

  /**
   * A button press: one that still counts is closed quietly and then handled as if the user had typed the button's
   * text (a clarify answer, `/resume Trip`); a stale or someone else's press gets a note only the presser sees.
   * Where a press is no platform interaction but a message of the user's own (WhatsApp's button replies, in a
   * one-to-one chat), the note is a reply to it: otherwise a dead button would answer nothing at all.
   */
  private async press(msg: InboundMessage, data: string, egress: PlatformEgress, send: Reply): Promise<void> {
    // Closing a press is best effort: a press the platform no longer lets us answer (expired, unknown) must not fail
    // the hand-over, which would only have it delivered again.
    const close = async (note: string | null): Promise<void> => {
      try {
        if (!msg.interaction || !egress.answerInteraction) {
          if (note !== null) await send(note);
          return;
        }
        await egress.answerInteraction(msg.interaction, note, { conversationId: msg.conversationId, userId: msg.userId });
      } catch (err) {
        this.deps.log.warn({ err, platform: msg.platform, messageId: msg.messageId }, 'button press not answered');
      }
    };
    const res = this.deps.buttons ? await this.deps.buttons.press(data, msg.userId) : ({ status: 'stale' } as const);
    if (res.status !== 'ok') {
      this.deps.log.info({ platform: msg.platform, messageId: msg.messageId, press: res.status }, 'button press refused');
      await close(res.status === 'foreign' ? FOREIGN_PRESS_NOTE : STALE_PRESS_NOTE);
      return;
    }
    await close(null);
    const { press: _press, interaction: _interaction, ...typed } = msg;
    await this.route({ ...typed, text: res.text }, send, egress);
  }

  /** A command's answer; its choices become buttons where the gateway keeps them (only the asker's presses count). */
  private async answerCommand(msg: InboundMessage, answer: CommandReply, reply: Reply): Promise<void> {
    if (answer === null) return;
    if (typeof answer === 'string') {
      await reply(answer);
      return;
    }
    const offered =
      this.deps.buttons && answer.choices.length > 0 ? await this.deps.buttons.offer({ userId: msg.userId, choices: answer.choices, once: true }) : null;
    await reply(answer.text, offered?.buttons);
  }

  /** False when the sender was not let in (pairing code or silence). */
  private async route(msg: InboundMessage, reply: Reply, egress: PlatformEgress): Promise<boolean> {
    const { deps } = this;
    const log = deps.log.child({ platform: msg.platform, messageId: msg.messageId });
    // Unknown users: a pairing code in a DM, silence elsewhere (edges/ingress/inbound-guard.ts admit). Commands included.
    if (!(await admit({ policy: deps.policy, pairing: deps.conversation.pairing, log }, msg, reply))) return false;
    // The profile that answers (routes, first match wins); its name is part of the session key.
    const profile = deps.profiles.route(msg);
    const sessionKey = sessionKeyFor(msg, profile.name);
    // The guard never holds a command back.
    const command = parseCommand(msg.text);
    if (deps.guard && !(await deps.guard.admit(msg, reply, command !== null))) return true;

    if (msg.text.length > MAX_INBOUND_CHARS) {
      await reply(`That message is too long (${msg.text.length} characters; the limit is ${MAX_INBOUND_CHARS}). Please split it or send it as a file.`);
      return true;
    }

    if (command) {
      const answer = await runCommand(deps, { command, msg, sessionKey, profile });
      log.info({ sessionKey, command: command.spec.name }, 'command');
      await this.answerCommand(msg, answer, reply);
      return true;
    }

    // The idle / daily reset is the turn's to make, with its begin (turn/stages/open.ts): no read here.
    const answering = deps.answerMarkerPrefix === undefined ? undefined : `${deps.answerMarkerPrefix}${sessionKey}`;
    const marked = profile.busyInputMode === 'steer' ? null : await this.markWaiting(msg, sessionKey, answering, egress, log);
    // An answer to a clarify question goes to the running turn (steer), whatever the busy-input mode says.
    const res = await deps.producer.submit(sessionKey, payloadFrom(msg, profile.name), profile.busyInputMode, answering);
    log.debug({ sessionKey, status: res.status }, 'message routed');
    if (res.status === 'full') {
      if (marked) await egress.react(msg.conversationId, msg.platformMessageId as string, marked, true).catch(() => undefined);
      await reply(`⚠️ ${res.pending - 1} messages are already waiting; this one was not queued. Send /stop to clear them.`);
    } else if (res.status === 'queued' && res.acknowledge) {
      await reply(QUEUED_ACK);
    }
    return true;
  }

  /**
   * The status reactions' 👀 on a message that has to wait behind a running turn, as soon as it is taken (otherwise
   * its turn adds it when it starts: out/progress.ts showTurnProgress). Added before the message is queued, so the turn that
   * takes it off can never come first and leave it behind. Not on a message that goes into the running turn (a
   * clarify answer, steer mode): no turn of its own would take it off; taken off again when the mailbox is full.
   * Best effort, as every status reaction. Returns the emoji it added.
   */
  private async markWaiting(
    msg: InboundMessage,
    sessionKey: string,
    answering: string | undefined,
    egress: PlatformEgress,
    log: Logger,
  ): Promise<string | null> {
    const emoji = statusReactionsFor(this.deps.conversation.progress, msg.platform, egress)?.queued;
    if (!emoji || !msg.platformMessageId || msg.partOf) return null;
    try {
      if (!(await this.deps.mailbox.isBusy(sessionKey, answering))) return null;
      await egress.react(msg.conversationId, msg.platformMessageId, emoji);
      return emoji;
    } catch (err) {
      log.debug({ err }, 'queued reaction failed; ignored');
      return null;
    }
  }
}
