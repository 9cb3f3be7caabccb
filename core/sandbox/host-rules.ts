/**
 * The allowlist's rule for hosts and addresses (proxy.ts applies it): which range an address is in,
 * which entry lets a client reach a host, and a host in the one form entries are compared with.
 */
import { isIP } from 'node:net';
import type { HostEntry } from '../schema/workflow';

/** What kind of place an address is. */
export type AddressClass = 'public' | 'private' | 'loopback' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

function v4Class(n: number): AddressClass {
  const a = n >>> 24;
  const b = (n >>> 16) & 0xff;
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 169 && b === 254) return 'link-local';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127))
    return 'private';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved';
  return 'public';
}

/** The eight 16-bit groups of an IPv6 address (a zone after `%` dropped). */
function v6Groups(ip: string): number[] {
  // The URL parser writes the address in its one canonical form: hex groups, one `::` at most.
  const c = new URL(`http://[${ip.replace(/%.*$/, '')}]`).hostname.slice(1, -1);
  const [head, tail] = c.includes('::') ? c.split('::') : [c, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => parseInt(g, 16));
}

/** Which range an IPv4 or IPv6 address is in; an IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4) is judged by it. */
export function addressClass(ip: string): AddressClass {
  if (isIP(ip) === 4) return v4Class(ip.split('.').reduce((n, o) => n * 256 + Number(o), 0));
  const g = v6Groups(ip);
  const v4 = (hi: number, lo: number): AddressClass => v4Class(hi * 65536 + lo);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return v4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  if (g.every((x) => x === 0)) return 'unspecified';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'loopback';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xfe00) === 0xfc00 || (g[0]! & 0xffc0) === 0xfec0) return 'private';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  return 'public';
}

/** The entry of `entries` that lets a client reach `host` (canonical: lower-case, an address without brackets) on `port`. */
export function allowingEntry(entries: readonly HostEntry[], host: string, port: number): HostEntry | undefined {
  const h = host.toLowerCase().replace(/\.$/, '');
  return entries.find(
    (e) =>
      (e.port === undefined ? port === 443 || port === 80 : port === e.port) &&
      (e.wildcard ? h.endsWith(`.${e.host}`) : h === e.host),
  );
}

/** A host as a client names it (`Example.ORG`, `[::1]`, `0x7f.1`), in the one form entries are compared with; undefined when it is none. */
export function canonicalHost(raw: string): string | undefined {
  try {
    return new URL(`http://${raw}`).hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '') || undefined;
  } catch {
    return undefined;
  }
}
