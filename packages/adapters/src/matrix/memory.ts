/**
 * The Matrix ingress memory's shape rules, and the memory of one process, used when the gateway gives none (tests):
 * the same contract as the gateway's Redis one, forgotten on restart.
 */
import { BUTTON_DATA_MAX } from '../types.js';
import type { MatrixIngressMemory } from './config.js';

/** A numbered reply is one or two digits, so no button past the 99th can be pressed: an offer keeps at most 99. */
export const MATRIX_OFFER_MAX_BUTTONS = 99;
/**
 * Entries of one kind a process remembers at most (rooms in rooms.ts, offers and refused rooms here); the oldest are
 * forgotten (a room is then asked about again when it speaks).
 */
const MAX_ENTRIES = 10_000;

/**
 * An offer's button data as stored and read back: at most MATRIX_OFFER_MAX_BUTTONS strings of at most BUTTON_DATA_MAX
 * bytes. Anything else (another writer's data, a damaged value) is no offer rather than an error.
 */
export function offerData(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MATRIX_OFFER_MAX_BUTTONS) return undefined;
  return value.every((d) => typeof d === 'string' && Buffer.byteLength(d) <= BUTTON_DATA_MAX) ? (value as string[]) : undefined;
}

export class ProcessMatrixMemory implements MatrixIngressMemory {
  private syncToken: string | null = null;
  private readonly refused = new Map<string, true>();
  private readonly offers = new Map<string, string[]>();

  async loadSyncToken(): Promise<string | null> {
    return this.syncToken;
  }

  async saveSyncToken(token: string): Promise<void> {
    this.syncToken = token;
  }

  async firstRefusal(roomId: string): Promise<boolean> {
    const first = !this.refused.has(roomId);
    remember(this.refused, roomId, true);
    return first;
  }

  async saveOffer(conversationId: string, data: readonly string[]): Promise<void> {
    remember(this.offers, conversationId, [...data]);
  }

  async loadOffer(conversationId: string): Promise<string[] | undefined> {
    return this.offers.get(conversationId);
  }
}

/** Sets the key as the newest, forgetting the oldest past MAX_ENTRIES (a Map iterates in insertion order). */
export function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as string);
}
