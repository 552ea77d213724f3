/**
 * The ingress router: every adapter hands its InboundMessages here. It authorises, computes the session key,
 * answers commands at once (they bypass the queue), and enqueues the rest.
 */
import type { InboundMessage, PlatformEgress } from '@herald/adapters';
import type { Logger } from '../logger.js';
import { runCommand, type CommandDeps } from '../commands/handlers.js';
import { parseCommand } from '../commands/registry.js';
import type { BusyInputMode } from '../queue/producer.js';
import type { AccessPolicy } from './authorize.js';
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
}

export class IngressRouter {
  constructor(private readonly deps: RouterDeps) {}

  /** The InboundHandler given to every adapter: resolves once the message is durably taken (or answered). */
  readonly handle = async (msg: InboundMessage): Promise<void> => {
    const { deps } = this;
    const log = deps.log.child({ platform: msg.platform, messageId: msg.messageId });
    if (!deps.policy.isAllowed(msg.platform, msg.userId)) {
      log.info({ userId: msg.userId, chatType: msg.chatType }, 'message from an unauthorised user ignored');
      return;
    }
    const sessionKey = sessionKeyFor(msg);
    const reply = (text: string): Promise<unknown> =>
      deps.egress(msg.platform).send(msg.conversationId, text, { replyTo: msg.platformMessageId, plain: true });

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

    const res = await deps.producer.submit(sessionKey, payloadFrom(msg), deps.busyInputMode);
    log.debug({ sessionKey, status: res.status }, 'message routed');
    if (res.status === 'full') {
      await reply(`⚠️ ${res.pending - 1} messages are already waiting; this one was not queued. Send /stop to clear them.`);
    } else if (res.status === 'queued' && res.acknowledge) {
      await reply(QUEUED_ACK);
    }
  };
}
