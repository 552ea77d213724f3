/**
 * What each command does. Commands run on the ingress process, never through the queue, so they answer at once
 * even while a turn runs — and /stop reaches a turn on any worker through Redis. Commands that rewrite the
 * session a running turn is using (/retry, /undo, /compress, /resume) hold its lock while they do it, so they
 * refuse while a turn runs instead of racing it.
 */
import { payloadFrom } from '../../queue/producer.js';
import { turnFailureReply } from '../../turn/user-errors.js';
import { flushOutsideTurn } from '../../turn/memory-flush.js';
import { withSessionHeld } from '../../features/sessions/session-hold.js';
import type { CommandDeps, CommandInput, CommandReply } from './context.js';
import { compressCommand, retryCommand, undoCommand } from './history.js';
import { BUSY_REPLY, helpText, type CommandName } from './registry.js';
import { modelCommand, statusCommand, usageCommand } from './session-info.js';
import { resumeCommand, titleCommand } from './titles.js';
import { schedulesCommand } from './schedules.js';
import { voiceCommand } from './voice.js';
import { reasoningCommand } from './reasoning.js';
import { rememberCommand } from './remember.js';
import { personalityCommand, promptCommand, skillsCommand } from './knowledge.js';
import { approveCommand, denyCommand } from './approvals.js';

type Handler = (deps: CommandDeps, input: CommandInput) => Promise<CommandReply>;

const HANDLERS: Record<CommandName, Handler> = {
  help: async () => helpText(),
  new: newCommand,
  stop: stopCommand,
  status: statusCommand,
  usage: usageCommand,
  queue: queueCommand,
  retry: retryCommand,
  undo: undoCommand,
  compress: compressCommand,
  title: titleCommand,
  resume: resumeCommand,
  model: modelCommand,
  schedules: schedulesCommand,
  voice: voiceCommand,
  reasoning: reasoningCommand,
  remember: rememberCommand,
  personality: personalityCommand,
  skills: skillsCommand,
  prompt: promptCommand,
  approve: approveCommand,
  deny: denyCommand,
};

/**
 * Returns the text to answer with (null: nothing to say). A command that fails says so briefly. A platform message
 * runs its command once: a repeat gets the same answer (edges/commands/ledger.ts).
 */
export async function runCommand(deps: CommandDeps, input: CommandInput): Promise<CommandReply> {
  const { spec } = input.command;
  return deps.ledger.once(input.msg.platform, input.msg.messageId, async () => {
    try {
      if (!spec.bypassesBusy && (await deps.mailbox.isBusy(input.sessionKey))) return BUSY_REPLY;
      return await HANDLERS[spec.name](deps, input);
    } catch (err) {
      // A command that queues a message was not handed over when it failed (Redis away, a replica WAIT timed out):
      // like a typed message, the failure goes to the hand-over, which retries it and tells the platform nothing
      // arrived yet; the ledger forgets the run, so the retry runs it again.
      if (spec.queues) throw err;
      deps.log.error({ err, command: spec.name, sessionKey: input.sessionKey }, 'command failed');
      return turnFailureReply(err);
    }
  });
}

async function stopCommand(deps: CommandDeps, { sessionKey }: CommandInput): Promise<string> {
  const { wasBusy, dropped } = await stopSession(deps, sessionKey);
  if (!wasBusy && dropped === 0) return 'No active task to stop.';
  return `⏹ Stopped.${dropped > 0 ? ` Dropped ${dropped} queued message${dropped === 1 ? '' : 's'}.` : ''}`;
}

/** What `/new` asks first when HERALD_CONFIRM_RESET is on; the buttons stand for `/new now` and `/new cancel`. */
const CONFIRM_RESET_QUESTION = 'Start a new conversation? This one is kept (/resume brings back titled ones).';
export const RESET_CANCELLED = '👍 Kept this conversation.';

async function newCommand(deps: CommandDeps, { sessionKey, command }: CommandInput): Promise<CommandReply> {
  const arg = command.args.toLowerCase();
  if (arg === 'cancel') return RESET_CANCELLED;
  if (arg !== 'now' && deps.conversation.config.confirmReset) {
    return {
      text: `${CONFIRM_RESET_QUESTION}\nSend /new now to confirm.`,
      choices: [
        { label: '✨ Start over', text: '/new now' },
        { label: 'Keep this one', text: '/new cancel' },
      ],
    };
  }
  await stopSession(deps, sessionKey);
  // The flush takes a model call: the reply does not wait for it, but the session is held (so a message sent
  // meanwhile waits and starts the new conversation) before the reply goes. Stopping the process waits for it.
  const { held, done } = flushThenEnd(deps, sessionKey);
  deps.conversation.background.track(done);
  await held;
  return '✨ Started a new conversation. What can I do for you?';
}

/**
 * /new's reset: the memory flush first (one model call, time-limited, best effort), so what it saves is in the
 * notes the new conversation starts with; then the session ends. Both under the session's lock (`held` resolves
 * once it is taken). Held by a turn already (one started between /stop and here): the session ends without the
 * flush, as /new did before flushing existed.
 */
function flushThenEnd(deps: CommandDeps, sessionKey: string): { held: Promise<void>; done: Promise<void> } {
  let taken!: () => void;
  const held = new Promise<void>((resolve) => (taken = resolve));
  const end = async (flush: boolean): Promise<void> => {
    const current = await deps.store.currentSession(sessionKey);
    if (!current || current.endedAt !== null) return;
    if (flush && current.messageCount > 0) await flushOutsideTurn(deps.store, deps.conversation, current, 'reset', deps.log);
    await deps.store.endSession(current.id, 'session_reset');
  };
  const done = withSessionHeld(deps.mailbox, sessionKey, 'command:new', async () => {
    taken();
    await end(true);
  })
    .then((h) => (h.held ? undefined : end(false)))
    .finally(taken);
  return { held, done };
}

async function queueCommand(deps: CommandDeps, { command, msg, sessionKey, profile }: CommandInput): Promise<string | null> {
  if (!command.args) return 'Usage: /queue <text>';
  const res = await deps.producer.submit(sessionKey, { ...payloadFrom(msg, profile.name), text: command.args }, 'queue');
  if (res.status === 'full') return `The queue is full (${res.pending - 1} waiting); nothing was queued.`;
  if (res.status === 'duplicate') return null;
  return res.busy && res.position > 1 ? `Queued (${res.position - 1} ahead of it).` : null;
}

/** Breaks the session's lock (even a hung worker's), drops what waits, and tells the running turn to abort. */
async function stopSession(deps: CommandDeps, sessionKey: string): Promise<{ wasBusy: boolean; dropped: number }> {
  const res = await deps.mailbox.stop(sessionKey);
  if (res.wasBusy) await deps.control.publish({ type: 'stop', sessionKey, fence: res.fence });
  return res;
}
