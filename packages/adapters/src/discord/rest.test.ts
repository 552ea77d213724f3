/** The bot's one REST client: a short deadline for plain calls, the long one for uploads; refreshes never wait. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RateLimitError } from 'discord.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDiscordRest, DISCORD_REFRESH_ROUTE } from './rest.js';

/** Answers every request after `answerAfterMs`; the refresh route (and only it) says 429 first. */
let server: http.Server;
let apiUrl: string;
const answerAfterMs = 400;
let refreshCalls = 0;
let messageCalls = 0;

beforeEach(async () => {
  refreshCalls = 0;
  messageCalls = 0;
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      };
      if (req.url?.endsWith(DISCORD_REFRESH_ROUTE)) {
        refreshCalls++;
        json(429, { message: 'You are being rate limited.', retry_after: 0.05, global: false }, { 'retry-after': '1' });
      } else if (req.url?.endsWith('/rate-limited')) {
        messageCalls++;
        if (messageCalls === 1) json(429, { message: 'You are being rate limited.', retry_after: 0.05, global: false }, { 'retry-after': '1' });
        else json(200, { id: 'after-wait' });
      } else setTimeout(() => json(200, { id: 'slow' }), answerAfterMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('createDiscordRest', () => {
  it('gives a plain call the short deadline, and an upload on the same client the long one', async () => {
    const rest = createDiscordRest({ botToken: 'bot-token', apiUrl, requestTimeoutMs: answerAfterMs / 4 });
    await expect(rest.post('/channels/1/messages', { body: { content: 'hi' } })).rejects.toThrow(/aborted/);
    const upload = (await rest.post('/channels/1/messages', {
      body: { attachments: [{ id: 0, filename: 'a.txt' }] },
      files: [{ name: 'a.txt', data: Buffer.from('hello') }],
    })) as { id: string };
    expect(upload.id).toBe('slow');
  });

  it('waits out a short rate limit on a message route, but not on the attachment refresh route', async () => {
    const rest = createDiscordRest({ botToken: 'bot-token', apiUrl });
    expect(((await rest.post('/channels/1/rate-limited', { body: {} })) as { id: string }).id).toBe('after-wait');
    expect(messageCalls).toBe(2);
    await expect(rest.post(DISCORD_REFRESH_ROUTE, { body: { attachment_urls: [] } })).rejects.toBeInstanceOf(RateLimitError);
    expect(refreshCalls).toBe(1);
  });
});
