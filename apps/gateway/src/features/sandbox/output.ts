/** A stream's bytes up to a cap: what a run printed, cut where the cap is. */
export class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  /** Bytes offered past the cap. */
  overflow = 0;

  constructor(private readonly cap: number) {}

  /** Keeps what fits; false once anything had to be dropped. */
  push(chunk: Buffer): boolean {
    const room = this.cap - this.size;
    if (chunk.length <= room) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return true;
    }
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.size = this.cap;
    this.overflow += chunk.length - Math.max(room, 0);
    return false;
  }

  get capped(): boolean {
    return this.overflow > 0;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }

  text(): string {
    return this.bytes().toString('utf8');
  }
}
