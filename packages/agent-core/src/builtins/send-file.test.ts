import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { png } from '../../../../test/fakes/media/images.js';
import type { NewTurnFile } from '../store/turn-files.js';
import { BlockedAddressError } from './address-guard.js';
import type { FileSink } from './context.js';
import type { OutboundFileLimits } from './outbound-file.js';
import { createSendFileTool } from './send-file.js';

const PICTURE = png(30, 20);
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/pics/sunset.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PICTURE);
    else if (req.url === '/labelled-wrong') res.writeHead(200, { 'content-type': 'text/plain' }).end(PICTURE);
    else if (req.url === '/big.bin')
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(5_000, 0x20)]));
    else if (req.url === '/setup.exe')
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.concat([Buffer.from('MZ\x90\x00'), Buffer.alloc(200)]));
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const LIMITS: OutboundFileLimits = { maxBytes: 4_000, types: ['image/*', 'text/*', 'application/pdf'] };

function sink(room = 10): FileSink & { files: NewTurnFile[] } {
  const files: NewTurnFile[] = [];
  return {
    files,
    add(file) {
      if (files.length >= room) throw new Error(`at most ${room} files per reply`);
      files.push(file);
    },
  };
}

function run(args: Record<string, unknown>, files = sink(), allowPrivate = true) {
  const tool = createSendFileTool({ limits: LIMITS, fetch: { allowPrivate } });
  return { files, result: tool.execute(args, { signal: new AbortController().signal, files }) };
}

describe('send_file', () => {
  it('sends a picture from a URL as a picture, named after the URL, its type read from the bytes', async () => {
    const { files, result } = run({ url: `${base}/pics/sunset.png`, caption: 'Sunset' });
    expect(await result).toBe(
      'Queued picture "sunset.png" (image/png, 131 B): it will be sent right after your reply\'s text. Do not paste its content into the reply.'.replace(
        '131 B',
        `${PICTURE.length} B`,
      ),
    );
    expect(files.files).toEqual([{ kind: 'image', name: 'sunset.png', mimeType: 'image/png', data: PICTURE, caption: 'Sunset' }]);
  });

  it('believes the bytes, not the label: a PNG served as text is a picture; "as_document" keeps it a file', async () => {
    const first = run({ url: `${base}/labelled-wrong` });
    await first.result;
    expect(first.files.files[0]).toMatchObject({ kind: 'image', mimeType: 'image/png', name: 'labelled-wrong.png' });
    const second = run({ url: `${base}/pics/sunset.png`, as_document: true });
    await second.result;
    expect(second.files.files[0].kind).toBe('file');
  });

  it('sends a file the agent wrote: text with its name, or base64 bytes', async () => {
    const csv = run({ content: 'a,b\n1,2\n', filename: 'report.csv' });
    await csv.result;
    expect(csv.files.files[0]).toMatchObject({ kind: 'file', name: 'report.csv', mimeType: 'text/csv' });
    expect(csv.files.files[0].data.toString()).toBe('a,b\n1,2\n');
    const b64 = run({ content_base64: `data:image/png;base64,${PICTURE.toString('base64')}`, filename: 'chart' });
    await b64.result;
    expect(b64.files.files[0]).toMatchObject({ kind: 'image', name: 'chart.png', mimeType: 'image/png' });
    expect(b64.files.files[0].data.equals(PICTURE)).toBe(true);
  });

  it('refuses, saying why: too large, a type not allowed, a 404, a private address, bad arguments, a full reply', async () => {
    await expect(run({ url: `${base}/big.bin` }).result).rejects.toThrow(/larger than 3\.9 KB/);
    await expect(run({ content: 'x'.repeat(5_000), filename: 'big.txt' }).result).rejects.toThrow(
      /the file is 4\.9 KB; files sent to the chat may be at most 3\.9 KB/,
    );
    await expect(run({ url: `${base}/setup.exe` }).result).rejects.toThrow(
      /files of type application\/octet-stream may not be sent \(allowed: image\/\*, text\/\*, application\/pdf\)/,
    );
    // Binary bytes are known by their signature, not by a name or a label: a program called notes.txt stays a program.
    const program = Buffer.concat([Buffer.from('MZ\x90\x00'), Buffer.alloc(64)]).toString('base64');
    await expect(run({ content_base64: program, filename: 'notes.txt', mime_type: 'text/plain' }).result).rejects.toThrow(
      /type application\/octet-stream may not be sent/,
    );
    await expect(run({ url: `${base}/missing.png` }).result).rejects.toThrow(/answered 404 Not Found/);
    await expect(run({ url: `${base}/pics/sunset.png` }, sink(), false).result).rejects.toThrow(BlockedAddressError);
    await expect(run({ content: 'hi' }).result).rejects.toThrow(/"filename" is required/);
    await expect(run({ url: `${base}/pics/sunset.png`, content: 'hi' }).result).rejects.toThrow(/exactly one of/);
    await expect(run({ content_base64: 'not base64!', filename: 'x.bin' }).result).rejects.toThrow(/not valid base64/);
    await expect(run({ content: 'hi', filename: 'a.txt' }, sink(0)).result).rejects.toThrow(/at most 0 files per reply/);
  });

  it('without a file sink (no chat to deliver to) it says so', async () => {
    const tool = createSendFileTool({ limits: LIMITS });
    await expect(tool.execute({ content: 'x', filename: 'x.txt' }, { signal: new AbortController().signal })).rejects.toThrow(/cannot receive files/);
  });
});
