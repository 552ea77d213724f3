/**
 * What the ingress knows about each room, learnt from /sync and asked of the homeserver once when /sync has not
 * said: whether it is end-to-end encrypted (then refused, once per room), whether it is one to one (then no mention
 * is needed), and the latest buttons the bot offered in each conversation (a numbered reply presses one; kept in
 * the ingress memory, so they outlive the process).
 */
import type { Logger } from 'pino';
import { NotFoundError } from '../errors.js';
import { type MatrixClient, Method, seg } from './client.js';
import { MATRIX_ENCRYPTED_REFUSAL, type MatrixIngressMemory } from './config.js';
import { BUTTONS_FIELD } from './content.js';
import { MATRIX_OFFER_MAX_BUTTONS, offerData, remember } from './memory.js';
import { isRecord, wireNumber } from '../shared/wire-values.js';

export class RoomBook {
  private readonly encrypted = new Map<string, boolean>();
  private readonly members = new Map<string, number>();
  private readonly refused = new Map<string, true>();

  constructor(
    private readonly client: MatrixClient,
    private readonly logger: Logger,
    private readonly memory: Pick<MatrixIngressMemory, 'firstRefusal' | 'saveOffer' | 'loadOffer'>,
  ) {}

  /** Reads a room's state and timeline events of a /sync for what the book keeps. */
  learn(roomId: string, events: readonly unknown[], summary: unknown): void {
    const count = isRecord(summary) ? wireNumber(summary['m.joined_member_count']) : Number.NaN;
    if (Number.isSafeInteger(count) && count > 0) remember(this.members, roomId, count);
    for (const ev of events) {
      if (!isRecord(ev)) continue;
      if (ev.type === 'm.room.encryption' || ev.type === 'm.room.encrypted') remember(this.encrypted, roomId, true);
      // Someone joined or left: the count is asked for again (unless the summary just gave it).
      if (ev.type === 'm.room.member' && !Number.isSafeInteger(count)) this.members.delete(roomId);
    }
  }

  /** Whether the room is encrypted: from /sync, else its `m.room.encryption` state (404: not encrypted). */
  async isEncrypted(roomId: string): Promise<boolean> {
    const known = this.encrypted.get(roomId);
    if (known !== undefined) return known;
    let encrypted = true;
    try {
      await this.client.call('room encryption', Method.Get, `/rooms/${seg(roomId)}/state/m.room.encryption`);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      encrypted = false;
    }
    remember(this.encrypted, roomId, encrypted);
    return encrypted;
  }

  /** One to one: the bot and one other member. */
  async isDirect(roomId: string): Promise<boolean> {
    let count = this.members.get(roomId);
    if (count === undefined) {
      const res = await this.client.call<{ joined?: unknown }>('joined members', Method.Get, `/rooms/${seg(roomId)}/joined_members`);
      count = isRecord(res.joined) ? Object.keys(res.joined).length : 0;
      remember(this.members, roomId, count);
    }
    return count <= 2;
  }

  /**
   * The refusal in an encrypted room, once per room (remembered across restarts; should that memory be out of reach,
   * once per process): the message there and a log line.
   */
  async refuseEncrypted(roomId: string, send: (roomId: string, text: string) => Promise<unknown>): Promise<void> {
    if (this.refused.has(roomId)) return;
    remember(this.refused, roomId, true);
    if (!(await this.firstRefusalOf(roomId))) return;
    this.logger.warn({ roomId }, 'matrix: room is end-to-end encrypted; Herald does not support encrypted rooms; refused');
    try {
      await send(roomId, MATRIX_ENCRYPTED_REFUSAL);
    } catch (err) {
      this.logger.warn({ roomId, err: err instanceof Error ? err.message : String(err) }, 'matrix: could not post the encrypted-room refusal');
    }
  }

  private async firstRefusalOf(roomId: string): Promise<boolean> {
    try {
      return await this.memory.firstRefusal(roomId);
    } catch (err) {
      this.logger.warn(
        { roomId, err: err instanceof Error ? err.message : String(err) },
        'matrix: refused rooms not readable; refusing as if for the first time',
      );
      return true;
    }
  }

  /**
   * The bot's own message: if it carries buttons, they are the conversation's latest offer, kept in the memory so a
   * restarted or another ingress process reads it too. A failure to keep it fails the batch (taken again).
   */
  async noteOwn(conversationId: string, content: unknown): Promise<void> {
    if (!isRecord(content) || !Array.isArray(content[BUTTONS_FIELD])) return;
    const data = (content[BUTTONS_FIELD] as unknown[])
      .slice(0, MATRIX_OFFER_MAX_BUTTONS)
      .map((b) => (isRecord(b) && typeof b.label === 'string' ? b.data : undefined));
    const offer = offerData(data);
    if (offer) await this.memory.saveOffer(conversationId, offer);
  }

  /** A reply of just a number to the latest offer in the conversation: that button's data (the memory asked only then). */
  async pressOf(conversationId: string, text: string): Promise<string | undefined> {
    const m = /^\s*(\d{1,2})\s*\.?\s*$/.exec(text);
    if (!m) return undefined;
    const offer = await this.memory.loadOffer(conversationId);
    return offer?.[Number(m[1]) - 1];
  }
}
