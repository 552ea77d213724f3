/**
 * Which albums the bot was addressed in, so the rest of an album follows its first part.
 *
 * Telegram sends each photo (video, document) of an album as its own message carrying the same media_group_id,
 * back to back; in a group only one part (usually the first) carries the caption that mentions the bot. Every part
 * is handed over at once (the gateway's worker answers an album as one turn); this memory lets the later parts of
 * an addressed album through the mention check. Telegram delivers one chat's updates in order, one at a time (to
 * the webhook as to getUpdates), so the first part is always seen before the others.
 */
import { RecentIds } from '../shared/recent-ids.js';

/** Albums remembered at once; far more than can be arriving at the same time. */
const ADDRESSED_ALBUMS_REMEMBERED = 1_000;

export class AddressedAlbums {
  private readonly albums = new RecentIds<string>(ADDRESSED_ALBUMS_REMEMBERED);

  /** A part of this album was taken: its other parts belong with it. */
  taken(conversationId: string, mediaGroupId: string): void {
    this.albums.add(`${conversationId}|${mediaGroupId}`);
  }

  /** Whether a part of this album was taken already. */
  has(conversationId: string, mediaGroupId: string): boolean {
    return this.albums.has(`${conversationId}|${mediaGroupId}`);
  }
}
