/**
 * The network of a sandbox whose workflow says `sandbox.network: "allowlist"`:
 * an HTTP proxy on the host that lets commands reach the listed hosts and
 * nothing else. The sandbox keeps its own network namespace (only its own
 * loopback); the proxy listens on a Unix socket in the run's private scratch
 * folder, which the sandbox sees read-only, and a forwarder inside
 * (forwarder.ts) carries 127.0.0.1:3128 there. HTTPS goes through CONNECT,
 * plain HTTP as absolute-URI requests; the client names the host, and that
 * name is what is judged.
 *
 * The rule, entry by entry (docs/reliability.md, "The network"):
 * - A name (`registry.npmjs.org`) allows that name, a wildcard
 *   (`*.pypi.org`) its subdomains (not `pypi.org`, not `evilpypi.org`);
 *   compared case-insensitively, a trailing dot ignored. With `:port` that
 *   port only, else 443 and 80.
 * - A name is resolved here, and connected to by the address found (never
 *   resolved twice, so an answer cannot change in between). A DNS answer
 *   pointing at the host itself or at what only the host reaches is DNS
 *   rebinding, not a registry: an exact name may reach public addresses and
 *   private networks (RFC 1918, IPv6 ULA, CGNAT: a company registry on
 *   10.x, whose TLS certificate needs its name); a wildcard, which covers
 *   names the workflow's author never saw (user content on a shared
 *   domain), public addresses only; no name ever reaches loopback,
 *   link-local (the cloud's metadata service and its credentials),
 *   unspecified, multicast or reserved addresses.
 * - An address listed itself (`10.0.0.5:8080`, `[fd00::5]`) is reached as
 *   itself, whatever its range, when the client asks for it by that address.
 * - `host.lar.internal` (HOST_GATEWAY) listed with its port is the host's
 *   own loopback (a local registry): inside, `localhost` is the sandbox's.
 *
 * Bounded: at most 128 connections onward at once (more are refused with
 * 503), each closed after two minutes without a byte either way. Every
 * decision is counted by host and port, allowed or not (`tallies`).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HOST_GATEWAY, parseHostEntry, type HostEntry } from '../schema/workflow';
import { addressClass, allowingEntry, canonicalHost } from './host-rules';

/** How names are resolved: every address of a name (test seam: the system's resolver by default). */
export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/** One host and port the proxy was asked for, and what it said. */
export interface ProxyTally {
  host: string;
  port: number;
  allowed: boolean;
  /** How many connections (a tunnel, or one plain HTTP request) were asked for. */
  count: number;
  /** Why it was refused (the first time). */
  reason?: string;
}

type Decision = { ok: true; addresses: string[] } | { ok: false; status: number; reason: string; message: string };

export interface AllowlistProxyOptions {
  /** The workflow's `sandbox.hosts`, as written. */
  hosts: readonly string[];
  /** Where to listen (a Unix socket path, in a folder only this user can enter). */
  socketPath: string;
  lookup?: Lookup;
  /** Connections onward at once (default 128). */
  maxConnections?: number;
  /** A connection with no byte either way for this long is closed (default 120 000 ms). */
  idleMs?: number;
}

/** Distinct hosts counted; past it, only how many more there were. */
const MAX_TALLIES = 500;

export class AllowlistProxy {
  private readonly entries: HostEntry[];
  private readonly counts = new Map<string, ProxyTally>();
  /** Hosts asked for past MAX_TALLIES. */
  untallied = 0;
  private active = 0;
  private readonly sockets = new Set<Duplex>();

  private constructor(
    private readonly server: Server,
    private readonly opts: AllowlistProxyOptions,
  ) {
    this.entries = opts.hosts.map(parseHostEntry).filter((e): e is HostEntry => typeof e !== 'string');
  }

