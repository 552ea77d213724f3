/**
 * The files one turn's reply will carry, collected while the turn runs: what send_file queues (this is its
 * FileSink) and the pictures taken from the reply's text. Kept in memory until the reply is recorded, so the
 * count and total size are capped (limits.ts). A voice reply is added on top: the user asked for it with /voice.
 */
import { OutboundFileError, formatBytes, type FileSink, type NewTurnFile } from '@herald/agent-core';
import type { OutboundLimits } from './limits.js';

export class ReplyFiles implements FileSink {
  private readonly list: NewTurnFile[] = [];
  private bytes = 0;

  constructor(private readonly limits: OutboundLimits) {}

  get files(): readonly NewTurnFile[] {
    return this.list;
  }

  /** How many more files the reply may take. */
  get room(): number {
    return Math.max(0, this.limits.perTurn - this.list.filter((f) => f.kind !== 'voice').length);
  }

  add(file: NewTurnFile): void {
    if (this.room === 0) throw new OutboundFileError(`a reply may carry at most ${this.limits.perTurn} files, and this one has them already`);
    if (this.bytes + file.data.length > this.limits.replyBytes) {
      throw new OutboundFileError(
        `the files of one reply may add up to ${formatBytes(this.limits.replyBytes)}; this one would make ${formatBytes(this.bytes + file.data.length)}`,
      );
    }
    this.push(file);
  }

  /** The voice reply: not counted against the files the agent may send. */
  addVoice(file: NewTurnFile): void {
    this.push(file);
  }

  private push(file: NewTurnFile): void {
    this.list.push(file);
    this.bytes += file.data.length;
  }
}
