/** Discord downloads against the stand-in's CDN: signed URLs that expire, refreshed through the REST API. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CDN_URL_LIFETIME_S } from '../../../../test/fakes/discord/cdn.js';
import { startDiscordFake, type DiscordFake } from '../../../../test/fakes/discord/index.js';
import { NotFoundError } from '../errors.js';
import { DiscordFiles, expiryOf } from './files.js';

let fake: DiscordFake;

beforeEach(async () => {
  fake = await startDiscordFake();
});
afterEach(() => fake.close());

const refreshes = (): number => fake.requests.filter((r) => r.route === 'refreshAttachmentUrls' && r.status === 200).length;

describe('DiscordFiles', () => {
  it('downloads a fresh CDN URL as it is, without asking for a new one', async () => {
    const url = fake.cdn.put('1', 'a.txt', Buffer.from('hello'), 'text/plain');
    const files = new DiscordFiles({ botToken: fake.token, apiUrl: fake.apiRoot });
    expect((await files.download({ kind: 'file', url }, { maxBytes: 100 })).bytes.toString()).toBe('hello');
    expect(refreshes()).toBe(0);
  });

  it('an expired URL the CDN refuses (404) is refreshed through attachments/refresh-urls and downloaded', async () => {
    const url = fake.cdn.put('1', 'a.txt', Buffer.from('still here'), 'text/plain');
    fake.cdn.skewS = CDN_URL_LIFETIME_S + 60; // a day later, by the CDN's clock
    const files = new DiscordFiles({ botToken: fake.token, apiUrl: fake.apiRoot });
    expect((await files.download({ kind: 'file', url }, { maxBytes: 100 })).bytes.toString()).toBe('still here');
    expect(fake.cdn.downloads.map((d) => d.status)).toEqual([404, 200]);
    expect(refreshes()).toBe(1);
  });

  it('a URL already past its ex by our clock is refreshed before the CDN is asked', async () => {
    fake.cdn.skewS = -(CDN_URL_LIFETIME_S + 60); // issued more than a day ago
    const url = fake.cdn.put('1', 'a.txt', Buffer.from('old file'), 'text/plain');
    fake.cdn.skewS = 0;
    expect(expiryOf(url)).toBeLessThan(Date.now());
    const files = new DiscordFiles({ botToken: fake.token, apiUrl: fake.apiRoot });
    expect((await files.download({ kind: 'file', url }, { maxBytes: 100 })).bytes.toString()).toBe('old file');
    expect(fake.cdn.downloads.map((d) => d.status)).toEqual([200]);
    expect(refreshes()).toBe(1);
  });

  it('a file the CDN no longer has stays NotFoundError (the refresh gives the same URL back)', async () => {
    const url = fake.cdn.put('1', 'a.txt', Buffer.from('x'), 'text/plain').replace('/a.txt', '/gone.txt');
    const files = new DiscordFiles({ botToken: fake.token, apiUrl: fake.apiRoot });
    await expect(files.download({ kind: 'file', url }, { maxBytes: 100 })).rejects.toBeInstanceOf(NotFoundError);
    expect(refreshes()).toBe(1);
  });
});
