/**
 * WhatsApp's 24-hour customer-service window, kept in Redis so any worker's egress knows it: for each business
 * number and user, their last message (when, and its id: typing indicators and read receipts are sent on it).
 * The ingress writes it as it takes a message; egress reads it before a reply (packages/adapters whatsapp/egress.ts).
 *
 * Key, under the gateway's prefix: `<prefix>:wa-window:<phone_number_id>:<wa_id>` → JSON `{ at, messageId }`, kept
 * SERVICE_WINDOW_MEMORY_MS (well past the 24 hours, so a closed window is known as closed for a week; after that it
 * is unknown again and Graph's 131047 answer decides).
 */
import type { Redis } from 'ioredis';
import type { LastInbound, ServiceWindowMemory } from '@herald/adapters/whatsapp';

const SERVICE_WINDOW_MEMORY_MS = 7 * 24 * 60 * 60_000;

export class RedisServiceWindow implements ServiceWindowMemory {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  key(phoneNumberId: string, waId: string): string {
    return `${this.prefix}:wa-window:${phoneNumberId}:${waId}`;
  }

  async touch(phoneNumberId: string, waId: string, last: LastInbound): Promise<void> {
    const known = await this.last(phoneNumberId, waId);
    // A redelivered older message never moves the window back.
    if (known !== null && known.at > last.at) return;
    await this.redis.set(this.key(phoneNumberId, waId), JSON.stringify({ at: last.at, messageId: last.messageId }), 'PX', SERVICE_WINDOW_MEMORY_MS);
  }

  async last(phoneNumberId: string, waId: string): Promise<LastInbound | null> {
    const raw = await this.redis.get(this.key(phoneNumberId, waId));
    if (raw === null) return null;
    try {
      const v = JSON.parse(raw) as Partial<LastInbound>;
      return typeof v.at === 'number' && typeof v.messageId === 'string' ? { at: v.at, messageId: v.messageId } : null;
    } catch {
      return null;
    }
  }
}
