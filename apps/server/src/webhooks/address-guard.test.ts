import { describe, expect, it } from 'vitest';
import { isPublicAddress } from './address-guard.ts';
import { nextDelayMs, parseRetryAfter } from './retry-schedule.ts';

describe('address guard', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.5',
    '172.20.1.1',
    '192.168.1.10',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    'not an ip',
    // IPv4-compatible (::/96, deprecated), whatever the IPv4 in it.
    '::127.0.0.1',
    '::8.8.8.8',
    '::a00:1',
    // 6to4 of a private, loopback or metadata address.
    '2002:7f00:1::',
    '2002:a00:1::1',
    '2002:a9fe:a9fe::1',
    // Teredo whose server or (obfuscated) client is not public: client 127.0.0.1 = ~7f00:0001.
    '2001:0:a00:1::1',
    '2001:0:808:808:0:0:80ff:fffe',
    '2001::4136:e378:8000:63bf:3fff:fdd2',
    // NAT64 of a private address; NAT64 local-use prefixes.
    '64:ff9b::10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::8.8.8.8',
    '64:ff9b:1:abcd::1',
    'fe80::1%eth0',
    'fec0::1',
    '2001:db8::1',
  ])('%s is not public', (a) => expect(isPublicAddress(a)).toBe(false));
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2002:808:808::1',
    '64:ff9b::8.8.8.8',
    // Teredo with public server and client (client 8.8.8.8 obfuscated: f7f7:f7f7).
    '2001:0:101:101::f7f7:f7f7',
  ])('%s is public', (a) => expect(isPublicAddress(a)).toBe(true));
});

describe('retry schedule', () => {
  it('immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h; then dead', () => {
    const mid = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => nextDelayMs(n, 0.5)! / 1000);
    expect(mid).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400]);
    expect(nextDelayMs(10, 0.5)).toBeNull();
    expect(mid.reduce((a, b) => a + b, 0) / 86_400).toBeGreaterThan(3);
  });
  it('jitter stays within ±10 %; Retry-After lengthens a delay, capped at a day', () => {
    expect(nextDelayMs(2, 0)).toBe(270_000);
    expect(nextDelayMs(2, 0.999_999)).toBeLessThanOrEqual(330_000);
    expect(nextDelayMs(1, 0.5, 120)).toBe(120_000);
    expect(nextDelayMs(1, 0.5, 10 ** 9)).toBe(86_400_000);
    expect(parseRetryAfter('30', 0)).toBe(30);
    expect(parseRetryAfter(new Date(60_000).toUTCString(), 0)).toBe(60);
    expect(parseRetryAfter('soon', 0)).toBeNull();
  });
});
