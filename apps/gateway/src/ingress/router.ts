/**
 * The ingress router: every adapter hands its InboundMessages here. It authorises, computes the session key,
 * answers commands at once (they bypass the queue), and enqueues the rest.
 */
import type { InboundMessage, PlatformEgress } from '@herald/adapters';
import type { Logger } from '../logger.js';
import type { CommandDeps } from '../commands/context.js';
import { runCommand } from '../commands/handlers.js';
import { parseCommand } from '../commands/registry.js';
import type { BusyInputMode } from '../queue/producer.js';
import { admit, type AccessPolicy } from './authorize.js';
import { resetExpiredSession } from '../sessions/reset-policy.js';
import type { InboundGuard } from '../ops/inbound-guard.js';
import { payloadFrom } from './payload.js';
import { sessionKeyFor } from './session-key.js';

/** Longer inbound texts are refused with an explanation instead of being cut silently. */
export const MAX_INBOUND_CHARS = 64_000;

export const QUEUED_ACK = '⏳ Queued — I will answer after the current task.';
/** Closes a platform interaction (a Discord slash command) that nothing else answered, so it never hangs. */
export const INTERACTION_DONE = '✅ Done.';
/** An interaction from someone not allowed in a server: only they see it (the deferred answer is ephemeral). */
export const INTERACTION_NOT_ALLOWED = '⛔ You are not allowed to use this bot here.';

export interface RouterDeps extends CommandDeps {
  policy: AccessPolicy;
  busyInputMode: BusyInputMode;
  egress: (platform: string) => PlatformEgress;
  log: Logger;
  /** Metrics and the per-user rate limit (ops/inbound-guard.ts); commands pass it always. */
  guard?: InboundGuard;
  /** True while a clarify question waits in the session (turns/clarify.ts): the next message is its answer. */
  awaitingAnswer?: (sessionKey: string) => Promise<boolean>;
}

export class IngressRouter {
  constructor(private readonly deps: RouterDeps) {}

  /** The InboundHandler given to every adapter: resolves once the message is durably taken (or answered). */
  readonly handle = async (msg: InboundMessage): Promise<void> => {
    const egress = this.deps.egress(msg.platform);
    const interaction = msg.interaction;
    if (interaction === undefined || egress.answerInteraction === undefined) {
      await this.route(msg, (text) => egress.send(msg.conversationId, text, { replyTo: msg.platformMessageId, plain: true }));
      return;
    }
    // A platform interaction is answered through itself, exactly once: the first reply fills the deferred response.
    let answered = false;
    const answer = async (text: string): Promise<void> => {
      answered = true;
      await egress.answerInteraction?.(interaction, text);
    };
    const admitted = await this.route(msg, answer);
    if (!answered) await answer(admitted ? INTERACTION_DONE : INTERACTION_NOT_ALLOWED);
  };

  /** False when the sender was not let in (pairing code or silence). */
  private async route(msg: InboundMessage, reply: (text: string) => Promise<unknown>): Promise<boolean> {
    const { deps } = this;
    const log = deps.log.child({ platform: msg.platform, messageId: msg.messageId });
    // Unknown users: a pairing code in a DM, silence elsewhere (ingress/authorize.ts). Commands included.
    if (!(await admit({ policy: deps.policy, pairing: deps.conversation?.pairing, log }, msg, reply))) return false;
    const sessionKey = sessionKeyFor(msg);
    if (deps.guard && !(await deps.guard.admit(msg, reply))) return true;

    if (msg.text.length > MAX_INBOUND_CHARS) {
      await reply(`That message is too long (${msg.text.length} characters; the limit is ${MAX_INBOUND_CHARS}). Please split it or send it as a file.`);
      return true;
    }

    const command = parseCommand(msg.text);
    if (command) {
      const text = await runCommand(deps, { command, msg, sessionKey });
      log.info({ sessionKey, command: command.spec.name }, 'command');
      if (text) await reply(text);
      return true;
    }

    // An answer to a clarify question goes to the running turn (steer), whatever the busy-input mode says.
    const mode = (await deps.awaitingAnswer?.(sessionKey)) ? 'steer' : deps.busyInputMode;
    // Idle / daily reset (sessions/reset-policy.ts): an expired session ends and this message starts a new one.
    const resetNotice = await resetExpiredSession(deps, sessionKey);
    if (resetNotice) await reply(resetNotice);
    const res = await deps.producer.submit(sessionKey, payloadFrom(msg), mode);
    log.debug({ sessionKey, status: res.status }, 'message routed');
    if (res.status === 'full') {
      await reply(`⚠️ ${res.pending - 1} messages are already waiting; this one was not queued. Send /stop to clear them.`);
    } else if (res.status === 'queued' && res.acknowledge) {
      await reply(QUEUED_ACK);
    }
    return true;
  }
}
