/**
 * What every command module works with: its dependencies, its input, and the session it acts on. Kept apart from
 * handlers.ts, which dispatches to the command modules, so those modules never import their dispatcher.
 */
import type { InboundMessage } from '@herald/adapters';
import type { Session, SessionInit, SessionSource, SessionStore } from '@herald/agent-core';
import type { Logger } from '../../support/logger.js';
import type { ControlBus } from '../../queue/control.js';
import type { Mailbox } from '../../queue/mailbox.js';
import type { TurnProducer } from '../../queue/producer.js';
import type { ConversationServices } from '../../features/sessions/services.js';
import type { CommandLedger } from './ledger.js';
import type { ScheduleService } from '../../features/schedules/service.js';
import type { ParsedCommand } from './registry.js';
import type { Profile, ProfileTable } from '../../features/profiles/table.js';
import { profileColumn } from '../../support/config/profile-names.js';
import type { ApprovalDesk } from '../../features/approvals/desk.js';

export { profileColumn };
export type { CommandReply } from '../../features/interactions/buttons.js';

export interface CommandDeps {
  store: SessionStore;
  mailbox: Mailbox;
  control: ControlBus;
  producer: TurnProducer;
  /** Runs each platform message's command once (a redelivery or a retried hand-over gets the same answer). */
  ledger: CommandLedger;
  /** Counters, models, settings, budgets (features/sessions/services.ts). */
  conversation: ConversationServices;
  log: Logger;
  /** Scheduled tasks (/schedules). */
  schedules: ScheduleService;
  /** Told of every compression a command made (metrics). */
  onCompressed?: (reason: 'command') => void;
  /** The agent profiles and the routes that pick one per message. */
  profiles: ProfileTable;
  /** Decisions on tool calls waiting for approval (/approve, /deny and their buttons). */
  approvals: ApprovalDesk;
}

export interface CommandInput {
  command: ParsedCommand;
  msg: InboundMessage;
  sessionKey: string;
  /** The profile the message was routed to. */
  profile: Profile;
}

/** How a session created by a command (/title, /model before the first message) starts: as a turn would. */
export function sessionInit(msg: InboundMessage, profile: Profile): SessionInit {
  return {
    source: msg.platform as SessionSource,
    userId: msg.userId,
    userName: msg.userName,
    chatId: msg.chatId,
    model: profile.model,
    systemPrompt: profile.model ? profile.systemPrompt : undefined,
    profile: profileColumn(profile.name),
  };
}

/**
 * The key's open session, or a new one started as a turn would start it: with the prompt builder's system prompt
 * (features/prompt) and the record of its layers.
 */
export async function sessionOrStart(deps: CommandDeps, sessionKey: string, msg: InboundMessage, profile: Profile): Promise<Session> {
  const open = await openSession(deps, sessionKey);
  if (open) return open;
  const { prompts } = deps.conversation;
  const built = profile.model ? await prompts.buildFor(profile, msg.platform, msg.chatType) : null;
  // The prompt's record (personality, layers) is kept with the session when this call creates it.
  const { session } = await deps.store.getOrCreateSession(sessionKey, {
    ...sessionInit(msg, profile),
    systemPrompt: built?.text,
    ...(built && { prompt: built }),
  });
  return session;
}

/** The key's session while it is open; an ended one (after /new or a reset) is no conversation. */
export async function openSession(deps: CommandDeps, sessionKey: string): Promise<Session | null> {
  const s = await deps.store.currentSession(sessionKey);
  return s && s.endedAt === null ? s : null;
}
