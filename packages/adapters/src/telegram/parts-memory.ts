/**
 * What Telegram ingress remembers of the parts it took (parts.ts), behind one interface: in this process by default,
 * in Redis when the gateway provides it (apps/gateway edges/ingress/parts-memory.ts).
 */
import { RecentIds } from '../shared/recent-ids.js';

/** Albums and open splits remembered at once (in one process); far more than can be arriving at the same time. */
const PARTS_REMEMBERED = 1_000;

/** A taken text that a next part may still follow. */
export interface OpenSplit {
  id: string;
  messageId: number;
  /** Unix seconds, as Telegram dates messages. */
  date: number;
}

/**
 * What ingress remembers of the parts it took: the albums, and the split texts a next message may continue. In this
 * process by default; the gateway keeps it in Redis, so that parts reaching different ingress processes (webhooks
 * behind a balancer) are still seen as one message. Keys are `<conversation>|<album id>` and `<conversation>|<user>`.
 */
export interface PartsMemory {
  /** Remembers that a part of this album was taken. */
  rememberAlbum(key: string): Promise<void>;
  /** Whether a part of this album was taken. */
  hasAlbum(key: string): Promise<boolean>;
  /** The split a next message of this user here may continue (left as it is). */
  openSplit(key: string): Promise<OpenSplit | undefined>;
  /** The same, forgotten in the same step: whatever the next message is, nothing else continues that split. */
  takeSplit(key: string): Promise<OpenSplit | undefined>;
  rememberSplit(key: string, split: OpenSplit): Promise<void>;
}

/** PartsMemory in this process's memory: enough for one ingress process (polling, or a single webhook). */
export class LocalPartsMemory implements PartsMemory {
  private readonly albums = new RecentIds<string>(PARTS_REMEMBERED);
  /** Insertion order is age, so the first key is the oldest. */
  private readonly open = new Map<string, OpenSplit>();

  async rememberAlbum(key: string): Promise<void> {
    this.albums.add(key);
  }

  async hasAlbum(key: string): Promise<boolean> {
    return this.albums.has(key);
  }

  async openSplit(key: string): Promise<OpenSplit | undefined> {
    return this.open.get(key);
  }

  async takeSplit(key: string): Promise<OpenSplit | undefined> {
    const open = this.open.get(key);
    this.open.delete(key);
    return open;
  }

  async rememberSplit(key: string, split: OpenSplit): Promise<void> {
    this.open.set(key, split);
    if (this.open.size > PARTS_REMEMBERED) {
      const oldest = this.open.keys().next();
      if (!oldest.done) this.open.delete(oldest.value);
    }
  }
}
