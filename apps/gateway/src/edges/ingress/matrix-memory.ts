/**
 * What each Matrix account's ingress keeps across restarts (packages/adapters matrix/ingress.ts): its /sync position
 * (`next_batch`), so a restarted gateway continues after the last event it took and never answers an old one again;
 * the encrypted rooms it has refused, so a restart does not post the refusal there once more; and the latest buttons
 * the bot offered in each conversation, so a numbered reply is a press after a restart (whose /sync does not show the
 * offer again) and on any ingress process.
 *
 * Keys, under the gateway's prefix: `<prefix>:matrix-sync:<bot user id>` → the token; `<prefix>:matrix-refused:<bot
 * user id>` → a set of room ids; `<prefix>:matrix-offer:<bot user id>:<conversation id>` → the offer's button data (a
 * JSON array). No expiry for the first two: a gateway stopped for a week still continues where it was (the homeserver
 * answers an expired position with what it still has), and a refused room stays refused. Offers expire (below).
 */
import { BUTTON_DATA_MAX } from '@herald/adapters';
import { MATRIX_OFFER_MAX_BUTTONS, type MatrixIngressMemory, offerData } from '@herald/adapters/matrix';
import type { Redis } from 'ioredis';

/**
 * How long an offer is kept: 7 days, the longest a Herald button stays pressable (the review's notes,
 * turn/stages/review.ts; pickers, confirmations and clarify choices last 24 hours). Past it a press could only be
 * stale, so a lone number is better read as an ordinary message; and a conversation's key does not outlive it.
 */
export const MATRIX_OFFER_TTL_MS = 7 * 24 * 60 * 60_000;
/**
 * The longest stored offer read: the most buttons, each with the longest data escaped in full in JSON (`\u0001`), with
 * quotes and commas. A longer value was not written by this memory and is no offer (not parsed).
 */
const MAX_OFFER_CHARS = MATRIX_OFFER_MAX_BUTTONS * (BUTTON_DATA_MAX * 6 + 3) + 2;

export class RedisMatrixMemory implements MatrixIngressMemory {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly userId: string,
  ) {}

  get syncKey(): string {
    return `${this.prefix}:matrix-sync:${this.userId}`;
  }

  offerKey(conversationId: string): string {
    return `${this.prefix}:matrix-offer:${this.userId}:${conversationId}`;
  }

  loadSyncToken(): Promise<string | null> {
    return this.redis.get(this.syncKey);
  }

  async saveSyncToken(token: string): Promise<void> {
    await this.redis.set(this.syncKey, token);
  }

  async firstRefusal(roomId: string): Promise<boolean> {
    return (await this.redis.sadd(`${this.prefix}:matrix-refused:${this.userId}`, roomId)) === 1;
  }

  async saveOffer(conversationId: string, data: readonly string[]): Promise<void> {
    const offer = offerData(data);
    if (offer) await this.redis.set(this.offerKey(conversationId), JSON.stringify(offer), 'PX', MATRIX_OFFER_TTL_MS);
  }

  async loadOffer(conversationId: string): Promise<string[] | undefined> {
    const raw = await this.redis.get(this.offerKey(conversationId));
    if (raw === null || raw.length > MAX_OFFER_CHARS) return undefined;
    try {
      return offerData(JSON.parse(raw));
    } catch {
      return undefined; // Not JSON: not written by this memory.
    }
  }
}
