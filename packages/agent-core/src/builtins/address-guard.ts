/**
 * Keeps web_fetch on the public internet: a model told to "fetch http://169.254.169.254/" or a page redirecting
 * to http://localhost:6379 must not reach the host's cloud metadata, Redis or admin port.
 *
 * The check runs inside the HTTP client's DNS lookup, on every address the name resolves to, so the address
 * checked is the address connected to (no gap for DNS rebinding between a check and the connection). IP
 * literals never reach a lookup and are checked before the request.
 */
import dns, { type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/** Which addresses a connection may go to. The default, `isPublicAddress`, keeps to the public internet. */
export type AddressPolicy = (ip: string) => boolean;

/** Every address a host name resolves to. Tests inject one to play DNS (a name that answers differently each time). */
export type Resolver = (hostname: string, options: { family?: number; hints?: number }) => Promise<LookupAddress[]>;

/** The system resolver (getaddrinfo, /etc/hosts included), as node:http would use it. */
export const systemResolver: Resolver = (hostname, { family, hints }) => dns.promises.lookup(hostname, { all: true, family: family ?? 0, hints });

export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`${host} resolves to ${address}, a private, loopback or link-local address; fetching it is not allowed`);
  }
}

/** [network, prefix length] of IPv4 ranges that are not the public internet. */
const BLOCKED_V4: ReadonlyArray<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => ((acc << 8) | Number(part)) >>> 0, 0);
}

const BLOCKED_V4_RANGES = BLOCKED_V4.map(([net, bits]) => {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { base: (v4ToInt(net) & mask) >>> 0, mask };
});

function isPublicV4(ip: string): boolean {
  const n = v4ToInt(ip);
  return !BLOCKED_V4_RANGES.some(({ base, mask }) => (n & mask) >>> 0 === base);
}

/** The 8 hextets of an IPv6 address (zone id dropped, embedded dotted IPv4 folded in), or null if malformed. */
export function ipv6Hextets(ip: string): number[] | null {
  let s = ip.split('%')[0].toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    s = `${s.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...Array<number>(Math.max(fill, 0)).fill(0), ...tail];
  return all.length === 8 && all.every((h) => Number.isInteger(h) && h >= 0 && h <= 0xffff) ? all : null;
}

function v4FromHextets(hi: number, lo: number): string {
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

function isPublicV6(ip: string): boolean {
  const h = ipv6Hextets(ip);
  if (!h) return false;
  const zeroThrough = (n: number): boolean => h.slice(0, n).every((x) => x === 0);
  if (zeroThrough(5) && h[5] === 0xffff) return isPublicV4(v4FromHextets(h[6], h[7])); // ::ffff:a.b.c.d (mapped)
  if (zeroThrough(6)) return false; // ::, ::1 and the deprecated ::a.b.c.d
  if (h[0] === 0x64 && h[1] === 0xff9b && h.slice(2, 6).every((x) => x === 0)) return isPublicV4(v4FromHextets(h[6], h[7])); // NAT64
  if (h[0] === 0x2002) return isPublicV4(v4FromHextets(h[1], h[2])); // 6to4 carries an IPv4 address
  if ((h[0] & 0xfe00) === 0xfc00) return false; // unique local
  if ((h[0] & 0xffc0) === 0xfe80 || (h[0] & 0xffc0) === 0xfec0) return false; // link-local, old site-local
  if ((h[0] & 0xff00) === 0xff00) return false; // multicast
  if (h[0] === 0x2001 && (h[1] === 0x0db8 || h[1] === 0)) return false; // documentation, Teredo
  if (h[0] === 0x0100 && h.slice(1, 4).every((x) => x === 0)) return false; // discard prefix
  return true;
}

/** True for addresses on the public internet; false for private, loopback, link-local and special ranges. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip.split('%')[0]);
  if (family === 4) return isPublicV4(ip);
  if (family === 6) return isPublicV6(ip);
  return false;
}

/**
 * Throws BlockedAddressError when `host` is an IP literal the policy refuses. URL parsing has already turned
 * the other spellings of an IPv4 address (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) into dotted form.
 */
export function assertAllowedLiteral(host: string, allowed: AddressPolicy = isPublicAddress): void {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare.split('%')[0]) !== 0 && !allowed(bare)) throw new BlockedAddressError(host, bare);
}

/**
 * A `lookup` for node:http(s) that resolves every address of a name and fails when any of them is refused
 * (a name with one public and one private address could be steered to the private one). The connection goes
 * to the addresses it hands back, so nothing resolves the name a second time between the check and the connect.
 */
export function guardedLookup(resolve: Resolver = systemResolver, allowed: AddressPolicy = isPublicAddress): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { family: familyNumber(options.family), hints: options.hints }).then(
      (addresses) => {
        const bad = addresses.find((a) => !allowed(a.address));
        if (bad) return callback(Object.assign(new BlockedAddressError(hostname, bad.address), { code: 'EBLOCKED' }), '');
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

function familyNumber(family: number | 'IPv4' | 'IPv6' | undefined): number {
  return family === 'IPv4' ? 4 : family === 'IPv6' ? 6 : (family ?? 0);
}
