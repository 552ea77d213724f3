import { describe, expect, it } from 'vitest';
import { NodeHeaders, NodeResponse } from './http-fetch.js';

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield new TextEncoder().encode(p);
}

const init = { status: 200, statusText: 'OK', url: 'http://127.0.0.1/x', headers: {} };

describe('the transport Response', () => {
  it('reads its headers as fetch does: any case, repeats joined, set-cookie apart, in name order, read-only', () => {
    const h = new NodeHeaders({ 'x-request-id': 'r1', 'x-many': ['accept', 'origin'], 'set-cookie': ['a=1', 'b=2'], 'content-type': 'text/plain' });
    expect(h.get('X-Request-ID')).toBe('r1');
    expect(h.get('X-Many')).toBe('accept, origin');
    expect(h.get('retry-after')).toBeNull();
    expect(h.has('Content-Type')).toBe(true);
    expect(h.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect([...h]).toEqual([
      ['content-type', 'text/plain'],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['x-many', 'accept, origin'],
      ['x-request-id', 'r1'],
    ]);
    const seen: string[] = [];
    h.forEach((value, name) => {
      seen.push(`${name}=${value}`);
    });
    expect(seen[0]).toBe('content-type=text/plain');
    expect(() => h.append()).toThrow(TypeError);
  });

  it('iterates any number of headers in name order, whatever order they came in', () => {
    for (const n of [0, 1, 2, 17, 64, 65, 300]) {
      // Names in an order far from sorted: reversed, with every third moved to the front.
      const names = Array.from({ length: n }, (_, i) => `x-h${String(i).padStart(3, '0')}-${i % 7}`).reverse();
      const arrived = [...names.filter((_, i) => i % 3 === 0), ...names.filter((_, i) => i % 3 !== 0)];
      const h = new NodeHeaders(Object.fromEntries(arrived.map((name) => [name, `v-${name}`])));
      expect([...h.keys()]).toEqual([...names].sort());
      expect([...h.values()]).toEqual([...names].sort().map((name) => `v-${name}`));
    }
  });

  it('gives its body once, as text (byte-order mark dropped), JSON, bytes or an ArrayBuffer', async () => {
    const text = new NodeResponse(chunks('\uFEFFhé', 'llo'), init);
    expect(text.bodyUsed).toBe(false);
    expect(await text.text()).toBe('héllo');
    expect(text.bodyUsed).toBe(true);
    await expect(text.text()).rejects.toThrow(/already been read/);

    expect(await new NodeResponse(chunks('{"a":', '1}'), init).json()).toEqual({ a: 1 });
    const buf = await new NodeResponse(chunks('abc'), init).arrayBuffer();
    expect(buf).toBeInstanceOf(ArrayBuffer);
    expect(Buffer.from(buf).toString()).toBe('abc');
    const blob = await new NodeResponse(chunks('x'), { ...init, headers: { 'content-type': 'audio/mpeg' } }).blob();
    expect(blob.type).toBe('audio/mpeg');
    expect(await new NodeResponse(null, { ...init, status: 204 }).text()).toBe('');
  });

  it('is ok for 2xx only, and says it cannot be cloned', () => {
    expect(new NodeResponse(null, { ...init, status: 299 }).ok).toBe(true);
    expect(new NodeResponse(null, { ...init, status: 304 }).ok).toBe(false);
    expect(new NodeResponse(null, { ...init, status: 404 }).ok).toBe(false);
    expect(() => new NodeResponse(null, init).clone()).toThrow(/does not clone/);
  });

  it('passes a body error to the reader as it came (what the provider errors classify)', async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode('part');
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    }
    await expect(new NodeResponse(failing(), init).text()).rejects.toMatchObject({ code: 'ECONNRESET' });
  });
});
