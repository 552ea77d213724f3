import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport, OriginPools } from './transport.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/**
 * A server answering its own name, counting the connections it was given and how many are open. On `/held` it
 * sends the first half of its answer, and the rest once `hold` settles.
 */
async function server(name: string, hold?: Promise<void>): Promise<{ url: string; opened: () => number; open: () => number }> {
  let opened = 0;
  let open = 0;
  const s = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      if (req.url !== '/held' || !hold) return void res.end(name);
      res.write(`${name}, first half; `);
      void hold.then(() => res.end('second half'));
    });
  });
  s.on('connection', (socket) => {
    opened++;
    open++;
    socket.on('close', () => open--);
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, opened: () => opened, open: () => open };
}

describe('createTransport', () => {
  it('keeps one pool per origin, reuses its connections, and closes them all when closed', async () => {
    const [a, b] = [await server('a'), await server('b')];
    const transport = createTransport();
    const texts = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => (await transport.fetch(`${i % 2 ? b.url : a.url}/v1/x`, { method: 'POST', body: '{}' })).text()),
    );
    expect(texts.filter((t) => t === 'a')).toHaveLength(10);
    expect(texts.filter((t) => t === 'b')).toHaveLength(10);
    const openedA = a.opened();
    // Kept alive: the next calls go over the connections already open.
    for (let i = 0; i < 5; i++) expect(await (await transport.fetch(`${a.url}/v1/y`)).text()).toBe('a');
    expect(a.opened()).toBe(openedA);
    transport.close();
    await expect.poll(() => a.open() + b.open(), { timeout: 10_000 }).toBe(0);
  });

  it('retire closes the idle connections at once and a busy one after its whole answer; later calls keep none', async () => {
    let release!: () => void;
    const a = await server('a', new Promise<void>((r) => (release = r)));
    const transport = createTransport();
    // Two calls at once: two connections, both idle and kept alive afterwards.
    expect(await Promise.all([1, 2].map(async () => (await transport.fetch(`${a.url}/x`)).text()))).toEqual(['a', 'a']);
    expect(a.opened()).toBe(2);
    const held = await transport.fetch(`${a.url}/held`, { method: 'POST', body: '{}' });
    transport.retire();
    // The idle one closes now; the busy one stays for its answer, which arrives whole, and then closes.
    await expect.poll(() => a.open(), { timeout: 10_000 }).toBe(1);
    release();
    expect(await held.text()).toBe('a, first half; second half');
    await expect.poll(() => a.open(), { timeout: 10_000 }).toBe(0);
    // A call that still reaches the retired transport is answered on a connection of its own, not kept afterwards.
    expect(await (await transport.fetch(`${a.url}/x`)).text()).toBe('a');
    expect(a.opened()).toBe(3);
    await expect.poll(() => a.open(), { timeout: 10_000 }).toBe(0);
    transport.close();
  });

  it('OriginPools closes gracefully (promise or callback) and fails what is dispatched after a destroy', async () => {
    const a = await server('a');
    const pools = new OriginPools({});
    const { request } = await import('undici');
    expect((await request(`${a.url}/z`, { dispatcher: pools })).statusCode).toBe(200);
    expect(pools.origins).toBe(1);
    await new Promise<void>((r) => pools.close(r));
    await expect.poll(() => a.open(), { timeout: 10_000 }).toBe(0);
    const again = new OriginPools({});
    await request(`${a.url}/z`, { dispatcher: again }).then((r) => r.body.dump());
    await again.destroy();
    await expect(request(`${a.url}/z`, { dispatcher: again })).rejects.toThrow(/destroyed/i);
  });
});
