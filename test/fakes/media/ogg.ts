/**
 * Ogg/Opus as the stand-ins need it: the OpenAI stand-in answers /v1/audio/speech (`opus`) with a real Ogg Opus
 * stream (RFC 7845: an OpusHead page, an OpusTags page, then audio pages of 20 ms silent CELT frames, every page
 * with its CRC), and the Telegram stand-in reads one back to check a voice note and tell its duration, as
 * Telegram does. No audio library: silence needs none.
 */

const OGG_CAPTURE = 'OggS';
/** Opus granule positions count 48 kHz samples whatever the input rate. */
const OPUS_RATE = 48_000;
/** libopus' usual pre-skip (6.5 ms), counted in the granule positions. */
const PRE_SKIP = 312;
const FRAME_SAMPLES = 960; // 20 ms
/** TOC 0xF8 (CELT, fullband, 20 ms, mono, one frame) + the 2-byte frame libopus emits for digital silence. */
const SILENT_PACKET = Buffer.from([0xf8, 0xff, 0xfe]);
const PACKETS_PER_PAGE = 50;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** Ogg's CRC-32: polynomial 0x04c11db7, not reflected, initial value 0. */
function oggCrc(page: Buffer): number {
  let crc = 0;
  for (const byte of page) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]) >>> 0;
  return crc;
}

function page(packets: Buffer[], opts: { serial: number; seq: number; granule: number; flags: number }): Buffer {
  const lacing: number[] = [];
  for (const p of packets) {
    for (let n = p.length; ; n -= 255) {
      lacing.push(Math.min(n, 255));
      if (n < 255) break;
    }
  }
  const header = Buffer.alloc(27);
  header.write(OGG_CAPTURE, 0, 'latin1');
  header.writeUInt8(0, 4);
  header.writeUInt8(opts.flags, 5);
  header.writeBigInt64LE(BigInt(opts.granule), 6);
  header.writeUInt32LE(opts.serial, 14);
  header.writeUInt32LE(opts.seq, 18);
  header.writeUInt8(lacing.length, 26);
  const out = Buffer.concat([header, Buffer.from(lacing), ...packets]);
  out.writeUInt32LE(oggCrc(out), 22);
  return out;
}

/** An Ogg Opus stream of `durationSec` seconds of silence, mono. */
export function oggOpusSilence(durationSec: number, vendor = 'herald stand-in'): Buffer {
  const serial = 0x4845524c;
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head.writeUInt8(1, 8); // version
  head.writeUInt8(1, 9); // channels
  head.writeUInt16LE(PRE_SKIP, 10);
  head.writeUInt32LE(24_000, 12); // the input rate, informational
  head.writeInt16LE(0, 16); // output gain
  head.writeUInt8(0, 18); // mapping family
  const vendorBytes = Buffer.from(vendor, 'utf8');
  const tags = Buffer.alloc(8 + 4 + vendorBytes.length + 4);
  tags.write('OpusTags', 0, 'latin1');
  tags.writeUInt32LE(vendorBytes.length, 8);
  vendorBytes.copy(tags, 12);
  tags.writeUInt32LE(0, 12 + vendorBytes.length);

  const pages = [page([head], { serial, seq: 0, granule: 0, flags: 0x02 }), page([tags], { serial, seq: 1, granule: 0, flags: 0 })];
  const total = Math.max(1, Math.round((durationSec * OPUS_RATE) / FRAME_SAMPLES));
  for (let done = 0, seq = 2; done < total; seq++) {
    const n = Math.min(PACKETS_PER_PAGE, total - done);
    done += n;
    pages.push(page(Array<Buffer>(n).fill(SILENT_PACKET), { serial, seq, granule: PRE_SKIP + done * FRAME_SAMPLES, flags: done === total ? 0x04 : 0 }));
  }
  return Buffer.concat(pages);
}

export interface OggInfo {
  /** The first packet is an OpusHead: an Ogg Opus stream. */
  opus: boolean;
  durationSec: number;
  /** Every page's CRC matched. */
  crcOk: boolean;
}

/** Reads an Ogg stream's pages; null when the bytes are not Ogg at all. */
export function readOgg(data: Buffer): OggInfo | null {
  if (data.subarray(0, 4).toString('latin1') !== OGG_CAPTURE) return null;
  let offset = 0;
  let opus = false;
  let preSkip = 0;
  let lastGranule = 0n;
  let crcOk = true;
  for (let first = true; offset + 27 <= data.length; first = false) {
    if (data.subarray(offset, offset + 4).toString('latin1') !== OGG_CAPTURE) return { opus, durationSec: 0, crcOk: false };
    const segments = data.readUInt8(offset + 26);
    const lacing = data.subarray(offset + 27, offset + 27 + segments);
    const size = 27 + segments + lacing.reduce((a, b) => a + b, 0);
    const whole = Buffer.from(data.subarray(offset, offset + size));
    const stated = whole.readUInt32LE(22);
    whole.writeUInt32LE(0, 22);
    if (oggCrc(whole) !== stated) crcOk = false;
    const body = whole.subarray(27 + segments);
    if (first && body.subarray(0, 8).toString('latin1') === 'OpusHead') {
      opus = true;
      preSkip = body.readUInt16LE(10);
    }
    const granule = whole.readBigInt64LE(6);
    if (granule > 0n) lastGranule = granule;
    offset += size;
  }
  const samples = Number(lastGranule) - preSkip;
  return { opus, durationSec: opus ? Math.max(0, samples) / OPUS_RATE : 0, crcOk };
}
