import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { png } from '../../../../test/fakes/media/images.js';
import type { OutboundLimits } from './limits.js';
import { ReplyFiles } from './reply-files.js';
import { PICTURES_ONLY_TEXT, takePicturesFromReply } from './reply-pictures.js';

const CHART = png(20, 10);
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/chart.png') res.writeHead(200, { 'content-type': 'image/png' }).end(CHART);
    else if (req.url === '/page') res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const limits: OutboundLimits = { file: { maxBytes: 10_000, types: ['image/*', 'text/*'] }, perTurn: 2, replyBytes: 50_000 };
const log = pino({ level: 'silent' });

function take(text: string, files = new ReplyFiles(limits), allowPrivate = true) {
  return { files, out: takePicturesFromReply({ text, files, limits, fetch: { allowPrivate }, signal: new AbortController().signal, log }) };
}

describe('pictures in a reply', () => {
  it('fetches a Markdown image, sends it as a picture captioned with its alt text, and takes it out of the text', async () => {
    const { files, out } = take(`Here is the chart:\n\n![Sales by month](${base}/chart.png)\n\nAs you can see, sales grew.`);
    expect(await out).toBe('Here is the chart:\n\nAs you can see, sales grew.');
    expect(files.files).toEqual([{ kind: 'image', name: 'chart.png', mimeType: 'image/png', data: CHART, caption: 'Sales by month' }]);
  });

  it('leaves what it cannot send as it was: a 404, a page that is no picture, a blocked address, an image in a code block', async () => {
    const text = [`![a](${base}/missing.png)`, `![b](${base}/page)`, '```md', `![c](${base}/chart.png)`, '```'].join('\n');
    const { files, out } = take(text);
    expect(await out).toBe(text);
    expect(files.files).toEqual([]);
    const blocked = take(`![d](${base}/chart.png)`, undefined, false);
    expect(await blocked.out).toBe(`![d](${base}/chart.png)`);
  });

  it('takes no more pictures than the reply has room for; a reply of pictures only keeps a placeholder text', async () => {
    const { files, out } = take(`![1](${base}/chart.png) ![2](${base}/chart.png) ![3](${base}/chart.png)`);
    expect(await out).toBe(`![3](${base}/chart.png)`);
    expect(files.files).toHaveLength(2);
    const only = take(`![x](${base}/chart.png)`);
    expect(await only.out).toBe(PICTURES_ONLY_TEXT);
  });
});
