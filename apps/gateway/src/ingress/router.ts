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

export interface RouterDeps extends CommandDeps {
  policy: AccessPolicy;
  busyInputMode: BusyInputMode;
  egress: (platform: string) => PlatformEgress;
  log: Logger;
  /** Metrics and the per-user rate limit (ops/inbound-guard.ts); commands pass it always. */
  guard?: InboundGuard;
  /**
   * The Redis key that exists while a clarify question waits in the session (turns/clarify.ts): the next message
   * is its answer. Looked at by the producer in the same round trip as the append.
   */
  answerMarker?: (sessionKey: string) => string;
}

export class IngressRouter {
  constructor(private readonly deps: RouterDeps) {}

  /** The InboundHandler given to every adapter: resolves once the message is durably taken (or answered). */
  readonly handle = async (msg: InboundMessage): Promise<void> => {
    const { deps } = this;
    const log = deps.log.child({ platform: msg.platform, messageId: msg.messageId });
    const reply = (text: string): Promise<unknown> =>
      deps.egress(msg.platform).send(msg.conversationId, text, { replyTo: msg.platformMessageId, plain: true });
    // Unknown users: a pairing code in a DM, silence elsewhere (ingress/authorize.ts). Commands included.
    if (!(await admit({ policy: deps.policy, pairing: deps.conversation?.pairing, log }, msg, reply))) return;
    const sessionKey = sessionKeyFor(msg);
    if (deps.guard && !(await deps.guard.admit(msg, reply))) return;

    if (msg.text.length > MAX_INBOUND_CHARS) {
      await reply(`That message is too long (${msg.text.length} characters; the limit is ${MAX_INBOUND_CHARS}). Please split it or send it as a file.`);
      return;
    }

    const command = parseCommand(msg.text);
    if (command) {
      const text = await runCommand(deps, { command, msg, sessionKey });
      log.info({ sessionKey, command: command.spec.name }, 'command');
      if (text) await reply(text);
      return;
    }

    // Idle / daily reset (sessions/reset-policy.ts): an expired session ends and this message starts a new one.
    const resetNotice = await resetExpiredSession(deps, sessionKey);
    if (resetNotice) await reply(resetNotice);
    // An answer to a clarify question goes to the running turn (steer), whatever the busy-input mode says.
    const res = await deps.producer.submit(sessionKey, payloadFrom(msg), deps.busyInputMode, deps.answerMarker?.(sessionKey));
    log.debug({ sessionKey, status: res.status }, 'message routed');
    if (res.status === 'full') {
      await reply(`⚠️ ${res.pending - 1} messages are already waiting; this one was not queued. Send /stop to clear them.`);
    } else if (res.status === 'queued' && res.acknowledge) {
      await reply(QUEUED_ACK);
    }
  };
}
