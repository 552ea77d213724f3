/**
 * Where each Matrix account's ingress keeps its /sync position (`next_batch`), so a restarted gateway continues
 * after the last event it took and never answers an old one again (packages/adapters matrix/ingress.ts).
 *
 * Key, under the gateway's prefix: `<prefix>:matrix-sync:<bot user id>` → the token. No expiry: a gateway stopped
 * for a week still continues where it was (the homeserver answers an expired position with what it still has).
 */
import type { Redis } from 'ioredis';
import type { SyncTokenStore } from '@herald/adapters/matrix';

export class RedisSyncToken implements SyncTokenStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly userId: string,
  ) {}

  get key(): string {
    return `${this.prefix}:matrix-sync:${this.userId}`;
  }

  load(): Promise<string | null> {
    return this.redis.get(this.key);
  }

  async save(token: string): Promise<void> {
    await this.redis.set(this.key, token);
  }
}
