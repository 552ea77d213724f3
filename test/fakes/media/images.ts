/**
 * Pictures for tests and the stand-ins: a real PNG of any size (optionally padded with an ancillary chunk to a
 * given byte size, so size limits can be hit without megapixels), and reading a picture's type and dimensions the
 * way a platform checks an upload.
 */
import { crc32, deflateSync } from 'node:zlib';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A width × height RGB PNG of one colour; `padTo` adds a private chunk until the file has that many bytes. */
export function png(width: number, height: number, opts: { rgb?: [number, number, number]; padTo?: number } = {}): Buffer {
  const [r, g, b] = opts.rgb ?? [40, 120, 200];
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // colour type: RGB
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set([r, g, b], 1 + x * 3);
  const raw = Buffer.concat(Array<Buffer>(height).fill(row));
  const parts = [PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw))];
  const end = chunk('IEND', Buffer.alloc(0));
  const size = parts.reduce((n, p) => n + p.length, 0) + end.length;
  // 12 bytes of chunk framing around the padding.
  if (opts.padTo !== undefined && opts.padTo > size + 12) parts.push(chunk('hrLd', Buffer.alloc(opts.padTo - size - 12, 0x2e)));
  return Buffer.concat([...parts, end]);
}

export interface PictureInfo {
  type: 'png' | 'jpeg' | 'gif' | 'webp';
  width: number;
  height: number;
}

/** The picture's type and size, or null when the bytes are no picture a platform would render. */
export function pictureInfo(data: Buffer): PictureInfo | null {
  if (data.subarray(0, 8).equals(PNG_SIGNATURE) && data.length >= 24) {
    return { type: 'png', width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
  }
  if (
    data
      .subarray(0, 6)
      .toString('latin1')
      .match(/^GIF8[79]a$/)
  ) {
    return { type: 'gif', width: data.readUInt16LE(6), height: data.readUInt16LE(8) };
  }
  if (data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') {
    return { type: 'webp', width: 0, height: 0 };
  }
  if (data[0] === 0xff && data[1] === 0xd8) return jpegInfo(data);
  return null;
}

/** Walks JPEG markers to the first start-of-frame, which holds the dimensions. */
function jpegInfo(data: Buffer): PictureInfo | null {
  let offset = 2;
  while (offset + 9 < data.length) {
    if (data[offset] !== 0xff) return null;
    const marker = data[offset + 1];
    const length = data.readUInt16BE(offset + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { type: 'jpeg', height: data.readUInt16BE(offset + 5), width: data.readUInt16BE(offset + 7) };
    }
    offset += 2 + length;
  }
  return null;
}
