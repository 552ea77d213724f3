/**
 * web_fetch must stay on the public internet (address-guard.ts): every spelling of a loopback, link-local,
 * private or reserved address, names that resolve to one, redirects to one, DNS rebinding and pooled sockets.
 *
 * No test needs the internet. An "internal" server on 127.0.0.1:<port> stands for what must stay unreachable
 * (Redis, the admin port, cloud metadata): every refused URL names that port, so a guard that let one through
 * would show up as a hit there. Where a test needs a reachable "public" server, one listens on 127.0.0.2 on the
 * same port and the test's address policy counts that one address as public; names resolve through an injected
 * resolver.
 */
import http, { createServer, type Server } from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BlockedAddressError, isPublicAddress, systemResolver, type Resolver } from './address-guard.js';
import { fetchUrl, type WebFetchOptions } from './web-fetch.js';

const PUBLIC_STAND_IN = '127.0.0.2';
const signal = new AbortController().signal;

let internal: Server;
let publicSite: Server;
let port = 0;
const hits = { internal: [] as string[], public: [] as string[] };

function listen(server: Server, host: string, p: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(p, host, () => resolve((server.address() as AddressInfo).port));
  });
}

beforeAll(async () => {
  internal = createServer((req, res) => {
    hits.internal.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret');
  });
  publicSite = createServer((req, res) => {
    hits.public.push(req.url ?? '');
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
    if (to !== null) return void res.writeHead(302, { location: to }).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('public page');
  });
  // Both on one port, so a URL naming it reaches whichever address the name was resolved to.
  for (let attempt = 0; ; attempt++) {
    port = await listen(internal, '127.0.0.1', 0);
    try {
      await listen(publicSite, PUBLIC_STAND_IN, port);
      break;
    } catch (err) {
      await new Promise((resolve) => internal.close(resolve));
      if (attempt >= 5) throw err;
    }
  }
});

afterAll(async () => {
  for (const s of [internal, publicSite]) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

beforeEach(() => {
  hits.internal = [];
  hits.public = [];
});

function addr(address: string): LookupAddress {
  return { address, family: address.includes(':') ? 6 : 4 };
}

/** A resolver that answers the given names with the given addresses, one answer per call (the last repeats). */
function fakeDns(answers: Record<string, string[][]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string, options: { family?: number; hints?: number }): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const seq = answers[hostname];
    if (!seq) return systemResolver(hostname, options);
    const n = calls.filter((h) => h === hostname).length;
    return seq[Math.min(n, seq.length) - 1].map(addr);
  };
  return Object.assign(resolve, { calls });
}

/** The policy of a test that needs a reachable "public" server: production's, plus the stand-in. */
const withStandIn = (ip: string): boolean => ip === PUBLIC_STAND_IN || isPublicAddress(ip);

async function refused(url: string, opts: WebFetchOptions = {}): Promise<void> {
  await expect(fetchUrl(url, opts, signal), url).rejects.toThrow(BlockedAddressError);
}

