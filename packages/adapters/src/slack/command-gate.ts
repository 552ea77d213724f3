/**
 * Button presses and slash commands whose effect is a queued message (`/herald queue …`, `/herald retry`, `/herald <anything that is
 * not a command>`) follow the Events rule: acknowledged only once that message was handed over (the gateway's
 * mailbox took it and, with HERALD_REDIS_WAIT_REPLICAS, a replica has it), within SLACK_ACK_BUDGET_MS.
 *
 * Unlike events, Slack never sends a slash command again: a missing ack only shows the user an error
 * (`operation_timeout`). So the user is told what became of it once the hand-over settles, with a message only
 * they see: taken after all (nothing to send again), or not taken (send it again). Meanwhile the same command
 * typed again by the same user in the same channel joins the hand-over still running instead of starting a
 * second one, so a user who retypes it at once does not queue it twice.
 *
 * Which commands queue is the gateway's to say (`queues` on its command table, SlackIngressOptions.commands); a
 * word that is not in the table is, by the gateway's own rule, an ordinary message, which queues too. Commands that
 * only answer (`/herald status`) are acknowledged on arrival, as before.
 */
import { within } from '../shared/hand-overs.js';

/** The context key (Bolt customProperties) under which an HTTP slash command's listener finds its answer. */
export const COMMAND_ANSWER_KEY = 'heraldCommandAnswer';

/** Told to the user (ephemeral) when a command it did not acknowledge was taken after all. */
export const TAKEN_LATE_NOTICE = '✅ Your command went through after all (it took longer than Slack waits): no need to send it again.';
/** Told to the user (ephemeral) when a command it did not acknowledge could not be taken. */
export const NOT_TAKEN_NOTICE = '⚠️ Herald could not take your command just now, so nothing was queued. Please send it again.';
/** The same two notices for a button press (Slack does not send a press again either). */
export const PRESS_TAKEN_LATE_NOTICE = '✅ Your button press went through after all (it took longer than Slack waits): no need to press it again.';
export const PRESS_NOT_TAKEN_NOTICE = '⚠️ Herald could not take your button press just now, so nothing happened. Please press it again.';

/** What a gated interaction is called in the log, and what its user is told when it was not acknowledged. */
export interface GatedKind {
  what: 'slash command' | 'button press';
  takenLate: string;
  notTaken: string;
}

export const GATED_COMMAND: GatedKind = { what: 'slash command', takenLate: TAKEN_LATE_NOTICE, notTaken: NOT_TAKEN_NOTICE };
export const GATED_PRESS: GatedKind = { what: 'button press', takenLate: PRESS_TAKEN_LATE_NOTICE, notTaken: PRESS_NOT_TAKEN_NOTICE };

/**
 * What the HTTP transport lends a slash command's listener: the listener marks a command it gates (so the
 * transport waits for its verdict instead of answering 200 at its own deadline) and refuses one not taken in time
 * (answered 503: Slack shows the user an error).
 */
export class CommandAnswer {
  gated = false;
  private refusedNow!: () => void;
  /** Resolves when the listener refused to acknowledge the command. */
  readonly refused = new Promise<void>((resolve) => {
    this.refusedNow = resolve;
  });

  refuse(): void {
    this.refusedNow();
  }
}

export function commandAnswerOf(context: Record<string, unknown>): CommandAnswer | undefined {
  const a = context[COMMAND_ANSWER_KEY];
  return a instanceof CommandAnswer ? a : undefined;
}

/** One entry of the gateway's command table, as the adapter sees it. */
export interface SlackCommandEntry {
  name: string;
  aliases?: readonly string[];
  /** True when the command's effect is a queued message (`/queue`, `/retry`). */
  queues?: boolean;
}

/**
 * Whether a slash command's chat text (`/queue hi`, `/status`, `/hello there`) queues a message: a command the
 * table marks `queues`, or a word the table does not know (the gateway takes it as an ordinary message).
 */
export function queuesMessage(text: string, commands: readonly SlackCommandEntry[]): boolean {
  const word = /^\/([A-Za-z0-9_]+)(?:@[A-Za-z0-9_]+)?(?:\s|$)/.exec(text.trim())?.[1]?.toLowerCase();
  if (word === undefined) return true;
  const spec = commands.find((c) => c.name === word || (c.aliases ?? []).includes(word));
  return spec === undefined || spec.queues === true;
}

export type GatedOutcome = 'taken' | 'failed' | 'pending';

/**
 * Per key (user, channel and the command's text or the pressed button): the hand-over of a gated command or press
 * still running. A retyped command or a second press joins it; it is forgotten once settled, so the same text typed
 * (or button pressed) later is a new message.
 */
export class PendingGated {
  private readonly running = new Map<string, Promise<void>>();

  /** The hand-over for `key`: the running one (joined: true), or `start()`'s. */
  join(key: string, start: () => Promise<void>): { handOver: Promise<void>; joined: boolean } {
    const running = this.running.get(key);
    if (running !== undefined) return { handOver: running, joined: true };
    const handOver = start();
    this.running.set(key, handOver);
    const forget = (): void => {
      if (this.running.get(key) === handOver) this.running.delete(key);
    };
    handOver.then(forget, forget);
    return { handOver, joined: false };
  }
}

/** `handOver`'s outcome within `budgetMs` (it goes on past it). */
export function outcomeWithin(handOver: Promise<void>, budgetMs: number): Promise<GatedOutcome> {
  return within(
    handOver.then(
      () => 'taken' as const,
      () => 'failed' as const,
    ),
    budgetMs,
    'pending' as const,
  );
}
