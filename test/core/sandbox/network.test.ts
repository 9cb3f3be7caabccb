/**
 * `sandbox.network: "allowlist"`: commands reach the listed hosts through the
 * run's proxy (core/sandbox/proxy.ts, forwarder.ts) and nothing else. The
 * sandbox tests run real commands (curl, python3, node, npm) in the real
 * sandbox (bubblewrap, node-pty) against real servers on the host: an HTTP
 * server and a TCP echo server stand for registries, reached by the name
 * `host.lar.internal` (the host's loopback), and a tiny npm registry serves
 * one package. Names that must not resolve for real are given to the proxy's
 * resolver (the `lookup` seam). Then the rules alone, without a sandbox.
 */
import { test, describe, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunSandbox } from '../../../core/sandbox/run';
import { describeSandbox } from '../../../core/sandbox/plan';
import { AllowlistProxy, type Lookup } from '../../../core/sandbox/proxy';
import { addressClass, allowingEntry } from '../../../core/sandbox/host-rules';
import {
  HOST_GATEWAY,
  parseHostEntry,
  Workflow,
  type HostEntry,
  type WorkflowInput,
} from '../../../core/schema/workflow';
import { Header } from '../../../core/schema/trajectory';
import { checkWorkflow } from '../../../core/workflow/wellformed';
import { TerminalSession } from '../../../core/shell/session';
import { listProcesses } from '../../../core/shell/procs';

const skip = process.platform === 'linux' ? false : 'bubblewrap is Linux only';

function workflow(sandbox: Record<string, unknown>, outcome = 'true'): Workflow {
  const input: WorkflowInput = {
    lar: 1,
    id: 'network-test',
    stages: [{ id: 'work', tools: ['run_command', 'submit'], budget: 50 }],
    transitions: {},
    start: 'work',
    terminal: ['work'],
    outcome: { command: outcome, timeoutMs: 120_000 },
    sandbox: { protected: [], ...sandbox },
  };
  return Workflow.parse(input);
}

interface Run {
  base: string;
  ws: string;
  sandbox: RunSandbox;
  terminal: TerminalSession;
  sh(command: string): Promise<string>;
}

const runs: Run[] = [];
after(async () => {
  for (const r of runs) {
    r.terminal.dispose();
    await r.sandbox.dispose();
    rmSync(r.base, { recursive: true, force: true });
  }
});

/** A run's sandbox and terminal as `lar run` makes them, under a workflow with this sandbox section. */
async function open(sandbox: Record<string, unknown>, o: { lookup?: Lookup; outcome?: string } = {}): Promise<Run> {
  const base = mkdtempSync(join(tmpdir(), 'lar-net-'));
  const ws = join(base, 'ws');
  const home = join(base, 'home');
  mkdirSync(ws);
  mkdirSync(home);
  const outputDir = join(ws, '.lar', 'output', 'run');
  const box = await RunSandbox.open({
    workspace: ws,
    workflow: workflow(sandbox, o.outcome),
    setting: 'required',
    hostEnv: { ...process.env, HOME: home },
    shell: '/bin/bash',
    outputDir,
    home,
    ...(o.lookup ? { lookup: o.lookup } : {}),
  });
  assert.ok(box.plan.confined, `the sandbox must start here: ${box.plan.confined ? '' : box.summary.reason}`);
  const terminal = new TerminalSession({
    cwd: ws,
    outputDir,
    shell: '/bin/bash',
    inputIdleMs: 1500,
    ...box.terminal(),
  });
  const r: Run = {
    base,
    ws,
    sandbox: box,
    terminal,
    sh: async (command) => (await terminal.run(command, { timeoutMs: 120_000 })).output,
  };
  runs.push(r);
  return r;
}

/** Ends a run: its terminal, then its sandbox (the proxy closes); what the proxy counted. */
async function close(r: Run) {
  runs.splice(runs.indexOf(r), 1);
  await r.terminal.close();
  const end = await r.sandbox.dispose();
  rmSync(r.base, { recursive: true, force: true });
  return end;
}

