/**
 * A real MCP server, built with the same SDK the gateway uses (its low-level `Server`, so a test can hand out
 * schemas exactly as a careless server would). Run over stdio (stdio-main.ts) or Streamable HTTP (http-main.ts).
 *
 * Its tools exercise what the gateway must handle: plain text, images (in `gallery` one mislabelled, one large, one
 * an SVG) and resources, an error result, a result too big for the model, a schema the providers would refuse as it
 * is, a call that never ends, a server that exits or freezes in the middle of a call, and a tool list that changes at
 * run time (`grow` adds `extra` and says so).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';

/** A 1×1 PNG. */
export const PIXEL_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
export const BIG_RESULT_CHARS = 150_000;
/** PNG bytes (the signature, then padding) of this size: a picture over a small per-image cap. */
export const LARGE_PNG_BYTES = 2_000;
export const LARGE_PNG_BASE64 = Buffer.concat([Buffer.from(PIXEL_PNG_BASE64, 'base64'), Buffer.alloc(LARGE_PNG_BYTES - 70)]).toString('base64');
const SVG_BASE64 = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64');

const noArgs = { type: 'object', properties: {} } as const;

const BASE_TOOLS: Tool[] = [
  {
    name: 'echo',
    description: 'Echoes the text back',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    annotations: { readOnlyHint: true },
  },
  { name: 'whoami', description: 'Which environment the server runs in', inputSchema: noArgs },
  { name: 'picture', description: 'A picture with a caption', inputSchema: noArgs },
  { name: 'gallery', description: 'Several pictures: one labelled with the wrong type, a larger one and a drawing', inputSchema: noArgs },
  { name: 'document', description: 'A text document, a binary one and a link', inputSchema: noArgs },
  { name: 'fail', description: 'Always reports an error', inputSchema: noArgs },
  { name: 'big', description: `Returns ${BIG_RESULT_CHARS} characters`, inputSchema: noArgs },
  { name: 'crash', description: 'The server exits in the middle of the call', inputSchema: noArgs },
  { name: 'freeze', description: 'The server stops answering anything', inputSchema: noArgs },
  { name: 'hang', description: 'Never answers (until cancelled)', inputSchema: noArgs },
  { name: 'grow', description: 'Adds the tool "extra"', inputSchema: noArgs },
  {
    // A dotted name and a schema OpenAI and Anthropic refuse as they are: top-level anyOf, an array without items.
    name: 'lookup.v2',
    description: 'Looks something up by id or tags',
    inputSchema: {
      type: 'object',
      $schema: 'http://json-schema.org/draft-07/schema#',
      properties: { id: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, tags: { type: 'array' } },
      anyOf: [{ required: ['id'] }, { required: ['tags'] }],
    } as Tool['inputSchema'],
  },
  { name: 'secret_admin', description: 'A tool the gateway config denies', inputSchema: noArgs },
  {
    // Declares itself destructive (MCP tool annotations): the gateway asks a person before each call by default.
    name: 'delete_ticket',
    description: 'Deletes a ticket for good',
    inputSchema: { type: 'object', properties: { id: { type: 'integer' }, api_token: { type: 'string' } }, required: ['id'] },
    annotations: { destructiveHint: true, readOnlyHint: false },
  },
];
const EXTRA_TOOL: Tool = { name: 'extra', description: 'Only there after grow', inputSchema: noArgs };

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

/**
 * The tool list, shared by every session of one server process (an HTTP server has one per client): `grow` changes
 * it for all of them and tells each, as a real server with one tool list would.
 */
export class ToolList {
  readonly tools = [...BASE_TOOLS];
  readonly sessions = new Set<Server>();

  async grow(): Promise<void> {
    if (!this.tools.includes(EXTRA_TOOL)) this.tools.push(EXTRA_TOOL);
    await Promise.all([...this.sessions].map((s) => s.sendToolListChanged().catch(() => undefined)));
  }
}

export function buildTestServer(label: string, list = new ToolList()): Server {
  const server = new Server({ name: `herald-test-${label}`, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  const { tools } = list;
  list.sessions.add(server);
  server.onclose = () => void list.sessions.delete(server);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const args = req.params.arguments ?? {};
    switch (req.params.name) {
      case 'echo':
        return text(`${label} echo: ${String(args.text)}`);
      case 'whoami':
        return text(JSON.stringify({ label, greeting: process.env.TEST_GREETING ?? null, inheritedBotToken: process.env.TELEGRAM_BOT_TOKEN !== undefined }));
      case 'picture':
        return {
          content: [
            { type: 'text', text: 'a red dot' },
            { type: 'image', data: PIXEL_PNG_BASE64, mimeType: 'image/png' },
          ],
        };
      case 'gallery':
        return {
          content: [
            { type: 'text', text: 'the gallery' },
            { type: 'image', data: PIXEL_PNG_BASE64, mimeType: 'image/png' },
            { type: 'image', data: PIXEL_PNG_BASE64, mimeType: 'image/jpeg' },
            { type: 'image', data: LARGE_PNG_BASE64, mimeType: 'image/png' },
            { type: 'image', data: SVG_BASE64, mimeType: 'image/svg+xml' },
          ],
        };
      case 'document':
        return {
          content: [
            { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'Meeting at noon' } },
            { type: 'resource', resource: { uri: 'file:///logo.bin', mimeType: 'application/octet-stream', blob: PIXEL_PNG_BASE64 } },
            { type: 'resource_link', uri: 'file:///big.csv', name: 'big.csv', mimeType: 'text/csv', size: 2048 },
          ],
        };
      case 'fail':
        return {
          isError: true,
          content: [
            { type: 'text', text: 'the disk is full' },
            { type: 'image', data: PIXEL_PNG_BASE64, mimeType: 'image/png' },
          ],
        };
      case 'big':
        return text('x'.repeat(BIG_RESULT_CHARS));
      // biome-ignore lint/suspicious/noFallthroughSwitchClause: process.exit never returns
      case 'crash':
        process.stderr.write('crash tool: exiting in the middle of a call\n');
        process.exit(3);
      case 'freeze':
        // Blocks the event loop: not even a ping is answered.
        for (;;) {
          /* spin */
        }
      case 'hang':
        return new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve(text('cancelled')), { once: true }));
      case 'grow':
        await list.grow();
        return text('grown');
      case 'extra':
        if (!tools.includes(EXTRA_TOOL)) throw new Error('unknown tool extra');
        return text('extra tool ran');
      case 'lookup.v2':
        return text(`looked up ${JSON.stringify(args)}`);
      case 'secret_admin':
        return text('should never be called');
      case 'delete_ticket':
        return text(`${label} deleted ticket ${String(args.id)}`);
      default:
        throw new Error(`unknown tool ${req.params.name}`);
    }
  });
  return server;
}
