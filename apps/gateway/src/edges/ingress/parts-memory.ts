/**
 * What Telegram ingress remembers of the parts it took (an album, a split long text: packages/adapters
 * telegram/parts.ts), kept in Redis so that every ingress process sees it: behind a balancer, the parts of one message
 * reach different webhook processes, and a later part must still be known as one (tagged with the same `partOf`, and
 * in a group taken although only the first part mentioned the bot). The worker then answers the parts as one turn
 * (queue/parts.ts).
 *
 * Keys, under the gateway's prefix and the bot account (two bots may share a chat):
 *   `<prefix>:parts:<account>:album:<conversation>|<album id>`  "1"   a part of the album was taken
 *   `<prefix>:parts:<account>:split:<conversation>|<user>`      JSON  the split text a next message may continue
 * Each lives PARTS_MEMORY_TTL_MS. A split's key is read and deleted in one step (GETDEL) when the next message of that
 * user there is taken, so two processes can never both continue one split; Telegram posts one chat's next update only
 * after the last one was answered, so nothing else about one chat's parts runs at once.
 */
import type { Redis } from 'ioredis';
import type { OpenSplit, PartsMemory } from '@herald/adapters/telegram';
import { isRecord } from '@herald/agent-core';

/**
 * How long a taken album or an open split is remembered. The parts of one message are sent back to back; this also
 * covers a backlog Telegram delivers late (after an outage), dates and message ids still deciding what continues.
 */
export const PARTS_MEMORY_TTL_MS = 60 * 60_000;

export class RedisPartsMemory implements PartsMemory {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** The bot account the ingress serves. */
    private readonly account: string,
    private readonly ttlMs: number = PARTS_MEMORY_TTL_MS,
  ) {}

  key(kind: 'album' | 'split', id: string): string {
    return `${this.prefix}:parts:${this.account}:${kind}:${id}`;
  }

  async rememberAlbum(key: string): Promise<void> {
    await this.redis.set(this.key('album', key), '1', 'PX', this.ttlMs);
  }

  async hasAlbum(key: string): Promise<boolean> {
    return (await this.redis.exists(this.key('album', key))) === 1;
  }

  async openSplit(key: string): Promise<OpenSplit | undefined> {
    return splitOf(await this.redis.get(this.key('split', key)));
  }

  async takeSplit(key: string): Promise<OpenSplit | undefined> {
    return splitOf(await this.redis.getdel(this.key('split', key)));
  }

  async rememberSplit(key: string, split: OpenSplit): Promise<void> {
    await this.redis.set(this.key('split', key), JSON.stringify(split), 'PX', this.ttlMs);
  }
}

/** A stored split, or nothing when absent or not one (written by another version): a message of its own then. */
function splitOf(raw: string | null): OpenSplit | undefined {
  if (raw === null) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    if (!isRecord(v)) return undefined;
    const { id, messageId, date } = v;
    return typeof id === 'string' && typeof messageId === 'number' && typeof date === 'number' ? { id, messageId, date } : undefined;
  } catch {
    return undefined;
  }
}