/** Where the run's proxy socket and forwarder script are: the arguments the sandbox starts the forwarder with. */
function endpoint(r: Run): { forwarder: string; socket: string } {
  const a = r.sandbox.plan.confined ? r.sandbox.plan.launcher.args : [];
  const i = a.indexOf('lar-network');
  assert.ok(i > 0, 'the sandbox starts the forwarder');
  return { forwarder: a[i + 2]!, socket: a[i + 3]! };
}

/** A resolver that knows only these names (and says ENOTFOUND for the rest), and remembers what it was asked. */
function resolver(known: Record<string, string[]>): Lookup & { asked: string[] } {
  const asked: string[] = [];
  const f = (host: string) => {
    asked.push(host);
    const a = known[host];
    if (!a) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
  return Object.assign(f, { asked });
}

let web: Server;
let webPort = 0;
let webHits = 0;
let other: Server;
let otherPort = 0;
let otherHits = 0;
let echo: TcpServer;
let echoPort = 0;

const listen = async (s: Server | TcpServer): Promise<number> => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
};

describe('sandbox.network "allowlist": the listed hosts through the proxy, nothing else', { skip }, () => {
  before(async () => {
    web = createServer((req, res) => {
      webHits++;
      res.end(`web-answered ${req.url}`);
    });
    webPort = await listen(web);
    other = createServer((_, res) => {
      otherHits++;
      res.end('other-answered');
    });
    otherPort = await listen(other);
    echo = createTcpServer((c) => c.pipe(c));
    echoPort = await listen(echo);
  });
  after(() => {
    web.close();
    other.close();
    echo.close();
  });

  /** A Node client that tunnels through $HTTPS_PROXY with CONNECT, writes "ping" and prints what comes back (or the refusal). */
  const nodeConnect = (target: string): string =>
    `node -e "const u = new URL(process.env.HTTPS_PROXY); require('http').request({ host: u.hostname, port: u.port, method: 'CONNECT', path: '${target}' }).on('connect', (res, s) => { if (res.statusCode !== 200) { console.log('status', res.statusCode, res.statusMessage); s.destroy(); return; } s.end('ping'); s.on('data', (d) => console.log('tunnel:', String(d))); }).on('error', (e) => console.log('error', e.message)).end()"`;

  test('an allowed host answers through the proxy: curl (plain and CONNECT), Python and Node via the proxy variables', async () => {
    const r = await open({
      network: 'allowlist',
      hosts: [`${HOST_GATEWAY}:${webPort}`, `${HOST_GATEWAY}:${echoPort}`],
    });
    const env = await r.sh('env | grep -i -E "^(https?_proxy|no_proxy|npm_config_https?_proxy)=" | sort');
    assert.match(env, /^HTTPS_PROXY=http:\/\/127\.0\.0\.1:3128$/m, env);
    assert.match(env, /^NO_PROXY=localhost,127\.0\.0\.1,::1$/m, env);
    assert.match(env, /^npm_config_https_proxy=http:\/\/127\.0\.0\.1:3128$/m, env);
    // Plain HTTP (an absolute URI to the proxy), and the same server through a CONNECT tunnel (-p).
    assert.match(await r.sh(`curl -sS http://${HOST_GATEWAY}:${webPort}/plain`), /web-answered \/plain/);
    assert.match(await r.sh(`curl -sS -p http://${HOST_GATEWAY}:${webPort}/tunnel`), /web-answered \/tunnel/);
    assert.match(
      await r.sh(
        `python3 -c "import urllib.request; print(urllib.request.urlopen('http://${HOST_GATEWAY}:${webPort}/python', timeout=30).read().decode())"`,
      ),
      /web-answered \/python/,
    );
    // A raw TCP service (the echo server) through CONNECT, from Node's http client.
    assert.match(await r.sh(nodeConnect(`${HOST_GATEWAY}:${echoPort}`)), /tunnel: ping/);
    // The terminal found its shell, not the forwarder beside it (a session of its own).
    const socketPath = endpoint(r).socket;
    assert.ok(existsSync(socketPath));
    const shell = r.terminal.shellPid!;
    assert.ok(!readFileSync(`/proc/${shell}/cmdline`, 'utf8').includes('forwarder.js'), 'the shell is the shell');
    const forwarders = listProcesses().filter((p) => {
      try {
        const argv = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0');
        return argv[1] === endpoint(r).forwarder && argv[2] === 'serve';
      } catch {
        return false;
      }
    });
    assert.equal(forwarders.length, 1, 'one forwarder runs');
    assert.notEqual(forwarders[0]!.session, listProcesses().find((p) => p.pid === shell)!.session);
    // The header records the mode and the hosts; the line the chat and the status bar show says so.
    const summary = r.sandbox.summary;
    assert.equal(summary.network, 'allowlist');
    assert.deepEqual(summary.hosts, [`${HOST_GATEWAY}:${webPort}`, `${HOST_GATEWAY}:${echoPort}`]);
    assert.ok(
      Header.safeParse({
        lar: 1,
        type: 'header',
        task: 't',
        workflow: 'builtin:default-coding',
        started: '2026-01-01T00:00:00Z',
        sandbox: summary,
      }).success,
    );
    assert.match(describeSandbox(summary), /network: 2 allowed hosts/);
    const end = await close(r);
    const allowed = end.network?.find((t) => t.host === HOST_GATEWAY && t.port === webPort && t.allowed);
    assert.ok(allowed && allowed.count >= 3, JSON.stringify(end.network));
    assert.ok(end.network?.some((t) => t.port === echoPort && t.allowed));
    assert.deepEqual(
      end.network?.filter((t) => !t.allowed),
      [],
    );
    // Closed with the run: the forwarder with its sandbox, the proxy's socket with the scratch folder.
    const gone = (pid: number): boolean => {
      try {
        return !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('forwarder.js\0serve');
      } catch {
        return true;
      }
    };
    for (let i = 0; i < 100 && !forwarders.every((p) => gone(p.pid)); i++)
      await new Promise((res) => setTimeout(res, 100));
    assert.ok(
      forwarders.every((p) => gone(p.pid)),
      'the forwarder is gone',
    );
    assert.ok(!existsSync(socketPath), 'the proxy socket is gone');
  });

  test('a host that is not listed is refused with 403, saying it is not in the allowlist and how to add it', async () => {
    const r = await open({ network: 'allowlist', hosts: [`${HOST_GATEWAY}:${webPort}`] });
    const before = otherHits;
    const plain = await r.sh(`curl -sS -i http://${HOST_GATEWAY}:${otherPort}/`);
    assert.match(plain, /^HTTP\/1\.1 403 /m, plain);
    assert.match(
      plain,
      new RegExp(
        `${HOST_GATEWAY}:${otherPort} is not in this workflow's network allowlist \\(sandbox\\.hosts: ${HOST_GATEWAY}:${webPort}\\)`,
      ),
      plain,
    );
    assert.match(plain, new RegExp(`add "${HOST_GATEWAY}:${otherPort}" to sandbox\\.hosts`), plain);
    // CONNECT: refused before any tunnel; the reason is in the status line, which Python and pip print.
    assert.match(
      await r.sh(nodeConnect(`${HOST_GATEWAY}:${otherPort}`)),
      new RegExp(`status 403 ${HOST_GATEWAY}:${otherPort} is not in the workflow's allowlist`),
    );
    const py = await r.sh(
      `python3 -c "import urllib.request; urllib.request.urlopen('https://${HOST_GATEWAY}:${otherPort}/', timeout=30)" 2>&1 | tail -1`,
    );
    assert.match(py, /Tunnel connection failed: 403 .*not in the workflow's allowlist/, py);
    // The listed host on another port is another host.
    assert.match(
      await r.sh(
        `curl -sS -o /dev/null -w '%{http_code}' http://${HOST_GATEWAY}:${otherPort + 1 === webPort ? otherPort + 2 : otherPort + 1}/`,
      ),
      /^403$/,
    );
    assert.equal(otherHits, before, 'the unlisted server saw nothing');
    const end = await close(r);
    const refused = end.network?.find((t) => t.port === otherPort && !t.allowed);
    assert.ok(
      refused && refused.count >= 3 && /not in the workflow's allowlist/.test(refused.reason ?? ''),
      JSON.stringify(end.network),
    );
  });

  test('direct connections, around the proxy, reach nothing; the proxy socket itself refuses the same', async () => {
    const r = await open({ network: 'allowlist', hosts: [`${HOST_GATEWAY}:${webPort}`] });
    const before = webHits + otherHits;
    // The host's loopback is not the sandbox's; the host's other addresses are not routed at all.
    const hostAddresses = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.family === 'IPv4' && !a.internal)
      .map((a) => a!.address);
    for (const addr of ['127.0.0.1', ...hostAddresses]) {
      const out = await r.sh(
        `curl -sS --noproxy '*' --connect-timeout 5 http://${addr}:${webPort}/ 2>&1; echo "exit $?"`,
      );
      assert.doesNotMatch(out, /web-answered/, out);
      assert.doesNotMatch(out, /exit 0$/m, out);
    }
    // Without the proxy the name means nothing inside.
    const direct = await r.sh(`curl -sS --noproxy '*' http://${HOST_GATEWAY}:${webPort}/ 2>&1; echo "exit $?"`);
    assert.match(direct, /Could not resolve host/, direct);
    // The proxy's socket is inside (read-only): asked directly, it judges the same.
    const socket = endpoint(r).socket;
    const raw = await r.sh(
      `curl -sS --unix-socket ${socket} --request-target http://${HOST_GATEWAY}:${otherPort}/ -o /dev/null -w '%{http_code}' http://x/`,
    );
    assert.match(raw, /^403$/, raw);
    assert.equal(webHits + otherHits, before, 'no server saw a request');
    await close(r);
  });

  test('a wildcard matches subdomains (any case), not the bare domain nor a suffix trick; only allowed names are resolved', async () => {
    const lookup = resolver({});
    const r = await open({ network: 'allowlist', hosts: ['*.example.org'] }, { lookup });
    const code = async (url: string, connect = false): Promise<string> =>
      (
        await r.sh(
          connect
            ? `curl -s -p -o /dev/null -w '%{http_connect}' ${url}`
            : `curl -s -o /dev/null -w '%{http_code}' ${url}`,
        )
      ).trim();
    // Allowed by the list, then not resolvable: 502, not 403.
    for (const url of ['http://a.example.org/', 'http://deep.a.example.org/', 'http://A.Example.ORG/'])
      assert.equal(await code(url), '502', url);
    assert.equal(await code('https://a.example.org/', true), '502');
    for (const url of [
      'http://example.org/',
      'http://evil-example.org/',
      'http://aexample.org/',
      'http://example.org.evil.net/',
      'http://a.example.org:8080/',
    ])
      assert.equal(await code(url), '403', url);
    assert.equal(await code('https://evil-example.org/', true), '403');
    assert.deepEqual([...new Set(lookup.asked)].sort(), ['a.example.org', 'deep.a.example.org']);
    await close(r);
  });

  test('DNS rebinding: a listed name whose answer is the host itself, link-local, or private for a wildcard, is refused', async () => {
    const lookup = resolver({
      'rebind.example.org': ['127.0.0.1'],
      'mapped.example.org': ['::ffff:127.0.0.1'],
      'metadata.example.org': ['169.254.169.254'],
      'a.corp.example': ['10.0.0.5'],
    });
    const r = await open(
      {
        network: 'allowlist',
        hosts: [
          `rebind.example.org:${webPort}`,
          `mapped.example.org:${webPort}`,
          'metadata.example.org',
          '*.corp.example',
        ],
      },
      { lookup },
    );
    const before = webHits;
    for (const [url, kind] of [
      [`http://rebind.example.org:${webPort}/`, 'loopback'],
      [`http://mapped.example.org:${webPort}/`, 'loopback'],
      ['http://metadata.example.org/latest/meta-data/', 'link-local'],
      ['http://a.corp.example/', 'private'],
    ] as const) {
      const out = await r.sh(`curl -sS -i ${url}`);
      assert.match(out, /^HTTP\/1\.1 403 /m, out);
      assert.match(out, new RegExp(`resolves only to ${kind} addresses`), out);
    }
    assert.equal(webHits, before, 'the host loopback server saw nothing');
    await close(r);
  });

  test('the outcome check gets the same allowlist, through the same proxy', async () => {
    const r = await open(
      { network: 'allowlist', hosts: [`${HOST_GATEWAY}:${webPort}`] },
      {
        outcome: `curl -sSf http://${HOST_GATEWAY}:${webPort}/fixture && ! curl -sSf http://${HOST_GATEWAY}:${otherPort}/`,
      },
    );
    const before = webHits;
    const event = await r.sandbox.outcome(() => r.terminal.close());
    assert.equal(event.exitCode, 0, event.output);
    assert.equal(event.sandboxed, true);
    assert.match(event.output ?? '', /web-answered \/fixture/);
    assert.equal(webHits, before + 1);
    const end = await close(r);
    assert.ok(
      end.network?.some((t) => t.port === otherPort && !t.allowed),
      JSON.stringify(end.network),
    );
  });

  test('npm install from a registry on the host works through the proxy, and fails with network "none"', async () => {
    const reg = await tinyRegistry();
    try {
      const install = `npm install --registry http://${HOST_GATEWAY}:${reg.port}/ --no-audit --no-fund --no-update-notifier --fetch-retries=0 --fetch-timeout=30000 lar-fixture-pkg 2>&1; echo "exit $?"`;
      const r = await open({ network: 'allowlist', hosts: [`${HOST_GATEWAY}:${reg.port}`] });
      const out = await r.sh(install);
      assert.match(out, /exit 0$/m, out);
      assert.match(await r.sh('node -e "console.log(require(\'lar-fixture-pkg\'))"'), /lar-fixture-answer/);
      assert.ok(
        reg.served.includes('/lar-fixture-pkg') && reg.served.some((u) => u.endsWith('.tgz')),
        reg.served.join(' '),
      );
      await close(r);

      const served = reg.served.length;
      const none = await open({ network: 'none' });
      const failed = await none.sh(install);
      assert.doesNotMatch(failed, /exit 0$/m, failed);
      assert.match(failed, /ENOTFOUND|EAI_AGAIN|getaddrinfo/, failed);
      assert.ok(!existsSync(join(none.ws, 'node_modules', 'lar-fixture-pkg')));
      assert.equal(reg.served.length, served, 'the registry saw nothing');
      await close(none);
    } finally {
      reg.server.close();
    }
  });
});

