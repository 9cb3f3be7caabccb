/**
 * The inside half of `sandbox.network: "allowlist"` (proxy.ts is the host
 * half): a forwarder that listens on 127.0.0.1:3128 in the sandbox's own
 * network namespace and carries each connection to the proxy's Unix socket,
 * and the environment that points HTTP clients at it.
 *
 * It is started by the sandbox's command before the shell: bwrap runs
 * `/bin/sh -c` with the script below, which starts the forwarder with the
 * host's Node (process.execPath, visible read-only inside; in VS Code that
 * is Electron, hence ELECTRON_RUN_AS_NODE=1, which a plain Node ignores) from
 * a file in the run's scratch folder (read-only inside), waits until it
 * listens, then execs the shell (or the outcome check's `/bin/sh -c`). The
 * forwarder runs in a session of its own, out of the shell's: the terminal
 * tells the shell from it by that (terminal.ts findShell), and stopping a
 * command's processes does not stop it. It is no boundary: what it reaches,
 * the proxy's socket, every process inside can reach; the proxy decides.
 */
import { writeFileSync } from 'node:fs';

/** The port the forwarder listens on inside (the sandbox's own loopback: nothing else is there). */
export const FORWARDER_PORT = 3128;

/** The proxy's address inside the sandbox. */
export const PROXY_URL = `http://127.0.0.1:${FORWARDER_PORT}`;

/** Where the proxy and its forwarder are: host paths, seen at the same paths (read-only) inside. */
export interface ProxyEndpoint {
  /** The proxy's Unix socket. */
  socket: string;
  /** The forwarder's script (writeForwarder). */
  forwarder: string;
  /** The Node (or Electron) that runs it. */
  node: string;
}

/**
 * The forwarder. `start`: starts `serve` in a session of its own, prints
 * "ok" once it listens (or why not) and exits. `serve`: listens on
 * 127.0.0.1:PORT and pipes each connection to the socket; it says "ok" on
 * its stdout (a pipe to `start`, which is gone after). Only Node's own
 * modules, nothing printed after.
 */
const SCRIPT = `'use strict';
const net = require('net');
const fs = require('fs');
const [mode, sock, port] = process.argv.slice(2);
if (mode === 'start') {
  const child = require('child_process').spawn(process.execPath, [__filename, 'serve', sock, port], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  const done = (said) => {
    fs.writeSync(1, said + '\\n');
    process.exit(said === 'ok' ? 0 : 1);
  };
  const timer = setTimeout(() => done('it did not listen within 8 s'), 8000);
  child.stdout.on('data', (d) => {
    out += d;
    if (out.includes('\\n')) done(out.split('\\n')[0]);
  });
  child.on('error', (e) => done(String(e.message)));
  child.on('exit', (code) => done(out.split('\\n')[0] || 'it exited with code ' + code));
} else if (mode === 'serve') {
  const server = net.createServer({ allowHalfOpen: true }, (c) => {
    const u = net.connect({ path: sock, allowHalfOpen: true });
    const end = () => {
      c.destroy();
      u.destroy();
    };
    c.on('error', end);
    u.on('error', end);
    c.on('close', end);
    u.on('close', end);
    c.pipe(u);
    u.pipe(c);
  });
  server.maxConnections = 1024;
  server.on('error', (e) => {
    try {
      fs.writeSync(1, String(e.message) + '\\n');
    } catch {}
    process.exit(1);
  });
  server.listen(Number(port), '127.0.0.1', () => fs.writeSync(1, 'ok\\n'));
}
`;

/** Writes the forwarder's script to `path` (in the run's scratch folder, read-only inside). */
export function writeForwarder(path: string): void {
  writeFileSync(path, SCRIPT, { mode: 0o444 });
}

/**
 * What follows bwrap's `--`: starts the forwarder, then execs what comes
 * after (the shell and its arguments, or `/bin/sh -c CHECK`). A forwarder
 * that does not start is said in the terminal; the shell starts anyway,
 * with only the sandbox's loopback.
 */
export function forwarderLauncher(p: ProxyEndpoint): string[] {
  const script =
    'r=$(ELECTRON_RUN_AS_NODE=1 "$1" "$2" start "$3" "$4" </dev/null 2>&1); ' +
    '[ "$r" = ok ] || echo "lar: the sandbox' +
    "'" +
    's network forwarder did not start ($r): the allowlisted hosts are not reachable" >&2; ' +
    'shift 4; exec "$@"';
  return ['/bin/sh', '-c', script, 'lar-network', p.node, p.forwarder, p.socket, String(FORWARDER_PORT)];
}

/**
 * The environment that sends HTTP clients (curl, wget, pip, git, npm, yarn,
 * pnpm, Python's urllib and requests, Go, Rust's cargo) through the proxy;
 * the sandbox's own loopback goes direct.
 */
export function proxyEnv(): Record<string, string> {
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: PROXY_URL,
    HTTPS_PROXY: PROXY_URL,
    http_proxy: PROXY_URL,
    https_proxy: PROXY_URL,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    npm_config_proxy: PROXY_URL,
    npm_config_https_proxy: PROXY_URL,
    // Node 24 and later: its own http, https and fetch read the variables above.
    NODE_USE_ENV_PROXY: '1',
  };
}
