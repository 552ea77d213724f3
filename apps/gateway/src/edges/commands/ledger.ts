/**
 * Commands run once per platform message. A command can reach the router twice: the platform redelivers it
 * (Telegram after a restart, Slack's retries), or the hand-over retry runs the router again because sending the
 * command's answer failed. Running /undo twice would remove a second exchange; instead the repeat gets the first
 * run's answer (sent again) and nothing else happens.
 */
import type { Redis } from 'ioredis';
import type { CommandReply } from '../../features/interactions/buttons.js';

/** While a command runs: long enough for /compress's summary call, short enough not to block a real retry. */
const COMMAND_RUNNING_TTL_S = 300;
/** How long a finished command's answer is kept for repeats (as long as the mailbox remembers answered messages). */
const COMMAND_DONE_TTL_S = 3_600;
const RUNNING = '"running"';

export class CommandLedger {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /**
   * Runs `command` unless this platform message ran it already: then resolves with that run's answer (null when
   * it had none, or while it is still running elsewhere, which answers itself).
   */
  async once(platform: string, messageId: string, command: () => Promise<CommandReply>): Promise<CommandReply> {
    const key = `${this.prefix}:cmd:${platform}.${messageId}`;
    if ((await this.redis.set(key, RUNNING, 'EX', COMMAND_RUNNING_TTL_S, 'NX')) !== 'OK') {
      const seen = await this.redis.get(key);
      if (seen === null || seen === RUNNING) return null;
      return (JSON.parse(seen) as { answer: CommandReply }).answer;
    }
    let answer: CommandReply;
    try {
      answer = await command();
    } catch (err) {
      await this.redis.del(key).catch(() => undefined);
      throw err;
    }
    await this.redis.set(key, JSON.stringify({ answer }), 'EX', COMMAND_DONE_TTL_S);
    return answer;
  }
}