/** An npm registry on the host with one package, lar-fixture-pkg 1.0.0 (its metadata and its tarball). */
async function tinyRegistry(): Promise<{ server: Server; port: number; served: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'lar-registry-'));
  mkdirSync(join(dir, 'package'));
  writeFileSync(
    join(dir, 'package', 'package.json'),
    JSON.stringify({ name: 'lar-fixture-pkg', version: '1.0.0', main: 'index.js' }),
  );
  writeFileSync(join(dir, 'package', 'index.js'), "module.exports = 'lar-fixture-answer';\n");
  execFileSync('tar', ['-czf', join(dir, 'pkg.tgz'), '-C', dir, 'package']);
  const tarball = readFileSync(join(dir, 'pkg.tgz'));
  rmSync(dir, { recursive: true, force: true });
  const served: string[] = [];
  let port = 0;
  const server = createServer((req, res) => {
    served.push(req.url ?? '');
    if (req.url === '/lar-fixture-pkg') {
      const version = {
        name: 'lar-fixture-pkg',
        version: '1.0.0',
        main: 'index.js',
        dist: {
          tarball: `http://${HOST_GATEWAY}:${port}/lar-fixture-pkg/-/lar-fixture-pkg-1.0.0.tgz`,
          shasum: createHash('sha1').update(tarball).digest('hex'),
          integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
        },
      };
      res.setHeader('Content-Type', 'application/json');
      res.end(
        JSON.stringify({ name: 'lar-fixture-pkg', 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': version } }),
      );
    } else if (req.url === '/lar-fixture-pkg/-/lar-fixture-pkg-1.0.0.tgz') {
      res.setHeader('Content-Type', 'application/octet-stream');
      res.end(tarball);
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  port = await listen(server);
  return { server, port, served };
}

describe('the allowlist rules, without a sandbox', () => {
  const entries = (...hosts: string[]): HostEntry[] => hosts.map((h) => parseHostEntry(h) as HostEntry);

  test('entries: names, wildcards over a domain, addresses, optional ports; nothing else', () => {
    assert.deepEqual(parseHostEntry('Registry.NPMjs.org'), { host: 'registry.npmjs.org', wildcard: false, ip: false });
    assert.deepEqual(parseHostEntry('*.pypi.org:8443'), { host: 'pypi.org', port: 8443, wildcard: true, ip: false });
    assert.deepEqual(parseHostEntry('10.0.0.5:8080'), { host: '10.0.0.5', port: 8080, wildcard: false, ip: true });
    assert.deepEqual(parseHostEntry('[FD00::5]'), { host: 'fd00::5', wildcard: false, ip: true });
    for (const bad of [
      '',
      '*',
      '*.org',
      '*.10.0.0.5',
      'http://example.org',
      'example.org/path',
      'user@example.org',
      'example.org:0',
      'example.org:70000',
      'exa mple.org',
      '-x.org',
      'a..b',
      '1.2.3.999',
      '1.2.3',
      'fd00::5',
      '*example.org',
      'example.*.org',
    ]) {
      assert.equal(typeof parseHostEntry(bad), 'string', bad);
      assert.ok(
        !Workflow.safeParse({ ...workflowInput(), sandbox: { network: 'allowlist', hosts: [bad] } }).success,
        bad,
      );
    }
  });

  test('matching: by the name asked for, case-insensitive, wildcards for subdomains only, the port when given (else 443 and 80)', () => {
    const e = entries('registry.npmjs.org', '*.example.org', 'pinned.example.net:8443', '[::1]:9000');
    assert.equal(allowingEntry(e, 'registry.npmjs.org', 443)?.host, 'registry.npmjs.org');
    assert.equal(allowingEntry(e, 'REGISTRY.npmjs.org.', 80)?.host, 'registry.npmjs.org');
    assert.equal(allowingEntry(e, 'registry.npmjs.org', 8080), undefined);
    assert.equal(allowingEntry(e, 'evil.registry.npmjs.org', 443), undefined);
    assert.equal(allowingEntry(e, 'a.b.example.org', 443)?.wildcard, true);
    for (const h of ['example.org', 'evil-example.org', 'aexample.org', 'example.org.evil.net'])
      assert.equal(allowingEntry(e, h, 443), undefined, h);
    assert.ok(allowingEntry(e, 'pinned.example.net', 8443));
    assert.equal(allowingEntry(e, 'pinned.example.net', 443), undefined);
    assert.ok(allowingEntry(e, '::1', 9000));
  });

  test('address ranges, IPv4 inside IPv6 included', () => {
    const table: Record<string, string> = {
      '93.184.215.14': 'public',
      '2606:4700::6810:84e5': 'public',
      '127.0.0.1': 'loopback',
      '127.255.0.9': 'loopback',
      '::1': 'loopback',
      '::ffff:127.0.0.1': 'loopback',
      '::ffff:7f00:1': 'loopback',
      '64:ff9b::7f00:1': 'loopback',
      '2002:7f00:1::1': 'loopback',
      '0.0.0.0': 'unspecified',
      '::': 'unspecified',
      '169.254.169.254': 'link-local',
      'fe80::1%eth0': 'link-local',
      '10.1.2.3': 'private',
      '172.16.0.1': 'private',
      '172.32.0.1': 'public',
      '192.168.1.1': 'private',
      '100.64.0.1': 'private',
      'fd00::5': 'private',
      '224.0.0.1': 'multicast',
      'ff02::1': 'multicast',
      '255.255.255.255': 'reserved',
    };
    for (const [ip, kind] of Object.entries(table)) assert.equal(addressClass(ip), kind, ip);
  });

  test('what a listed entry may reach: an exact name public and private networks, a wildcard public only, an address itself, host.lar.internal the host loopback', async () => {
    const lookup = resolver({
      'registry.corp.example': ['10.0.0.5'],
      'a.corp.example': ['10.0.0.6'],
      'mixed.example.org': ['127.0.0.1', '93.184.215.14'],
      'public.example.org': ['93.184.215.14'],
    });
    const dir = mkdtempSync(join(tmpdir(), 'lar-proxy-'));
    const proxy = await AllowlistProxy.start({
      hosts: [
        'registry.corp.example',
        '*.corp.example',
        'mixed.example.org',
        '*.example.org',
        '10.9.9.9:22',
        `${HOST_GATEWAY}:4873`,
        '*.lar.internal',
      ],
      socketPath: join(dir, 'p.sock'),
      lookup,
    });
    try {
      assert.deepEqual(await proxy.decide('registry.corp.example', 443), { ok: true, addresses: ['10.0.0.5'] });
      assert.equal((await proxy.decide('a.corp.example', 443)).ok, false);
      // Only the acceptable answers are kept, and those are what is connected to (never resolved again).
      assert.deepEqual(await proxy.decide('mixed.example.org', 443), { ok: true, addresses: ['93.184.215.14'] });
      assert.deepEqual(await proxy.decide('public.example.org', 443), { ok: true, addresses: ['93.184.215.14'] });
      assert.deepEqual(await proxy.decide('10.9.9.9', 22), { ok: true, addresses: ['10.9.9.9'] });
      assert.deepEqual(await proxy.decide(HOST_GATEWAY, 4873), { ok: true, addresses: ['127.0.0.1', '::1'] });
      // The host loopback only by its own name, listed exactly: a wildcard over it is an ordinary name.
      const viaWildcard = await proxy.decide(HOST_GATEWAY, 443);
      assert.ok(!viaWildcard.ok && viaWildcard.status === 502, JSON.stringify(viaWildcard));
      const notListed = await proxy.decide('10.9.9.9', 443);
      assert.ok(
        !notListed.ok && notListed.status === 403 && /add "10\.9\.9\.9"/.test(notListed.message),
        JSON.stringify(notListed),
      );
    } finally {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
    assert.deepEqual(
      readdirSync(tmpdir()).filter((f) => f === 'p.sock'),
      [],
    );
  });

  test('lar workflow check: an allowlist needs hosts, hosts need an allowlist, and localhost is not the host', () => {
    const codes = (sandbox: Record<string, unknown>) =>
      checkWorkflow(Workflow.parse({ ...workflowInput(), sandbox })).map(
        (p) => `${p.severity} ${p.code} ${p.path.join('.')}`,
      );
    assert.deepEqual(
      codes({ network: 'allowlist', hosts: ['registry.npmjs.org', '*.pypi.org', `${HOST_GATEWAY}:4873`] }),
      [],
    );
    assert.deepEqual(codes({ network: 'allowlist' }), ['error workflow.sandbox_network sandbox.network']);
    assert.deepEqual(codes({ network: 'none', hosts: ['registry.npmjs.org'] }), [
      'error workflow.sandbox_network sandbox.hosts',
    ]);
    assert.deepEqual(codes({ network: 'host', hosts: ['registry.npmjs.org'] }), [
      'error workflow.sandbox_network sandbox.hosts',
    ]);
    assert.deepEqual(codes({ network: 'allowlist', hosts: ['localhost:4873', '127.0.0.1:8080'] }), [
      'warning workflow.sandbox_network sandbox.hosts.0',
      'warning workflow.sandbox_network sandbox.hosts.1',
    ]);
  });
});

function workflowInput(): WorkflowInput {
  return {
    lar: 1,
    id: 'w',
    stages: [{ id: 'work', tools: ['submit'], budget: 5 }],
    transitions: {},
    start: 'work',
    terminal: ['work'],
    outcome: { command: 'true' },
  };
}
