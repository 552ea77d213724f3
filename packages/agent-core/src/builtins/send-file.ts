/**
 * The `send_file` tool: the agent sends the user a file — a picture or document from a URL (downloaded through
 * web_fetch's guarded client), or a file it wrote itself (text, or base64 bytes). The file is checked (size,
 * allowed types, its real type read from its bytes) and handed to the `FileSink` in toolContext; the gateway
 * records it with the turn's reply and uploads it through the platform after the reply's text.
 */
import type { Tool } from '../tools/registry.js';
import { ToolInputError, filesOf, optionalStringArg } from './context.js';
import { DEFAULT_OUTBOUND_FILE_LIMITS, formatBytes, outboundFile, outboundFileFromUrl, type FileHints, type OutboundFileLimits } from './outbound-file.js';
import type { WebFetchOptions } from './web-fetch.js';

export const SEND_FILE_TOOL = 'send_file';
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export interface SendFileToolOptions {
  limits?: OutboundFileLimits;
  /** How URLs are fetched (HERALD_FETCH_ALLOW_PRIVATE); the same rules as web_fetch. */
  fetch?: WebFetchOptions;
}

function base64Arg(raw: string): Buffer {
  const compact = raw.replace(/\s+/g, '').replace(/^data:[^,]*;base64,/, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1) throw new ToolInputError('"content_base64" is not valid base64');
  return Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
}

export function createSendFileTool(opts: SendFileToolOptions = {}): Tool {
  const limits = opts.limits ?? DEFAULT_OUTBOUND_FILE_LIMITS;
  return {
    name: SEND_FILE_TOOL,
    description:
      'Send the user a file in this chat: a picture or document from a public URL, or a file you write (text such as ' +
      'CSV, Markdown or code in "content", binary data in "content_base64"). Pictures are shown as pictures. The file ' +
      `goes out right after your reply's text. At most ${formatBytes(limits.maxBytes)}; allowed types: ${limits.types.join(', ')}.`,
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'http or https URL of the file to send' },
        content: { type: 'string', description: 'Text content of a file you wrote (give "filename" too)' },
        content_base64: { type: 'string', description: 'Binary content, base64-encoded (give "filename" too)' },
        filename: { type: 'string', description: 'Name the user sees, with extension, e.g. report.csv' },
        mime_type: { type: 'string', description: 'Type of the content, e.g. text/csv (detected when left out)' },
        caption: { type: 'string', description: 'Short text shown with the file' },
        as_document: { type: 'boolean', description: 'Send a picture as a file (original quality) instead of a picture' },
      },
    },
    readOnly: false,
    async execute(args, ctx) {
      const sink = filesOf(ctx);
      if (!sink) throw new Error('this conversation cannot receive files');
      const url = optionalStringArg(args, 'url');
      const text = typeof args.content === 'string' && args.content !== '' ? args.content : undefined;
      const b64 = optionalStringArg(args, 'content_base64');
      const given = [url, text, b64].filter((v) => v !== undefined).length;
      if (given !== 1) throw new ToolInputError('give exactly one of "url", "content" or "content_base64"');
      const hints: FileHints = {
        name: optionalStringArg(args, 'filename'),
        mimeType: optionalStringArg(args, 'mime_type'),
        caption: optionalStringArg(args, 'caption'),
        asDocument: args.as_document === true,
      };
      if (url === undefined && hints.name === undefined) throw new ToolInputError('"filename" is required with "content" or "content_base64"');
      const file =
        url !== undefined
          ? await outboundFileFromUrl(url, hints, limits, opts.fetch ?? {}, ctx.signal)
          : outboundFile(text !== undefined ? Buffer.from(text, 'utf8') : base64Arg(b64 as string), hints, limits);
      sink.add(file);
      const shown = file.kind === 'image' ? 'picture' : file.kind === 'audio' ? 'audio file' : 'file';
      return `Queued ${shown} "${file.name}" (${file.mimeType}, ${formatBytes(file.data.length)}): it will be sent right after your reply's text. Do not paste its content into the reply.`;
    },
  };
}
