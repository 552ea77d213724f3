/**
 * What each Matrix account's ingress keeps across restarts (packages/adapters matrix/ingress.ts): its /sync position
 * (`next_batch`), so a restarted gateway continues after the last event it took and never answers an old one again,
 * and the encrypted rooms it has refused, so a restart does not post the refusal there once more.
 *
 * Keys, under the gateway's prefix: `<prefix>:matrix-sync:<bot user id>` → the token; `<prefix>:matrix-refused:<bot
 * user id>` → a set of room ids. No expiry: a gateway stopped for a week still continues where it was (the homeserver
 * answers an expired position with what it still has), and a refused room stays refused.
 */
import type { Redis } from 'ioredis';
import type { MatrixIngressMemory } from '@herald/adapters/matrix';

export class RedisMatrixMemory implements MatrixIngressMemory {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly userId: string,
  ) {}

  get syncKey(): string {
    return `${this.prefix}:matrix-sync:${this.userId}`;
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
}