describe('web_fetch address guard', () => {
  it('refuses every spelling of a loopback, unspecified, link-local, private or CGNAT literal before connecting', async () => {
    const urls = [
      `http://127.0.0.1:${port}/`,
      `http://2130706433:${port}/`, // decimal
      `http://0x7f000001:${port}/`, // hex
      `http://0x7f.1:${port}/`, // hex, short form
      `http://0177.0.0.1:${port}/`, // octal
      `http://127.1:${port}/`,
      `http://127.0.0.1.:${port}/`, // trailing dot
      `http://127.8.9.10:${port}/`,
      `http://0.0.0.0:${port}/`, // connects to the local host on Linux
      `http://0:${port}/`,
      `http://[::1]:${port}/`,
      `http://[::]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`, // IPv4-mapped
      `http://[::ffff:7f00:1]:${port}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://169.254.0.1/',
      'http://[fe80::1]/',
      'http://[febf::1]/',
      'http://[fd00:ec2::254]/', // AWS metadata over IPv6
      'http://[fc00::1]/',
      'http://10.0.0.1/',
      'http://10.255.255.255/',
      'http://172.16.0.1/',
      'http://172.31.255.255/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://100.127.255.254/',
      'https://[::ffff:169.254.169.254]/',
    ];
    for (const url of urls) await refused(url);
    expect(hits.internal).toEqual([]);
  });

  it('refuses a name that resolves to such an address, or to one among public ones', async () => {
    const targets = [
      '127.0.0.1',
      '127.8.9.10',
      '::1',
      '::ffff:127.0.0.1',
      '0.0.0.0',
      '169.254.169.254',
      'fe80::1',
      '10.1.2.3',
      '172.16.5.4',
      '192.168.0.10',
      'fc00::1',
      'fd12:3456::1',
      '100.64.0.1',
    ];
    const answers: Record<string, string[][]> = Object.fromEntries(targets.map((ip, i) => [`n${i}.example`, [[ip]]]));
    answers['mixed.example'] = [['93.184.215.14', '127.0.0.1']];
    const resolve = fakeDns(answers);
    for (const name of Object.keys(answers)) await refused(`http://${name}:${port}/`, { resolve });
    expect(resolve.calls.sort()).toEqual(Object.keys(answers).sort()); // each was really looked up, once
    // And through the real resolver, with nothing injected.
    await refused(`http://localhost:${port}/`);
    expect(hits.internal).toEqual([]);
  });

  it('follows a redirect between allowed servers, and refuses one from an allowed server to a private address', async () => {
    const resolve = fakeDns({ 'public.example': [[PUBLIC_STAND_IN]], 'internal.example': [['127.0.0.1']], 'metadata.example': [['169.254.169.254']] });
    const opts = { resolve, addressAllowed: withStandIn };
    const via = (to: string): string => `http://public.example:${port}/r?to=${encodeURIComponent(to)}`;
    // The stand-in really is reachable and redirects are followed: so what is refused below is the target.
    const ok = await fetchUrl(via('/page'), opts, signal);
    expect([ok.status, ok.body.toString(), ok.url]).toEqual([200, 'public page', `http://public.example:${port}/page`]);

    const targets = [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      `http://2130706433:${port}/`,
      `http://0x7f.1:${port}/`,
      `http://0.0.0.0:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://internal.example:${port}/`,
      'http://metadata.example/latest/meta-data/',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
    ];
    hits.public = [];
    for (const to of targets) await refused(via(to), opts);
    expect(hits.public).toHaveLength(targets.length); // every first hop was fetched
    expect(hits.internal).toEqual([]);
  });

  it('DNS rebinding: a name that resolves to a public address first and to loopback next never reaches loopback', async () => {
    const resolve = fakeDns({ 'rebind.example': [[PUBLIC_STAND_IN], ['127.0.0.1']] });
    const opts = { resolve, addressAllowed: withStandIn };
    // One resolution, and the connection goes to the address it returned: a check that resolved separately from
    // the connection would have let the second answer (loopback) through.
    const page = await fetchUrl(`http://rebind.example:${port}/page`, opts, signal);
    expect(page.body.toString()).toBe('public page');
    expect(resolve.calls).toEqual(['rebind.example']);
    expect(hits.public).toEqual(['/page']);
    // The name now answers loopback: refused, whether asked directly or as the next hop of its own redirect.
    await refused(`http://rebind.example:${port}/page`, opts);
    const again = fakeDns({ 'rebind.example': [[PUBLIC_STAND_IN], ['127.0.0.1']] });
    await refused(`http://rebind.example:${port}/r?to=/page`, { resolve: again, addressAllowed: withStandIn });
    expect(again.calls).toEqual(['rebind.example', 'rebind.example']);
    expect(hits.internal).toEqual([]);
  });

  it('does not reuse a keep-alive socket that other code in the process opened to a private host', async () => {
    // Another part of the process (a client for a local Bot API server, say) talks to localhost through the
    // global agent, which keeps the socket open for reuse by host name.
    await new Promise<void>((resolve, reject) => {
      http.get(`http://localhost:${port}/warm-up`, (res) => res.resume().once('end', resolve)).once('error', reject);
    });
    const pooled = (): number => Object.values(http.globalAgent.freeSockets).reduce((n, list) => n + (list?.length ?? 0), 0);
    for (let i = 0; pooled() === 0 && i < 10_000; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(pooled()).toBe(1);
    await refused(`http://localhost:${port}/admin`);
    expect(hits.internal).toEqual(['/warm-up']);
  });
});
