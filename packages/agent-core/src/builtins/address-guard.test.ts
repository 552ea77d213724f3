import { describe, expect, it } from 'vitest';
import { assertAllowedLiteral, ipv6Hextets, isPublicAddress } from './address-guard.js';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '127.255.255.255',
    '10.255.255.255',
    '169.254.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '::1',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'febf:ffff::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:c0a8:0101::1',
    '2001:db8::1',
    'not-an-ip',
  ])('%s is not public', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each(['1.1.1.1', '8.8.8.8', '172.32.0.1', '192.169.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:0808:0808::1'])(
    '%s is public',
    (ip) => {
      expect(isPublicAddress(ip)).toBe(true);
    },
  );

  it('expands IPv6 forms, and checks bracketed literals from URLs', () => {
    expect(ipv6Hextets('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(ipv6Hextets('1::2:3')).toEqual([1, 0, 0, 0, 0, 0, 2, 3]);
    expect(ipv6Hextets('1:2')).toBeNull();
    expect(() => assertAllowedLiteral('[::1]')).toThrow(/\[::1\] resolves to ::1, a private, loopback or link-local address/);
    expect(() => assertAllowedLiteral('127.0.0.1')).toThrow(/not allowed/);
    expect(() => assertAllowedLiteral('example.com')).not.toThrow();
    expect(() => assertAllowedLiteral('127.0.0.2', (ip) => ip === '127.0.0.2')).not.toThrow();
  });
});
