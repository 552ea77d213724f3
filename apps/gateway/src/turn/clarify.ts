/**
 * The gateway side of the `clarify` tool: a question goes to the chat, and the user's next message in that
 * session becomes the answer instead of a new turn.
 *
 * How the answer reaches the worker holding the session, whatever HERALD_BUSY_INPUT_MODE is: while a question is
 * open, the broker keeps a marker in Redis (`<prefix>:clarify:<session key>`). The producer sees it (in the
 * mailbox append's own round trip) and submits the next message in `steer` mode, which hands it to the running turn (pub/sub to the worker,
 * `takeSteerMessages()`) instead of interrupting or queueing; the entry is acknowledged with the turn, so it never
 * runs as a turn of its own. The marker expires on its own if the worker dies, so a session is never stuck.
 */
import type { ClarifyChannel } from '@herald/agent-core';
import type { Redis } from 'ioredis';

/** The marker outlives a dead worker by at most this long; a live broker refreshes it. */
const CLARIFY_MARKER_TTL_MS = 60_000;
const MARKER_REFRESH_MS = 15_000;
/** How often the broker looks for the answer in the turn's steer intake (in-process, no Redis round trip). */
const CLARIFY_POLL_MS = 100;

/** The markers' prefix: a session's marker is this and its session key (the ingress router appends it itself). */
export function clarifyMarkerPrefix(prefix: string): string {
  return `${prefix}:clarify:`;
}

export function clarifyMarkerKey(prefix: string, sessionKey: string): string {
  return `${clarifyMarkerPrefix(prefix)}${sessionKey}`;
}

export interface ClarifyBrokerOptions {
  redis: Redis;
  prefix: string;
  sessionKey: string;
  /**
   * Puts the question in the chat (with a button per choice where it can); throws if the turn may no longer speak
   * (interrupted, stopped). May return what withdraws the buttons once the question is over.
   */
  send(question: string, choices: readonly string[]): Promise<(() => Promise<void>) | void>;
  /** The worker's intake of messages sent during the turn (TurnContext.takeSteerMessages). */
  takeSteerMessages(): string[];
  pollMs?: number;
}

/**
 * One per turn. It sits between the worker's steer intake and the loop: while a question is open, the first
 * message that arrives is the answer; messages that arrived before the question, or after the answer, go to
 * the loop as steering (`takeSteerMessages`), as they would have without a question.
 */
export class ClarifyBroker implements ClarifyChannel {
  private held: string[] = [];
  private open = false;

  constructor(private readonly opts: ClarifyBrokerOptions) {}

  /** The loop's getSteerMessages: what was held back around a question first, then anything new. */
  readonly takeSteerMessages = (): string[] => [...this.held.splice(0), ...this.opts.takeSteerMessages()];

  readonly ask = async (question: string, signal: AbortSignal, choices: readonly string[] = []): Promise<string> => {
    if (this.open) throw new Error('another question is already waiting for an answer');
    this.open = true;
    // Sent before the question, so not an answer to it.
    this.held.push(...this.opts.takeSteerMessages());
    const key = clarifyMarkerKey(this.opts.prefix, this.opts.sessionKey);
    let withdraw: (() => Promise<void>) | void = undefined;
    try {
      // The marker goes up before the question goes out, so even an instant answer is routed to us.
      await this.opts.redis.set(key, '1', 'PX', CLARIFY_MARKER_TTL_MS);
      withdraw = await this.opts.send(question, choices);
      return await this.waitForAnswer(key, signal);
    } finally {
      this.open = false;
      await this.opts.redis.del(key).catch(() => undefined);
      // Answered (typed or pressed), timed out or stopped: a later press of its buttons is stale.
      if (withdraw) await withdraw().catch(() => undefined);
    }
  };

  private async waitForAnswer(key: string, signal: AbortSignal): Promise<string> {
    let refreshedAt = Date.now();
    for (;;) {
      signal.throwIfAborted();
      const [answer, ...rest] = this.opts.takeSteerMessages();
      if (answer !== undefined) {
        this.held.push(...rest);
        return answer;
      }
      if (Date.now() - refreshedAt >= MARKER_REFRESH_MS) {
        refreshedAt = Date.now();
        await this.opts.redis.pexpire(key, CLARIFY_MARKER_TTL_MS).catch(() => undefined);
      }
      await sleep(this.opts.pollMs ?? CLARIFY_POLL_MS, signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
