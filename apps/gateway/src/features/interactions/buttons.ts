/**
 * Buttons Herald puts under a message (clarify choices, the /resume picker, the /new confirmation) and what a
 * press of one means. A button's data is only `hb1:<offer id>:<index>`; the offer — who may press, and the text
 * each button stands for — lives in Redis, so any ingress process can take the press, and an offer that was
 * used, withdrawn (the question was answered by typing) or expired makes a late press "stale".
 *
 * A press that counts is then handled exactly like the user typing the button's text: a clarify answer reaches
 * the running turn through the queue (steer), `/resume Trip` runs the command.
 */
import { randomBytes } from 'node:crypto';
import { BUTTON_DATA_MAX, type Button } from '@herald/adapters';
import type { Redis } from 'ioredis';

const DATA_PREFIX = 'hb1';
/** A picker or a confirmation stays pressable this long. */
const BUTTON_OFFER_TTL_MS = 24 * 60 * 60_000;

export const STALE_PRESS_NOTE = '⌛ This button is no longer active (already used, answered, or expired).';
export const FOREIGN_PRESS_NOTE = '🙅 These buttons are for the person who asked; yours would not count.';

/** One button: what it shows and the text a press stands for. */
interface Choice {
  label: string;
  text: string;
}

/** What a command answers: text, or text with buttons (each standing for a text the user could type). */
export type CommandReply = string | { text: string; choices: Choice[] } | null;

export interface ButtonOffer {
  /** Only this user's presses count (unless `pressers` is given). */
  userId: string;
  /** Whose presses count instead of `userId`'s (an approval in a group: the admins). */
  pressers?: readonly string[];
  choices: Choice[];
  /** One press uses the whole offer up (a picker, a confirmation); otherwise it stays until withdrawn. */
  once: boolean;
}

export type PressResult = { status: 'ok'; text: string } | { status: 'stale' } | { status: 'foreign' };

export class ButtonStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Stores the offer and returns its buttons (and its id, to withdraw it). */
  async offer(offer: ButtonOffer, ttlMs = BUTTON_OFFER_TTL_MS): Promise<{ id: string; buttons: Button[] }> {
    const id = randomBytes(9).toString('base64url');
    await this.redis.set(this.key(id), JSON.stringify(offer), 'PX', ttlMs);
    const buttons = offer.choices.map((c, i) => ({ label: c.label, data: `${DATA_PREFIX}:${id}:${i}` }));
    for (const b of buttons) if (Buffer.byteLength(b.data) > BUTTON_DATA_MAX) throw new Error('button data too long');
    return { id, buttons };
  }

  async withdraw(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }

  async press(data: string, userId: string): Promise<PressResult> {
    const m = new RegExp(`^${DATA_PREFIX}:([\\w-]{1,32}):(\\d{1,2})$`).exec(data);
    if (!m) return { status: 'stale' };
    const key = this.key(m[1]);
    const raw = await this.redis.get(key);
    if (raw === null) return { status: 'stale' };
    const offer = JSON.parse(raw) as ButtonOffer;
    const choice = offer.choices[Number(m[2])];
    if (choice === undefined) return { status: 'stale' };
    if (!(offer.pressers ?? [offer.userId]).includes(userId)) return { status: 'foreign' };
    // Two quick presses (or a press on two devices): only the one that removes the offer counts.
    if (offer.once && (await this.redis.del(key)) === 0) return { status: 'stale' };
    return { status: 'ok', text: choice.text };
  }

  private key(id: string): string {
    return `${this.prefix}:buttons:${id}`;
  }
}