  /** Starts listening on `socketPath`. */
  static async start(opts: AllowlistProxyOptions): Promise<AllowlistProxy> {
    const server = createServer();
    const proxy = new AllowlistProxy(server, opts);
    const idle = opts.idleMs ?? 120_000;
    // A client that says nothing (or stops halfway) is let go.
    server.headersTimeout = Math.min(idle, 60_000);
    server.requestTimeout = 0;
    server.keepAliveTimeout = 5_000;
    server.maxConnections = 4 * (opts.maxConnections ?? 128);
    server.setTimeout(idle, (s) => s.destroy());
    // A client that half-closes after its request (`nc -N`) still gets the answer (Node's own flag, untyped).
    Object.assign(server, { httpAllowHalfOpen: true });
    server.on('connection', (s) => proxy.track(s));
    server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => void proxy.tunnel(req, client, head));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void proxy.forward(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  /** Every host and port asked for so far, allowed and refused. */
  tallies(): ProxyTally[] {
    return [...this.counts.values()].map((t) => ({ ...t }));
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.server.closeAllConnections();
    await closed;
  }

  private track(s: Duplex): void {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
  }

  private count(host: string, port: number, d: Decision): void {
    const key = `${d.ok ? '+' : '-'}${host}:${port}`;
    const t = this.counts.get(key);
    if (t) t.count++;
    else if (this.counts.size >= MAX_TALLIES) this.untallied++;
    else this.counts.set(key, { host, port, allowed: d.ok, count: 1, ...(d.ok ? {} : { reason: d.reason }) });
  }

  /** Whether `host` may be reached on `port`, and at which addresses. */
  async decide(host: string, port: number): Promise<Decision> {
    const entry = allowingEntry(this.entries, host, port);
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    if (!entry) {
      const listed = this.opts.hosts.join(', ');
      const add = port === 443 || port === 80 ? `"${host}"` : `"${where}"`;
      return {
        ok: false,
        status: 403,
        reason: `${where} is not in the workflow's allowlist (sandbox.hosts)`,
        message: `lar: ${where} is not in this workflow's network allowlist (sandbox.hosts: ${listed}). Commands in the sandbox reach only those hosts. To allow this one, add ${add} to sandbox.hosts in the workflow (docs/formats.md).`,
      };
    }
    if (!entry.wildcard && entry.host === HOST_GATEWAY) return { ok: true, addresses: ['127.0.0.1', '::1'] };
    if (entry.ip) return { ok: true, addresses: [host] };
    let found: { address: string }[];
    try {
      found = await (this.opts.lookup ?? systemLookup)(host);
    } catch (e) {
      found = [];
      if ((e as NodeJS.ErrnoException).code !== 'ENOTFOUND') {
        return {
          ok: false,
          status: 502,
          reason: `${host} could not be resolved`,
          message: `lar: ${host} is in the allowlist, but could not be resolved on the host: ${(e as Error).message}`,
        };
      }
    }
    if (!found.length)
      return {
        ok: false,
        status: 502,
        reason: `${host} could not be resolved`,
        message: `lar: ${host} is in the allowlist, but the host's resolver does not know it.`,
      };
    const reachable = entry.wildcard ? ['public'] : ['public', 'private'];
    const addresses = found.map((a) => a.address).filter((a) => reachable.includes(addressClass(a)));
    if (addresses.length) return { ok: true, addresses };
    const kinds = [...new Set(found.map((a) => addressClass(a.address)))].join(' or ');
    return {
      ok: false,
      status: 403,
      reason: `${host} resolves to ${kinds} addresses only`,
      message:
        `lar: ${host} resolves only to ${kinds} addresses (${found.map((a) => a.address).join(', ')}), which a name in the allowlist may not reach ` +
        `(${entry.wildcard ? 'a wildcard reaches public addresses only' : 'a name never reaches the host itself, link-local addresses or reserved ranges'}): ` +
        `to reach it anyway, list the address itself in sandbox.hosts and ask for it by that address, or "${HOST_GATEWAY}:PORT" for a service on the host's loopback.`,
    };
  }

  /** A connection onward to the first of `addresses` that answers. */
  private async open(addresses: string[], port: number): Promise<Socket> {
    let last: Error = new Error('no address');
    for (const address of addresses) {
      try {
        return await new Promise<Socket>((resolve, reject) => {
          const s = connect({ host: address, port, allowHalfOpen: true });
          s.setTimeout(30_000, () => s.destroy(new Error(`no answer from ${address}:${port} within 30 s`)));
          s.once('connect', () => {
            s.setTimeout(0);
            s.off('error', reject);
            resolve(s);
          });
          s.once('error', reject);
        });
      } catch (e) {
        last = e as Error;
      }
    }
    throw last;
  }

  /** Admits one more connection onward, or says why not. */
  private admit(): Decision | undefined {
    const max = this.opts.maxConnections ?? 128;
    if (this.active < max) return undefined;
    return {
      ok: false,
      status: 503,
      reason: 'too many connections at once',
      message: `lar: the sandbox's network proxy holds ${max} connections at once; try again when some have ended.`,
    };
  }

  /**
   * The connection onward to `host`:`port` when the allowlist admits it (counted either way), with
   * its idle timeout set ('timeout' is the caller's to act on); else `refuse` has been told why.
   */
  private async onward(
    host: string,
    port: number,
    refuse: (status: number, reason: string, message: string) => void,
  ): Promise<Socket | undefined> {
    let d = await this.decide(host, port);
    if (d.ok) d = this.admit() ?? d;
    this.count(host, port, d);
    if (!d.ok) return void refuse(d.status, d.reason, d.message);
    this.active++;
    let upstream: Socket;
    try {
      upstream = await this.open(d.addresses, port);
    } catch (e) {
      this.active--;
      return void refuse(
        502,
        `${host}:${port} did not answer`,
        `lar: ${host}:${port} is allowed, but could not be reached: ${(e as Error).message}`,
      );
    }
    this.track(upstream);
    upstream.once('close', () => this.active--);
    upstream.setTimeout(this.opts.idleMs ?? 120_000);
    return upstream;
  }

  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const m = /^(\[[^\]]+\]|[^:[\]]+):([0-9]{1,5})$/.exec(req.url ?? '');
    const host = m ? canonicalHost(m[1]!) : undefined;
    const port = m ? Number(m[2]) : 0;
    if (!host || !(port >= 1 && port <= 65535))
      return refuseRaw(
        client,
        400,
        'CONNECT takes host:port',
        `lar: the proxy takes CONNECT host:port, not "${req.url}".`,
      );
    const upstream = await this.onward(host, port, (status, reason, message) =>
      refuseRaw(client, status, reason, message),
    );
    if (!upstream) return;
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    upstream.once('close', () => client.destroy());
    upstream.on('error', end);
    upstream.on('timeout', end);
    client.once('close', () => upstream.destroy());
    client.write('HTTP/1.1 200 Connection established\r\n\r\n');
    if (head.length) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? '');
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== 'http:') {
      return refuse(
        res,
        400,
        'an absolute http URL is expected',
        `lar: this is the sandbox's network proxy: ask it for an absolute http:// URL (or CONNECT host:port for https), not "${req.url}".`,
      );
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
    const port = url.port ? Number(url.port) : 80;
    const upstream = await this.onward(host, port, (status, reason, message) => refuse(res, status, reason, message));
    if (!upstream) return;
    upstream.on('timeout', () => upstream.destroy());
    const onward = httpRequest({
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: hopByHopRemoved(req.headers, req.rawHeaders),
      createConnection: () => upstream,
      setHost: false,
    });
    onward.on('response', (r) => {
      res.writeHead(r.statusCode ?? 502, r.statusMessage, hopByHopRemoved(r.headers, r.rawHeaders));
      r.pipe(res);
    });
    onward.on('error', (e) => {
      if (!res.headersSent)
        refuse(
          res,
          502,
          `${host}:${port} failed`,
          `lar: ${host}:${port} is allowed, but the request failed: ${e.message}`,
        );
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(onward);
  }
}

/** Headers for one hop only (RFC 9110 7.6.1), and those the Connection header names, are not passed on. */
function hopByHopRemoved(headers: IncomingMessage['headers'], raw: string[]): OutgoingHttpHeaders {
  const drop = new Set([
    'connection',
    'proxy-connection',
    'keep-alive',
    'proxy-authorization',
    'proxy-authenticate',
    'te',
    'trailer',
    'transfer-encoding',
    'upgrade',
  ]);
  for (const n of String(headers.connection ?? '').split(',')) drop.add(n.trim().toLowerCase());
  const out: OutgoingHttpHeaders = {};
  // From the raw list, to keep each name as the client wrote it.
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (drop.has(name.toLowerCase())) continue;
    const prev = out[name];
    out[name] = prev === undefined ? raw[i + 1]! : [...(Array.isArray(prev) ? prev : [String(prev)]), raw[i + 1]!];
  }
  return out;
}

/** A status line's reason phrase: visible ASCII and spaces only. */
const phrase = (s: string): string => s.replace(/[^\x20-\x7e]/g, '?');

function refuse(res: ServerResponse, status: number, reason: string, message: string): void {
  const body = `${message}\n`;
  res.writeHead(status, phrase(reason), {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/** The same on a CONNECT's bare socket; then it is closed. */
function refuseRaw(client: Duplex, status: number, reason: string, message: string): void {
  const body = `${message}\n`;
  client.end(
    `HTTP/1.1 ${status} ${phrase(reason)}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** One line for the end of a run: what the allowlist's proxy let through and what it refused, by host. */
export function describeTallies(tallies: readonly ProxyTally[]): string {
  const list = (allowed: boolean): string =>
    tallies
      .filter((t) => t.allowed === allowed)
      .map((t) => `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port} ×${t.count}`)
      .join(', ');
  const allowed = list(true);
  const refused = list(false);
  return [allowed ? `allowed ${allowed}` : 'nothing allowed', ...(refused ? [`refused ${refused}`] : [])].join('; ');
}
