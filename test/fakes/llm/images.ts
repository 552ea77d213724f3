/**
 * Images in LLM requests, as both stand-ins see them: OpenAI `image_url` parts carrying a data URL, Anthropic
 * `image` blocks with a base64 source (in a user message, or inside a `tool_result`'s content). The checks are the ones the real APIs make before a model sees anything:
 * a supported format, bytes that really are that format (Anthropic compares the declared media type with the
 * bytes), and the per-image size limit. `imagesOf` reads the images of a recorded request for assertions.
 */
import { isRecord } from './server.js';
import type { RecordedRequest } from './types.js';

const SUPPORTED_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
/** Anthropic: "image exceeds 5 MB maximum". */
const ANTHROPIC_MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** OpenAI: 20 MB per image. */
const OPENAI_MAX_IMAGE_BYTES = 20 * 1024 * 1024;

export interface SeenImage {
  /** The message index in the request body and the role it was in. */
  messageIndex: number;
  role: string;
  mimeType: string;
  bytes: Buffer;
  /** Anthropic: the `tool_use_id` of the tool_result the image is in. */
  toolUseId?: string;
}

/** What an Anthropic tool_result's content list may hold. */
const TOOL_RESULT_BLOCK_TYPES = ['text', 'image', 'search_result', 'document'];

/** The image type the bytes are, by their magic number; undefined when none of the supported ones. */
export function sniffImageType(bytes: Buffer): string | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 6 && ['GIF87a', 'GIF89a'].includes(bytes.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (bytes.length >= 12 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

/** Every image in the request, in order, from either wire format. */
export function imagesOf(req: RecordedRequest): SeenImage[] {
  const messages = Array.isArray(req.body.messages) ? req.body.messages : [];
  const out: SeenImage[] = [];
  messages.forEach((m: unknown, messageIndex) => {
    if (!isRecord(m) || !Array.isArray(m.content)) return;
    for (const part of m.content) {
      const image = openAIImage(part) ?? anthropicImage(part);
      if (image) out.push({ messageIndex, role: String(m.role), ...image });
      if (isRecord(part) && part.type === 'tool_result' && Array.isArray(part.content)) {
        for (const inner of part.content) {
          const shown = anthropicImage(inner);
          if (shown) out.push({ messageIndex, role: String(m.role), ...shown, toolUseId: String(part.tool_use_id) });
        }
      }
    }
  });
  return out;
}

function openAIImage(part: unknown): { mimeType: string; bytes: Buffer } | undefined {
  if (!isRecord(part) || part.type !== 'image_url' || !isRecord(part.image_url) || typeof part.image_url.url !== 'string') return undefined;
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(part.image_url.url);
  return m ? { mimeType: m[1], bytes: Buffer.from(m[2], 'base64') } : { mimeType: '', bytes: Buffer.alloc(0) };
}

function anthropicImage(part: unknown): { mimeType: string; bytes: Buffer } | undefined {
  if (!isRecord(part) || part.type !== 'image' || !isRecord(part.source)) return undefined;
  return { mimeType: String(part.source.media_type ?? ''), bytes: Buffer.from(String(part.source.data ?? ''), 'base64') };
}

/** OpenAI's answer to a bad image part, or undefined when every image part is acceptable. */
export function openAIImageProblem(messages: unknown[]): { message: string; code: string } | undefined {
  for (const m of messages) {
    if (!isRecord(m) || !Array.isArray(m.content)) continue;
    for (const part of m.content) {
      if (!isRecord(part) || part.type !== 'image_url') continue;
      if (m.role !== 'user') return { message: `Invalid 'messages': image content is only supported for messages with role 'user'.`, code: 'invalid_value' };
      const url = isRecord(part.image_url) ? part.image_url.url : undefined;
      const data = typeof url === 'string' ? /^data:([^;,]+);base64,(.*)$/s.exec(url) : null;
      if (typeof url !== 'string' || (!data && !/^https?:\/\//.test(url))) {
        return {
          message:
            "Invalid 'image_url'. Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got an invalid value.",
          code: 'invalid_value',
        };
      }
      if (!data) continue;
      const bytes = Buffer.from(data[2], 'base64');
      if (bytes.length > OPENAI_MAX_IMAGE_BYTES) return { message: 'Image exceeds the 20 MB size limit.', code: 'image_too_large' };
      if (sniffImageType(bytes) === undefined) {
        return {
          message: "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
          code: 'invalid_image_format',
        };
      }
    }
  }
  return undefined;
}

/** Anthropic's answer to a bad image block, or undefined. */
export function anthropicImageProblem(messages: unknown[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isRecord(m) || !Array.isArray(m.content)) continue;
    for (let j = 0; j < m.content.length; j++) {
      const b: unknown = m.content[j];
      if (!isRecord(b)) continue;
      if (b.type === 'tool_result' && Array.isArray(b.content)) {
        // A tool result's content is a string or a list of these blocks; its images are checked like any other.
        for (let k = 0; k < b.content.length; k++) {
          const inner: unknown = b.content[k];
          const at = `messages.${i}.content.${j}.tool_result.content.${k}`;
          const type = isRecord(inner) ? String(inner.type) : typeof inner;
          if (!TOOL_RESULT_BLOCK_TYPES.includes(type))
            return `${at}: Input tag '${type}' found using 'type' does not match any of the expected tags: 'text', 'image', 'search_result', 'document'`;
          if (type === 'image') {
            const problem = anthropicImageBlockProblem(inner as Record<string, unknown>, `${at}.image.source`);
            if (problem) return problem;
          }
        }
      }
      if (b.type !== 'image') continue;
      if (m.role !== 'user') return `messages.${i}.content.${j}: image blocks are only allowed in user messages`;
      const problem = anthropicImageBlockProblem(b, `messages.${i}.content.${j}.image.source`);
      if (problem) return problem;
    }
  }
  return undefined;
}

function anthropicImageBlockProblem(b: Record<string, unknown>, at: string): string | undefined {
  const source = b.source;
  if (!isRecord(source) || source.type !== 'base64') return `${at}: Input tag does not match any of the expected tags: 'base64', 'url', 'file'`;
  const type = String(source.media_type);
  if (!(SUPPORTED_IMAGE_TYPES as readonly string[]).includes(type)) {
    return `${at}.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
  }
  const bytes = Buffer.from(String(source.data ?? ''), 'base64');
  if (bytes.length > ANTHROPIC_MAX_IMAGE_BYTES) return `${at}.base64: image exceeds 5 MB maximum: ${bytes.length} bytes > ${ANTHROPIC_MAX_IMAGE_BYTES} bytes`;
  const actual = sniffImageType(bytes);
  if (actual === undefined) return `${at}.base64.data: The image was specified using the ${type} media type, but the image appears to be invalid.`;
  if (actual !== type) return `${at}.base64.data: Image does not match the provided media type ${type}`;
  return undefined;
}
