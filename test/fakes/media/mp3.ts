/**
 * MP3 as the OpenAI stand-in returns it for `response_format: mp3`: MPEG-1 Layer III frames (128 kbit/s,
 * 44.1 kHz, mono) whose side information is all zero, which decoders play as silence.
 */

/** Sync word, MPEG-1, Layer III, no CRC | 128 kbit/s, 44.1 kHz, no padding | mono. */
const FRAME_HEADER = Buffer.from([0xff, 0xfb, 0x90, 0xc0]);
/** 144 × 128000 / 44100, rounded down (no padding bit). */
const FRAME_BYTES = 417;
const FRAME_SEC = 1152 / 44_100;

export function mp3Silence(durationSec: number): Buffer {
  const frames = Math.max(1, Math.round(durationSec / FRAME_SEC));
  const frame = Buffer.alloc(FRAME_BYTES);
  FRAME_HEADER.copy(frame);
  return Buffer.concat(Array<Buffer>(frames).fill(frame));
}

/** True for bytes that start with an MPEG audio frame or an ID3 tag. */
export function isMp3(data: Buffer): boolean {
  if (data.subarray(0, 3).toString('latin1') === 'ID3') return true;
  return data.length >= 2 && data[0] === 0xff && (data[1] & 0xe0) === 0xe0;
}
