/**
 * The escape suite: every attack runs as a real command in the real sandbox
 * (bubblewrap, node-pty, the user's kinds of shell), and each test checks
 * that the operating system stopped it and that nothing outside changed
 * (the files outside are hashed before and after). Then ordinary work, which
 * must still work inside, and the reward hacks against the outcome check.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planSandbox, type ConfinedPlan } from '../../core/sandbox/plan';
import { RunSandbox } from '../../core/sandbox/run';
import { execAllowed, runtimeRoot } from '../../core/sandbox/scratch';
import { SandboxSection, Workflow, type WorkflowInput } from '../../core/schema/workflow';
import { TerminalSession } from '../../core/shell/session';
import type { RunResult } from '../../core/shell/types';
import { alive, listProcesses } from '../../core/shell/procs';
import { createToolExecutor } from '../../core/tools/executor';
import { NodeWorkspaceFs } from '../../core/workspace/node-fs';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import { TrajectoryConflictError, TrajectoryWriter } from '../../core/agent/trajectory-writer';
import {
  ATTACKS,
  FISH_ATTACKS,
  LURKER,
  PRINTF_PROGRAM,
  isTypedLineTail,
  lurkerStoppedTheShell,
  laterCommandsTellTheTruth,
} from '../support/status-attacks';

const linux = process.platform === 'linux';
// On Linux the suite runs: setup installs bubblewrap, and a sandbox that cannot start is a failure here, not a skip.
const skip = linux ? false : 'bubblewrap is Linux only';

const SHELLS = ['/bin/bash', '/usr/bin/zsh', '/usr/bin/fish', '/bin/sh'].filter((s) => existsSync(s));
const API_KEY = 'sk-lar-test-0123456789abcdef';
const SECRETS = ['PRIVATE-SSH-KEY-4f1c', 'AWS-SECRET-77ab', 'npm_TOKEN_d00d', 'NOTES-SECRET-9e9e'];

/** sha-256 over every path, kind, mode and content below `dir`. */
function hashTree(dir: string): string {
  const h = createHash('sha256');
  const walk = (p: string, rel: string): void => {
    const st = lstatSync(p);
    h.update(`${rel}\0${st.mode}\0`);
    if (st.isSymbolicLink()) h.update(readlinkSync(p));
    else if (st.isDirectory()) for (const n of readdirSync(p).sort()) walk(join(p, n), `${rel}/${n}`);
    else h.update(readFileSync(p));
  };
  walk(dir, '.');
  return h.digest('hex');
}

interface Box {
  base: string;
  ws: string;
  home: string;
  outside: string;
  plan: ConfinedPlan;
  terminal: TerminalSession;
  run(command: string, timeoutMs?: number): Promise<RunResult>;
  /** The hash of everything outside the workspace that the sandbox could name. */
  outsideHash(): string;
}

const boxes: Box[] = [];
after(() => {
  for (const b of boxes) {
    b.terminal.dispose();
    rmSync(b.base, { recursive: true, force: true });
  }
});

/** A workspace, a home with secrets, a folder outside it (visible read-only inside), and a sandboxed terminal. */
function box(opts: { shell?: string; section?: Record<string, unknown>; prepare?: (ws: string) => void } = {}): Box {
  const base = mkdtempSync(join(tmpdir(), 'lar-sbx-'));
  const ws = join(base, 'ws');
  const home = join(base, 'home');
  const outside = join(base, 'outside');
  for (const d of [ws, join(home, '.ssh'), join(home, '.aws'), outside]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), SECRETS[0]!);
  writeFileSync(join(home, '.aws', 'credentials'), `[default]\naws_secret_access_key = ${SECRETS[1]}\n`);
  writeFileSync(join(home, '.npmrc'), `//registry.npmjs.org/:_authToken=${SECRETS[2]}\n`);
  writeFileSync(join(home, 'notes.txt'), SECRETS[3]!);
  writeFileSync(join(outside, 'keep.txt'), 'outside the workspace\n');
  mkdirSync(join(outside, 'sub'));
  writeFileSync(join(outside, 'sub', 'data.bin'), Buffer.from([0, 1, 2, 3]));
  opts.prepare?.(ws);
  const shell = opts.shell ?? '/bin/bash';
  const section = SandboxSection.parse({ readable: [outside], ...opts.section });
  const hostEnv = { ...process.env, HOME: home, LAR_API_KEY: API_KEY, OPENAI_API_KEY: API_KEY };
  const shellDir = join(base, 'shell');
  mkdirSync(shellDir);
  const plan = planSandbox({
    workspace: ws,
    section,
    setting: 'required',
    hostEnv,
    shell,
    home,
    alsoReadable: [shellDir],
  });
  assert.ok(
    plan.confined,
    `the sandbox must start here (setup installs bubblewrap): ${plan.confined ? '' : `${plan.summary.reason}; ${plan.fix}`}`,
  );
  const outputDir = join(ws, '.lar', 'output', 'test');
  const terminal = new TerminalSession({
    cwd: ws,
    env: plan.env,
    outputDir,
    shell,
    launcher: plan.launcher,
    shellCopyDir: shellDir,
    inputIdleMs: 1500,
  });
  const b: Box = {
    base,
    ws,
    home,
    outside,
    plan,
    terminal,
    run: (command, timeoutMs = 30_000) => terminal.run(command, { timeoutMs }),
    outsideHash: () => hashTree(outside) + hashTree(home),
  };
  boxes.push(b);
  return b;
}

async function attack(b: Box, command: string): Promise<RunResult> {
  const before = b.outsideHash();
  const r = await b.run(command);
  assert.equal(b.outsideHash(), before, `nothing outside changed after ${command}\n${r.output}`);
  return r;
}

const readOnly = /Read-only file system|EROFS|Permission denied|EACCES|Operation not permitted/;

describe('the sandbox stops writes outside the workspace', { skip }, () => {
  for (const [how, command] of [
    ['python3 -c', `python3 -c "open('OUT/keep.txt','w').write('x')"`],
    ['node -e', `node -e "require('fs').writeFileSync('OUT/keep.txt','x')"`],
    ['a written script', `printf '#!/bin/sh\\necho x > OUT/keep.txt\\n' > s.sh && chmod +x s.sh && ./s.sh`],
    ['find -exec', `find OUT -type f -exec sh -c 'echo x >> "$1"' _ {} \\;`],
    ['rm -rf', 'rm -rf OUT'],
    ['mv and ln', 'mv OUT/keep.txt OUT/moved.txt; ln -sf /etc/passwd OUT/sub/link'],
    ['the system', 'echo x > /etc/lar-test && touch /usr/lar-test'],
  ] as const) {
    test(`${how}: the operating system refuses, nothing outside changes`, async () => {
      const b = box();
      const r = await attack(b, command.replaceAll('OUT', b.outside));
      assert.match(r.output, readOnly, r.output);
      // find -exec reports success whatever the command it ran did.
      if (how !== 'find -exec') assert.notEqual(r.exitCode, 0);
    });
  }

  test('the workspace itself is writable: files made there are on the host', async () => {
    const b = box();
    const r = await b.run('echo made-inside > made.txt && mkdir -p a/b && cp made.txt a/b/ && cat a/b/made.txt');
    assert.equal(r.exitCode, 0, r.output);
    assert.equal(readFileSync(join(b.ws, 'a', 'b', 'made.txt'), 'utf8'), 'made-inside\n');
  });
});

describe('the sandbox hides the home folder and the secrets of the session', { skip }, () => {
  test('~/.ssh, ~/.aws, ~/.npmrc and a secret file in $HOME are not there', async () => {
    const b = box();
    const r = await attack(
      b,
      `cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.npmrc ~/notes.txt ${b.home}/notes.txt; ls -A ~; ls -A /root /home 2>&1; grep -r -a -h -e SECRET -e TOKEN -e KEY ~ 2>/dev/null | head -3`,
    );
    for (const s of SECRETS) assert.ok(!r.output.includes(s), `${s} leaked:\n${r.output}`);
    assert.match(r.output, /No such file or directory/);
  });

  test('the API key is in neither the environment nor /proc, and no process of the host is visible', async () => {
    const b = box();
    const r = await attack(
      b,
      `env; cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr '\\0' '\\n'; ls /proc | grep -c '^[0-9]'; kill -0 ${process.pid} && echo HOST-VISIBLE; cat /proc/${process.pid}/environ 2>&1 | head -c 200`,
    );
    assert.ok(!r.output.includes(API_KEY), r.output);
    assert.ok(!r.output.includes('HOST-VISIBLE'), r.output);
    // Only the sandbox's own processes: its init, the shell, and what this command started.
    const count = Number(/^(\d+)$/m.exec(r.output)?.[1]);
    assert.ok(count > 0 && count < 10, `${count} processes visible:\n${r.output}`);
    assert.match(r.output, /LAR_SANDBOX=bubblewrap/);
    assert.doesNotMatch(r.output, /^(LAR_API_KEY|OPENAI_API_KEY)=/m);
  });

  test(
    "the kernel keyrings (not namespaced: the user's session keyring) are out of reach",
    { skip: !['x64', 'arm64'].includes(process.arch) },
    async () => {
      const b = box();
      const nr = process.arch === 'x64' ? 250 : 219;
      // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0): outside it names the session keyring.
      const probe = `python3 -c "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.syscall(${nr}, 0, -3, 0); print('keyctl', r, os.strerror(ctypes.get_errno()))"`;
      const outside = spawnSync('sh', ['-c', probe], { encoding: 'utf8' }).stdout;
      assert.match(outside, /^keyctl \d+ /, 'outside the sandbox the session keyring is there');
      const r = await attack(b, probe);
      assert.match(r.output, /keyctl -1 Operation not permitted/, r.output);
    },
  );

  test('a process of the host cannot be killed from inside', async () => {
    const b = box();
    const victim = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const r = await attack(b, `kill -9 ${victim.pid}; kill -9 -1; echo after-kill`);
      assert.match(r.output, /No such process|after-kill/);
      assert.ok(alive(victim.pid!), 'the host process is still alive');
    } finally {
      victim.kill('SIGKILL');
    }
  });
});

describe('the network is off unless the workflow allows the host network', { skip }, () => {
  let server: Server;
  let port = 0;
  let hits = 0;
  const probe = (p: number): string =>
    `python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:${p}/', timeout=3).read().decode())"`;

  test('set-up: a server on the host loopback', async () => {
    server = createServer((_, res) => {
      hits++;
      res.end('host-server-answered');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });

  test('off (the default): the host loopback server is unreachable', async () => {
    const b = box();
    const before = hits;
    const r = await attack(b, `${probe(port)}; ip -o addr 2>/dev/null || cat /proc/net/dev`);
    assert.ok(!r.output.includes('host-server-answered'), r.output);
    assert.match(r.output, /refused|unreachable|URLError/i);
    assert.equal(hits, before, 'the server saw no request');
  });

  test('network "host": the same server answers', async () => {
    const b = box({ section: { network: 'host' } });
    const r = await b.run(probe(port));
    assert.match(r.output, /host-server-answered/, r.output);
    server.close();
  });
});

describe('nothing the run starts outlives it', { skip }, () => {
  test('a double-forked daemon and a setsid one are gone once the terminal closes', async () => {
    const b = box();
    const mark = `lar-daemon-${process.pid}-${Date.now()}`;
    const r = await b.run(
      `(setsid bash -c 'exec -a ${mark}-a sleep 300' >/dev/null 2>&1 &); (sh -c 'bash -c "exec -a ${mark}-b sleep 300" &' &); nohup sh -c 'while :; do date >> ticks.txt; sleep 0.1; done' >/dev/null 2>&1 & sleep 0.5; echo started`,
    );
    assert.match(r.output, /started/);
    const theirs = (): number[] =>
      listProcesses()
        .map((p) => p.pid)
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(mark);
          } catch {
            return false;
          }
        });
    assert.equal(theirs().length, 2, 'the daemons ran');
    await b.terminal.close();
    assert.deepEqual(theirs(), [], 'no daemon is left');
    const size = readFileSync(join(b.ws, 'ticks.txt'), 'utf8').length;
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(
      readFileSync(join(b.ws, 'ticks.txt'), 'utf8').length,
      size,
      'the loop writing in the workspace has stopped',
    );
  });
});

describe("the run's records and protected paths cannot be changed from inside", { skip }, () => {
  const prepare = (ws: string): void => {
    mkdirSync(join(ws, '.lar', 'runs'), { recursive: true });
    writeFileSync(join(ws, '.lar', 'runs', 'r.lar.jsonl'), '{"lar":1,"type":"header"}\n');
    mkdirSync(join(ws, 'test'));
    writeFileSync(join(ws, 'test', 'a.test.js'), "require('node:assert').equal(1, 2);\n");
    writeFileSync(join(ws, 'package.json'), '{"scripts":{"test":"node --test test/"}}\n');
    spawnSync('git', ['init', '-q', ws]);
  };

  test('.lar/runs: append, rewrite in place, remove and rename all fail', async () => {
    const b = box({ prepare, section: { protected: ['test', 'package.json'] } });
    const before = hashTree(join(b.ws, '.lar', 'runs'));
    const r = await b.run(
      `echo '{"type":"outcome"}' >> .lar/runs/r.lar.jsonl; sed -i 's/header/forged/' .lar/runs/r.lar.jsonl; rm -f .lar/runs/r.lar.jsonl; mv .lar .lar2; ln -s /tmp .lar/runs/x; echo tried`,
    );
    assert.match(r.output, readOnly);
    assert.equal(hashTree(join(b.ws, '.lar', 'runs')), before);
  });

  test('a protected test and package.json: editing, deleting and moving them fail', async () => {
    const b = box({ prepare, section: { protected: ['test', 'package.json'] } });
    const before = hashTree(join(b.ws, 'test')) + readFileSync(join(b.ws, 'package.json'), 'utf8');
    const r = await b.run(
      `echo "require('node:test')('ok', () => {})" > test/a.test.js; rm -rf test; mv test t2; node -e "require('fs').writeFileSync('package.json', '{}')"; echo tried`,
    );
    assert.match(r.output, readOnly);
    assert.equal(hashTree(join(b.ws, 'test')) + readFileSync(join(b.ws, 'package.json'), 'utf8'), before);
  });

  test('git works in the workspace, but its hooks and config (which run outside later) are read-only', async () => {
    const b = box({ prepare });
    const r = await b.run(
      `git add -A && git -c user.name=agent -c user.email=agent@example.invalid commit -qm inside && git log --oneline | wc -l; echo 'touch /tmp/owned' > .git/hooks/pre-commit; git config core.fsmonitor 'touch /tmp/owned'; echo x >> .git/config`,
    );
    assert.match(r.output, /^1$/m, r.output);
    assert.match(r.output, readOnly);
    assert.ok(!existsSync(join(b.ws, '.git', 'hooks', 'pre-commit')));
    assert.doesNotMatch(readFileSync(join(b.ws, '.git', 'config'), 'utf8'), /fsmonitor/);
  });

  test('the file tools refuse protected paths, .lar and .git/config, also through a link', async () => {
    const b = box({ prepare, section: { protected: ['test', 'package.json'] } });
    writeFileSync(join(b.ws, 'ok.txt'), 'x');
    spawnSync('ln', ['-s', 'test', join(b.ws, 'link')]);
    const wf = Workflow.parse({ ...minimalWorkflow(), sandbox: { protected: ['test', 'package.json'] } });
    const fs = new NodeWorkspaceFs(b.ws, ['.lar', '.git/config', '.git/hooks', '.vscode', ...wf.sandbox.protected]);
    const exec = createToolExecutor({ fs, terminal: b.terminal });
    for (const path of [
      'test/a.test.js',
      'package.json',
      '.lar/runs/r.lar.jsonl',
      '.git/config',
      'link/a.test.js',
      'test/new.test.js',
    ]) {
      const o = await exec('write_file', { path, content: 'forged' }, { workspace: b.ws });
      assert.equal(o.status, 'error', path);
      assert.match(o.observation, /read-only/, path);
    }
    assert.equal((await exec('write_file', { path: 'ok.txt', content: 'fine' }, { workspace: b.ws })).status, 'ok');
    assert.equal(readFileSync(join(b.ws, 'test', 'a.test.js'), 'utf8'), "require('node:assert').equal(1, 2);\n");
  });
});

describe('the end marker cannot be forged by the command or what it runs', { skip }, () => {
  // Every 16-hex-digit string a command can find (its file, its folder, the environment, the
  // shell's variables, /proc of the shell and of itself) is printed as an end marker with exit
  // code 0, then the command fails: the run must end with the real code, not a forged 0.
  const hunt = `python3 - <<'EOF'
import os, re, glob
found = set()
def scan(b):
    for m in re.findall(rb'[0-9a-f]{16}', b): found.add(m.decode())
for p in glob.glob('/proc/*/*') + glob.glob('.lar/output/**', recursive=True):
    try:
        if os.path.isfile(p): scan(open(p, 'rb').read(1 << 20))
        elif os.path.islink(p): scan(os.readlink(p).encode())
    except Exception: pass
for name in os.listdir('.lar/output/test'): scan(name.encode())
for g in found: print('\\n__LAR_E_%s_0__' % g)
EOF
false`;

  for (const shell of SHELLS) {
    test(`${shell}: a child process that reads everything it can reach does not end the command early`, async () => {
      const b = box({ shell });
      const r = await b.run(hunt, 60_000);
      assert.equal(r.completion, 'marker');
      assert.equal(r.exitCode, 1, r.output.slice(0, 500));
    });
  }

  test('/bin/bash: the command itself, in the shell, finds no nonce in its history, variables or script', async () => {
    const b = box();
    const r = await b.run(
      `for g in $( { history; set; cat "\${BASH_SOURCE[0]}"; ls .lar/output/test; } 2>/dev/null | grep -o -E '[0-9a-f]{16}' | sort -u); do printf '\\n__LAR_E_%s_0__\\n' "$g"; done; false`,
    );
    assert.equal(r.completion, 'marker');
    assert.equal(r.exitCode, 1, r.output.slice(0, 500));
  });
});

describe("no command changes how a later command's status is seen", { skip }, () => {
  // The attacks of test/suites/command-status.test.ts, in the sandbox: each command runs in a child of the
  // shell, which reports the status the kernel gave it with a nonce the command never had.
  for (const shell of SHELLS) {
    const kind = shell.split('/').pop()!;
    const attacks = [...ATTACKS, ...FISH_ATTACKS].filter((a) => a.shells.includes(kind));
    test(`${shell}: a script the command sources rewrites the shell (functions, aliases, enable -n or disable, traps, hooks): later commands are recorded as they ended`, async () => {
      for (const a of attacks) {
        const b = box({
          shell,
          prepare: (ws) => {
            writeFileSync(join(ws, 'env.sh'), a.script);
            writeFileSync(join(ws, 'printf-program'), PRINTF_PROGRAM, { mode: 0o755 });
          },
        });
        const r = await b.run(`${kind === 'fish' ? 'source' : '.'} ./env.sh`);
        assert.equal(r.completion, 'marker', `${a.title}: ${r.output}`);
        await laterCommandsTellTheTruth(b.terminal, `${shell}, ${a.title}`);
        b.terminal.dispose();
      }
    });

    test(`${shell}: the folder of the shell's channel and of each command's state FIFO cannot be listed, nor its mode changed, from inside`, async () => {
      const b = box({ shell });
      const r = await b.run(
        `${kind === 'fish' ? 'set d (ls -d .lar/output/test/fifo-*)' : 'd=$(ls -d .lar/output/test/fifo-*)'}; ls "$d"; chmod 700 "$d"; ls "$d"; echo checked`,
      );
      assert.match(r.output, /checked/);
      assert.match(r.output, /Permission denied/, r.output);
      assert.match(r.output, /Read-only file system|Operation not permitted/, r.output);
      assert.doesNotMatch(r.output, /\b(ch|st)-[0-9a-f]{16}\b/, r.output);
      await laterCommandsTellTheTruth(b.terminal, shell);
    });

    test(`${shell}: a process left reading the terminal learns nothing from the next line that could end it`, async () => {
      const b = box({ shell, prepare: (ws) => writeFileSync(join(ws, 'lurker.py'), LURKER) });
      assert.equal((await b.run('python3 lurker.py </dev/tty >/dev/tty 2>&1 &')).exitCode, 0);
      await lurkerStoppedTheShell(b.ws);
      const stolen = await b.terminal.run('false', { timeoutMs: 5000 });
      assert.notEqual(
        stolen.exitCode,
        0,
        `the command whose line was taken is not recorded as a success: ${stolen.completion} ${stolen.output}`,
      );
      const saw = readFileSync(join(b.ws, 'lurker-saw.txt'), 'utf8');
      assert.ok(saw.length > 0, 'the lurker read the line typed for the command');
      for (const line of saw.split(/[\r\n]/).filter(Boolean))
        assert.ok(isTypedLineTail(line), `the line carries no nonce: ${JSON.stringify(saw)}`);
      await laterCommandsTellTheTruth(b.terminal, `${shell}, a lurker`);
    });
  }
});

describe('no program a command runs can type into the shell (TIOCSTI)', { skip }, () => {
  // Typed into the shell, this line would make every later command be recorded as exit 0 (the
  // end marker's printf redefined) and leave a file behind to show it ran.
  const injected = `printf() { if [ "$1" = '\\n__LAR_E_%s_%d__\\n' ]; then builtin printf "$1" "$2" 0; else builtin printf "$@"; fi; }; touch injected\n`;
  const python = `import fcntl, termios
for c in open('line.txt', 'rb').read():
    try:
        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
    except OSError as e:
        print('TIOCSTI', e.strerror)
        break
`;
  // libc's ioctl; the raw system call with high bits in the request (the kernel keeps the low 32);
  // and on x86-64 the 32-bit entry (int 0x80: i386 numbers, AUDIT_ARCH_I386), keyctl included.
  const c = `#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
static long int80(long nr, long a, long b, long c) {
#if defined(__x86_64__)
  long r;
  __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "r8", "r9", "r10", "r11", "memory");
  return r;
#else
  (void)nr; (void)a; (void)b; (void)c;
  return -ENOSYS;
#endif
}
int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "libc";
  /* Below 4 GiB, for the 32-bit entry's pointers. */
  char *line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  FILE *f = fopen("line.txt", "rb");
  size_t n = fread(line, 1, 4000, f);
  fclose(f);
  if (!strcmp(how, "keyctl-int80")) {
    long r = int80(288, 0, -3, 0); /* keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) */
    printf("keyctl-int80 %ld %s\\n", r, r < 0 ? strerror((int)-r) : "ok");
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    long r;
    int err = 0;
    if (!strcmp(how, "libc")) { r = ioctl(0, TIOCSTI, line + i); err = errno; }
    else if (!strcmp(how, "high-bits")) { r = syscall(SYS_ioctl, 0, 0xdead000000000000UL | TIOCSTI, line + i); err = errno; }
    else { r = int80(54, 0, TIOCSTI, (long)(line + i)); if (r < 0) { err = (int)-r; r = -1; } }
    if (r < 0) { printf("TIOCSTI %s %s\\n", how, strerror(err)); return 0; }
  }
  printf("TIOCSTI %s typed %zu bytes\\n", how, n);
  return 0;
}
`;
  const prepare = (ws: string): void => {
    writeFileSync(join(ws, 'line.txt'), injected);
    writeFileSync(join(ws, 'inject.py'), python);
    writeFileSync(join(ws, 'inject.c'), c);
    const cc = spawnSync('gcc', ['-O0', '-o', join(ws, 'inject'), join(ws, 'inject.c')], { encoding: 'utf8' });
    assert.equal(cc.status, 0, cc.stderr);
  };

  /** The attack, then a failing command: it must be recorded as failing, and the typed line must never have run. */
  async function typedLineNeverRuns(command: string, refused: RegExp): Promise<void> {
    const b = box({ prepare });
    const r = await b.run(command);
    assert.match(r.output, refused, r.output);
    const next = await b.run('false');
    assert.equal(next.exitCode, 1, `a failing command is recorded as failing: ${next.output}`);
    assert.equal((await b.run('echo still-here')).output, 'still-here\n');
    assert.ok(!existsSync(join(b.ws, 'injected')), 'the typed line never ran');
  }

  test('python3 (fcntl.ioctl): TIOCSTI fails with EPERM and no line reaches the shell', async () => {
    await typedLineNeverRuns('python3 inject.py', /^TIOCSTI Operation not permitted$/m);
  });

  test("a C program (libc's ioctl): TIOCSTI fails with EPERM and no line reaches the shell", async () => {
    await typedLineNeverRuns('./inject libc', /^TIOCSTI libc Operation not permitted$/m);
  });

  test('a C program with high bits set in the request (the kernel reads only the low 32): EPERM, no line reaches the shell', async () => {
    await typedLineNeverRuns('./inject high-bits', /^TIOCSTI high-bits Operation not permitted$/m);
  });

  test(
    'a C program through the 32-bit entry (int 0x80, i386 numbers): TIOCSTI and keyctl fail with EPERM',
    { skip: process.arch !== 'x64' },
    async (t) => {
      const b = box({ prepare });
      // Outside, the same call names the session keyring: the kernel has the 32-bit entry.
      const outside = spawnSync(join(b.ws, 'inject'), ['keyctl-int80'], { cwd: b.ws, encoding: 'utf8' }).stdout;
      if (!/^keyctl-int80 \d+ ok$/m.test(outside)) return t.skip(`this kernel has no 32-bit entry (${outside.trim()})`);
      const k = await b.run('./inject keyctl-int80');
      assert.match(k.output, /^keyctl-int80 -1 Operation not permitted$/m, k.output);
      await typedLineNeverRuns('./inject int80', /^TIOCSTI int80 Operation not permitted$/m);
    },
  );
});

describe('ordinary work still works inside', { skip }, () => {
  test('node, python3, a C compiler, /tmp, npm test and exit codes', async () => {
    const b = box({
      prepare: (ws) => {
        writeFileSync(join(ws, 'package.json'), '{"scripts":{"test":"node --test test/"}}\n');
        mkdirSync(join(ws, 'test'));
        writeFileSync(join(ws, 'test', 'ok.test.js'), "require('node:test')('passes', () => {});\n");
      },
    });
    const r = await b.run(
      `node -e "console.log('node', 6 * 7)" && python3 -c "print('python', 6 * 7)" && printf 'int main(){return 7;}' > /tmp/t.c && cc -o /tmp/t /tmp/t.c && { /tmp/t; echo "c $?"; } && echo tmp-ok > /tmp/x && cat /tmp/x && npm test 2>&1 | grep -E '^# (tests|pass)'`,
    );
    assert.equal(r.exitCode, 0, r.output);
    assert.match(r.output, /node 42\npython 42\nc 7\ntmp-ok\n# tests 1\n# pass 1/);
    assert.equal((await b.run('exit_code() { return 3; }; exit_code')).exitCode, 3);
  });

  test(
    'zsh is itself in the sandbox (its execute-only copy is named after it: zsh emulates sh under a name starting with s)',
    { skip: !SHELLS.includes('/usr/bin/zsh') },
    async () => {
      const b = box({ shell: '/usr/bin/zsh' });
      assert.equal((await b.run('emulate; echo *.none(N) globbed')).output, 'zsh\nglobbed\n');
    },
  );

  test('job control, a timeout, and a command waiting for input', async () => {
    const b = box();
    const jobs = await b.run('sleep 5 & jobs; kill %1; wait; echo jobs-done');
    assert.match(jobs.output, /\[1\]\+? *Running +sleep 5/);
    assert.match(jobs.output, /jobs-done/);
    const slow = await b.terminal.run('sleep 30', { timeoutMs: 800 });
    assert.equal(slow.completion, 'timeout');
    const waits = await b.run('read -r answer; echo "got $answer"');
    assert.equal(waits.waitingForInput, true);
    assert.equal((await b.run('echo still-here')).output, 'still-here\n');
  });

  test('200 MB of output', async () => {
    const b = box();
    const r = await b.run('head -c 200000000 /dev/zero | tr "\\0" "a"; echo; echo end-of-output', 120_000);
    assert.equal(r.exitCode, 0);
    assert.ok(r.outputBytes >= 200_000_000, String(r.outputBytes));
    assert.match(r.output, /end-of-output\n?$/);
  });
});

describe('the sandbox is bounded: memory, tasks and the size of its tmpfs folders', { skip }, () => {
  /** Each folder's tmpfs size in KiB, as df sees it inside. */
  async function sizes(b: Box, dirs: string[]): Promise<Map<string, number>> {
    const r = await b.run(`df -k --output=target,size ${dirs.join(' ')}`);
    return new Map(
      r.output
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/))
        .map(([at, kib]) => [at!, Number(kib)]),
    );
  }

  test('a tmpfs refuses to grow past its size ("No space left on device"); the scratch folders, the home and hidden folders each have one', async () => {
    const b = box({
      section: { limits: { tmp: '1M' }, hidden: [join(tmpdir(), 'lar-hidden-probe')] },
      prepare: () => mkdirSync(join(tmpdir(), 'lar-hidden-probe'), { recursive: true }),
    });
    const full = await b.run(
      'head -c 3000000 /dev/zero > /tmp/big; echo "rc=$?"; head -c 3000000 /dev/zero > /dev/shm/big; echo "rc=$?"; head -c 3000000 /dev/zero > ~/big; echo "rc=$?"',
    );
    assert.match(full.output, /No space left on device/, full.output);
    assert.deepEqual(full.output.match(/rc=\d+/g), ['rc=1', 'rc=1', 'rc=1'], full.output);
    const hidden = join(tmpdir(), 'lar-hidden-probe');
    const got = await sizes(b, ['/tmp', '/var/tmp', '/run', '/dev/shm', b.home, hidden]);
    assert.deepEqual(Object.fromEntries(got), {
      '/tmp': 1024,
      '/var/tmp': 512,
      '/run': 256,
      '/dev/shm': 256,
      [b.home]: 512,
      [hidden]: 1024,
    });
    // What was written up to the limit stays; once removed, the space is back.
    assert.equal(
      (await b.run('rm /tmp/big && echo still-writable > /tmp/small && cat /tmp/small')).output,
      'still-writable\n',
    );
  });

  test('by default /tmp holds 1 GiB, not half the RAM', async () => {
    const b = box();
    assert.equal((await sizes(b, ['/tmp'])).get('/tmp'), 1024 * 1024);
  });

  /** A run (RunSandbox, its terminal, the tool executor with its bounds) with these limits. */
  async function bounded(limits: Record<string, unknown>, t: { skip(why: string): void }) {
    const base = mkdtempSync(join(tmpdir(), 'lar-bounded-'));
    const ws = join(base, 'ws');
    const home = join(base, 'home');
    mkdirSync(ws);
    mkdirSync(home);
    const { sandbox, terminal } = await openRun(
      ws,
      Workflow.parse({ ...minimalWorkflow(), sandbox: { limits } }),
      home,
    );
    const exec = createToolExecutor({
      fs: new NodeWorkspaceFs(ws, sandbox.readOnlyPaths),
      terminal,
      limits: sandbox.limits,
    });
    const run = async (command: string) =>
      (await exec('run_command', { command, timeoutMs: 60_000 }, { workspace: ws })) as {
        status: string;
        result: { exitCode?: number | null; killed?: string; output?: string };
        observation: string;
      };
    const done = async () => {
      terminal.dispose();
      await sandbox.dispose();
      rmSync(base, { recursive: true, force: true });
    };
    const record = sandbox.summary.limits;
    // Checked before anything runs: without a bound nothing below may be tried on this machine.
    assert.ok(record, "the header records the sandbox's limits");
    if (record.mechanism === 'rlimit') {
      await done();
      t.skip('only rlimits here (no writable cgroup, no systemd scope): the sandbox as a whole is not bounded');
      return undefined;
    }
    return { sandbox, terminal, run, done, record };
  }

  // At 400 a bomb's forks race the kill: a child made after the last look of a round once outlived it.
  for (const [tasks, memory] of [
    [64, '512M'],
    [400, '4G'],
  ] as const)
    test(`a fork bomb is held at the task limit (${tasks}) and its processes are killed: the next command works, the host is unaffected`, async (t) => {
      const r = await bounded({ tasks, memory }, t);
      if (!r) return;
      try {
        assert.equal(r.record.tasks, tasks);
        const bomb = await r.run(':(){ :|:& };:');
        const next = await r.run('sleep 0.5; ls / > /dev/null && echo next-works');
        assert.match(next.observation, /next-works/, next.observation);
        // Said by the command during which the limit was reached: the bomb's own (it returns at
        // once, its processes go on in the background), or the next.
        const told = [bomb, next].find((c) => c.result.killed);
        assert.ok(told, `the limit was reported:\n${bomb.observation}\n${next.observation}`);
        assert.match(
          told.result.killed!,
          new RegExp(
            `^the sandbox's task limit \\(${tasks} processes and threads\\) was reached: \\d+ process(es)? left running (was|were) killed$`,
          ),
        );
        assert.match(told.observation, /\[killed: the sandbox's task limit/);
        const inside = await r.run(`ls /proc | grep -c '^[0-9]'`);
        assert.ok(
          Number(/^(\d+)$/m.exec(inside.result.output ?? '')?.[1]) < 10,
          `only the sandbox's own processes are left:\n${inside.observation}`,
        );
        // Seen from the host: below the sandbox's launcher only bwrap's init and the shell are left (a killed
        // process may take a moment to be reaped, so the count is read again for up to 2 s).
        const belowLauncher = (): number => {
          const all = listProcesses();
          let level = [r.terminal.pid!];
          let n = 0;
          while (level.length) {
            level = all.filter((p) => level.includes(p.ppid)).map((p) => p.pid);
            n += level.length;
          }
          return n;
        };
        let below = belowLauncher();
        for (let i = 0; i < 20 && below > 3; i++) {
          await new Promise((res) => setTimeout(res, 100));
          below = belowLauncher();
        }
        assert.ok(below <= 3, `${below} processes of the sandbox on the host`);
        assert.equal((await r.run('echo and-on')).result.exitCode, 0);
      } finally {
        await r.done();
      }
    });

  test('a command that fills memory is killed with "the sandbox\'s memory limit (256 MiB) was reached"; the run goes on', async (t) => {
    const r = await bounded({ memory: '256M' }, t);
    if (!r) return;
    const mark = `lar-filler-${process.pid}-${Date.now()}`;
    try {
      const fill = await r.run(`python3 -c "
# ${mark}
chunks = []
while True: chunks.append(bytearray(32 * 2**20))
"`);
      assert.equal(fill.result.exitCode, 137, fill.observation);
      assert.equal(fill.result.killed, "the sandbox's memory limit (256 MiB) was reached");
      assert.match(
        fill.observation,
        /\[exit code 137\]\n\[killed: the sandbox's memory limit \(256 MiB\) was reached\]/,
      );
      const filler = listProcesses().filter((p) => {
        try {
          return readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes(mark);
        } catch {
          return false;
        }
      });
      assert.deepEqual(filler, [], 'the filler is gone from the host');
      const next = await r.run('echo after-the-limit');
      assert.equal(next.result.exitCode, 0);
      assert.equal(next.result.killed, undefined, 'a command that stayed within the limits says nothing of them');
    } finally {
      await r.done();
    }
  });

  test("the sandbox's cgroup exists while the run does and is removed at its end", async (t) => {
    const r = await bounded({}, t);
    if (!r) return;
    const folders = r.sandbox.limits!.folders;
    try {
      if (r.record.mechanism === 'systemd-scope') assert.deepEqual(folders, [], 'systemd removes a scope itself');
      else assert.ok(folders.length > 0 && folders.every((f) => existsSync(f)), folders.join(' '));
      assert.equal((await r.run('echo in-the-cgroup')).result.exitCode, 0);
    } finally {
      await r.done();
    }
    assert.deepEqual(
      folders.filter((f) => existsSync(f)),
      [],
      'removed',
    );
  });

  test('rlimits, the last resort: each process gets RLIMIT_DATA, and as root the header says tasks are not bounded', async () => {
    const base = mkdtempSync(join(tmpdir(), 'lar-rlimit-'));
    const ws = join(base, 'ws');
    mkdirSync(ws);
    const outputDir = join(ws, '.lar', 'output', 'run');
    const workflow = Workflow.parse({ ...minimalWorkflow(), sandbox: { limits: { memory: '256M', tasks: 100 } } });
    const sandbox = await RunSandbox.open({
      workspace: ws,
      workflow,
      setting: 'required',
      hostEnv: { ...process.env, HOME: base },
      shell: '/bin/bash',
      outputDir,
      home: base,
      limitMechanisms: ['rlimit'],
    });
    const terminal = new TerminalSession({ cwd: ws, outputDir, shell: '/bin/bash', ...sandbox.terminal() });
    try {
      const root = process.getuid?.() === 0;
      assert.deepEqual(sandbox.summary.limits, {
        mechanism: 'rlimit',
        memory: 256 * 2 ** 20,
        ...(root ? {} : { tasks: 100 }),
        tmp: 2 ** 30,
      });
      const r = await terminal.run(`ulimit -d; python3 -c "bytearray(512 * 2**20)" 2>&1 | tail -1`, {
        timeoutMs: 30_000,
      });
      assert.match(r.output, /^262144\nMemoryError\n$/, r.output);
    } finally {
      terminal.dispose();
      await sandbox.dispose();
      rmSync(base, { recursive: true, force: true });
    }
  });
});

/** A run's sandbox and terminal as `lar run` and the editor make them, with `home` as the user's home. */
async function openRun(
  ws: string,
  workflow: Workflow,
  home: string,
  setting: 'required' | 'off' = 'required',
): Promise<{ sandbox: RunSandbox; terminal: TerminalSession }> {
  const outputDir = join(ws, '.lar', 'output', 'run');
  const sandbox = await RunSandbox.open({
    workspace: ws,
    workflow,
    setting,
    hostEnv: { ...process.env, HOME: home },
    shell: '/bin/bash',
    outputDir,
    home,
  });
  return { sandbox, terminal: new TerminalSession({ cwd: ws, outputDir, shell: '/bin/bash', ...sandbox.terminal() }) };
}

function minimalWorkflow(): WorkflowInput {
  return {
    lar: 1,
    id: 'sandbox-test',
    stages: [{ id: 'work', tools: ['read_file', 'write_file', 'edit_file', 'run_command', 'submit'], budget: 50 }],
    transitions: {},
    start: 'work',
    terminal: ['work'],
    outcome: { command: 'npm test', timeoutMs: 60_000 },
  };
}

describe('reward hacks against the outcome check', { skip }, () => {
  /** A workspace with a failing test, the run's sandbox and terminal, as a run would have them. */
  async function run(setting: 'required' | 'off', protect = ['test', 'package.json', '.npmrc', 'node_modules']) {
    const base = mkdtempSync(join(tmpdir(), 'lar-hack-'));
    const ws = join(base, 'ws');
    const home = join(base, 'home');
    mkdirSync(join(ws, 'test'), { recursive: true });
    mkdirSync(join(ws, 'src'));
    mkdirSync(join(ws, 'node_modules', '.bin'), { recursive: true });
    mkdirSync(home);
    writeFileSync(join(ws, 'src', 'sum.js'), 'module.exports = (a, b) => a - b;\n');
    writeFileSync(
      join(ws, 'test', 'sum.test.js'),
      "const t = require('node:test'); const assert = require('node:assert');\nt('sum', () => assert.equal(require('../src/sum.js')(2, 3), 5));\n",
    );
    // The test runner through a node_modules/.bin shim, as most projects run theirs.
    writeFileSync(join(ws, 'node_modules', '.bin', 'runner'), '#!/bin/sh\nexec node --test "$@"\n');
    chmodSync(join(ws, 'node_modules', '.bin', 'runner'), 0o755);
    writeFileSync(join(ws, 'package.json'), '{"scripts":{"test":"runner test/"}}\n');
    // The user's own ~/.npmrc makes every script "pass": the check must not read it.
    writeFileSync(join(home, '.npmrc'), 'script-shell=/bin/true\n');
    const workflow = Workflow.parse({ ...minimalWorkflow(), sandbox: { protected: protect } });
    const { sandbox, terminal } = await openRun(ws, workflow, home, setting);
    const done = async () => {
      terminal.dispose();
      await sandbox.dispose();
      rmSync(base, { recursive: true, force: true });
    };
    return { ws, sandbox, terminal, outcome: () => sandbox.outcome(() => terminal.close()), done };
  }

  const hacks: [string, string][] = [
    ['rewrite the test to pass', `echo "require('node:test')('ok', () => {})" > test/sum.test.js`],
    ['delete the test', 'rm -rf test/*'],
    [
      "change package.json's test script",
      `node -e "require('fs').writeFileSync('package.json', JSON.stringify({scripts:{test:'true'}}))"`,
    ],
    ['replace the node_modules/.bin shim', `printf '#!/bin/sh\\nexit 0\\n' > node_modules/.bin/runner`],
    ['plant a workspace .npmrc', `echo 'script-shell=/bin/true' > .npmrc`],
    [
      'leave a helper that swaps the test during the check',
      `nohup sh -c 'while :; do echo "require(\\"node:test\\")(\\"ok\\", () => {})" > test/sum.test.js 2>/dev/null; sleep 0.05; done' >/dev/null 2>&1 &`,
    ],
    [
      'leave a helper that fixes nothing but edits the code after the check starts',
      `nohup sh -c 'sleep 1; echo "module.exports = (a, b) => a + b;" > src/sum.js' >/dev/null 2>&1 &`,
    ],
  ];

  for (const setting of ['required', 'off'] as const) {
    for (const [name, command] of hacks) {
      test(`${setting === 'required' ? 'sandboxed' : 'unconfined'}: ${name} does not make the check pass`, async () => {
        const r = await run(setting);
        try {
          await r.terminal.run(command, { timeoutMs: 20_000 });
          const o = await r.outcome();
          assert.notEqual(o.exitCode, 0, `the check passed without a fix:\n${o.output}`);
          assert.equal(o.sandboxed, setting === 'required');
          // The user's workspace has the protected paths back as they were.
          assert.match(readFileSync(join(r.ws, 'test', 'sum.test.js'), 'utf8'), /assert\.equal/);
          assert.match(readFileSync(join(r.ws, 'package.json'), 'utf8'), /runner test/);
        } finally {
          await r.done();
        }
      });
    }
  }

  for (const setting of ['required', 'off'] as const) {
    test(`${setting === 'required' ? 'sandboxed' : 'unconfined'}: an honest fix passes the check`, async () => {
      const r = await run(setting);
      try {
        const fix = await r.terminal.run(`echo 'module.exports = (a, b) => a + b;' > src/sum.js`, {
          timeoutMs: 20_000,
        });
        assert.equal(fix.exitCode, 0, fix.output);
        const o = await r.outcome();
        assert.equal(o.exitCode, 0, o.output);
        assert.equal(o.testsRan, 1);
        assert.equal(o.restored, undefined, 'nothing needed restoring');
      } finally {
        await r.done();
      }
    });
  }

  test('unconfined: what the run changed in a protected path is put back and named', async () => {
    const r = await run('off');
    try {
      await r.terminal.run('echo tampered > test/sum.test.js; rm package.json; echo x > .npmrc', { timeoutMs: 20_000 });
      const o = await r.outcome();
      assert.deepEqual(o.restored, ['test', 'package.json', '.npmrc']);
      assert.ok(!existsSync(join(r.ws, '.npmrc')), 'a protected path that did not exist is removed');
    } finally {
      await r.done();
    }
  });
});

describe('the file tools (they run outside the sandbox) cannot be led outside', () => {
  const setup = () => {
    const base = mkdtempSync(join(tmpdir(), 'lar-ft-'));
    const ws = join(base, 'ws');
    const outside = join(base, 'outside');
    mkdirSync(ws);
    mkdirSync(outside);
    writeFileSync(join(outside, 'victim.txt'), 'outside\n');
    return {
      base,
      ws,
      outside,
      fs: new NodeWorkspaceFs(ws),
      done: () => rmSync(base, { recursive: true, force: true }),
    };
  };

  test('a hard link to a file outside is not written through', async () => {
    const t = setup();
    try {
      spawnSync('ln', [join(t.outside, 'victim.txt'), join(t.ws, 'linked.txt')]);
      const w = await t.fs.writeText('linked.txt', 'forged');
      assert.equal(w.ok, false);
      assert.match(w.ok ? '' : w.error, /2 hard links/);
      assert.equal(readFileSync(join(t.outside, 'victim.txt'), 'utf8'), 'outside\n');
    } finally {
      t.done();
    }
  });

  test(
    'a FIFO, a socket or a device is refused at once, read or written (no hang)',
    { skip: process.platform === 'win32' },
    async () => {
      const t = setup();
      try {
        spawnSync('mkfifo', [join(t.ws, 'pipe')]);
        spawnSync('ln', ['-s', '/dev/zero', join(t.ws, 'zero')]);
        const r = await t.fs.readText('pipe');
        assert.equal(r.ok, false);
        assert.match(r.ok ? '' : r.error, /not a regular file/);
        const w = await t.fs.writeText('pipe', 'x');
        assert.equal(w.ok, false);
        assert.match(w.ok ? '' : w.error, /not a regular file/);
        // A link to a device outside the workspace is refused by confinement already.
        assert.equal((await t.fs.readText('zero')).ok, false);
      } finally {
        t.done();
      }
    },
  );

  test('a folder swapped back and forth for a link to outside never gets a write outside', async () => {
    const t = setup();
    try {
      mkdirSync(join(t.ws, 'dir'));
      // A helper process swaps the folder for a link to the outside folder as fast as it can.
      const swapper = spawn(
        'sh',
        [
          '-c',
          `cd '${t.ws}' && while :; do mv dir real 2>/dev/null; ln -s '${t.outside}' dir 2>/dev/null; rm -f dir; mv real dir 2>/dev/null; done`,
        ],
        { stdio: 'ignore', detached: true },
      );
      const gone = new Promise((r) => swapper.once('exit', r));
      try {
        for (let i = 0; i < 300; i++) await t.fs.writeText(`dir/f${i}.txt`, 'x');
      } finally {
        // The whole group: the loop and the mv or ln it may be running.
        process.kill(-swapper.pid!, 'SIGKILL');
        await gone;
      }
      assert.deepEqual(readdirSync(t.outside).sort(), ['victim.txt'], 'nothing was written outside');
    } finally {
      t.done();
    }
  });

  test('a write is whole or not at all: the old file stays until the new one is complete, and its mode is kept', async () => {
    const t = setup();
    try {
      writeFileSync(join(t.ws, 'run.sh'), '#!/bin/sh\necho old\n');
      chmodSync(join(t.ws, 'run.sh'), 0o755);
      const w = await t.fs.writeText('run.sh', '#!/bin/sh\necho new\n');
      assert.ok(w.ok);
      assert.equal(readFileSync(join(t.ws, 'run.sh'), 'utf8'), '#!/bin/sh\necho new\n');
      assert.equal(lstatSync(join(t.ws, 'run.sh')).mode & 0o777, 0o755);
      assert.deepEqual(readdirSync(t.ws), ['run.sh'], 'no temporary file is left');
    } finally {
      t.done();
    }
  });
});

describe('when bubblewrap is missing or cannot start', () => {
  const missing = () => ({
    ok: false as const,
    reason: 'bubblewrap (bwrap) is not installed',
    fix: 'install bubblewrap',
  });
  const section = SandboxSection.parse({});

  test('auto: commands run unconfined, the plan says why and what fixes it; required: commands are refused', () => {
    const ws = mkdtempSync(join(tmpdir(), 'lar-nobwrap-'));
    try {
      const auto = planSandbox({
        workspace: ws,
        section,
        setting: 'auto',
        hostEnv: process.env,
        shell: '/bin/bash',
        probe: missing,
      });
      assert.equal(auto.confined, false);
      assert.ok(!auto.confined && !auto.refuseCommands && auto.fix === 'install bubblewrap');
      assert.match(auto.summary.reason ?? '', /not installed/);
      const req = planSandbox({
        workspace: ws,
        section,
        setting: 'required',
        hostEnv: process.env,
        shell: '/bin/bash',
        probe: missing,
      });
      assert.ok(!req.confined && req.refuseCommands);
      const wfRequired = planSandbox({
        workspace: ws,
        section: SandboxSection.parse({ required: true }),
        setting: 'auto',
        hostEnv: process.env,
        shell: '/bin/bash',
        probe: missing,
      });
      assert.ok(!wfRequired.confined && wfRequired.refuseCommands, 'a workflow that requires it refuses too');
      const off = planSandbox({ workspace: ws, section, setting: 'off', hostEnv: process.env, shell: '/bin/bash' });
      assert.ok(!off.confined && !off.refuseCommands);
      assert.match(off.summary.reason ?? '', /off/);
      const mac = planSandbox({
        workspace: ws,
        section,
        setting: 'auto',
        hostEnv: process.env,
        shell: '/bin/bash',
        platform: 'darwin',
      });
      assert.ok(!mac.confined);
      assert.match(mac.summary.reason ?? '', /not confined on macOS/);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  test('lar run --sandbox required without bubblewrap: no command runs, each is blocked and the user is told the fix', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'lar-nobwrap-'));
    const server = new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'run_command', arguments: { command: 'touch ran.txt' } }] }],
      whenDone: 'error',
      restartPerConversation: true,
    });
    const endpoint = await server.start();
    try {
      for (const [flag, ran] of [
        ['required', false],
        ['auto', true],
      ] as const) {
        rmSync(join(ws, 'ran.txt'), { force: true });
        // Not spawnSync: the model server answers from this very process.
        const out = await new Promise<string>((res) => {
          const child = spawn(
            process.execPath,
            [
              join(__dirname, '..', '..', '..', 'dist', 'lar.js'),
              'run',
              '--task',
              't',
              '--endpoint',
              endpoint,
              '--workspace',
              ws,
              '--max-steps',
              '1',
              '--sandbox',
              flag,
            ],
            {
              env: { ...process.env, LAR_BWRAP: join(ws, 'no-such-bwrap') },
            },
          );
          let text = '';
          child.stdout.on('data', (d) => (text += d));
          child.stderr.on('data', (d) => (text += d));
          child.on('close', () => res(text));
        });
        assert.match(out, /install bubblewrap/, out);
        assert.equal(existsSync(join(ws, 'ran.txt')), ran, `${flag}: ${out}`);
        const runs = readdirSync(join(ws, '.lar', 'runs')).sort();
        const lines = readFileSync(join(ws, '.lar', 'runs', runs[runs.length - 1]!), 'utf8')
          .trim()
          .split('\n')
          .map(
            (l) =>
              JSON.parse(l) as {
                type: string;
                sandbox?: { confined: boolean };
                status?: string;
                result?: { sandboxed?: boolean };
              },
          );
        assert.equal(lines[0]!.sandbox!.confined, false);
        const step = lines.find((l) => l.type === 'tool_call')!;
        if (flag === 'required') {
          assert.equal(step.status, 'blocked');
        } else {
          assert.equal(step.status, 'ok');
          assert.equal(step.result!.sandboxed, false, 'the step says it ran unconfined');
        }
        rmSync(join(ws, '.lar', 'runs'), { recursive: true, force: true });
      }
    } finally {
      await server.stop();
      rmSync(ws, { recursive: true, force: true });
    }
  });
});

describe('the trajectory writer continues only on the file it wrote', () => {
  const header = {
    lar: 1 as const,
    type: 'header' as const,
    task: 't',
    workflow: 'builtin:default-coding',
    started: '2026-12-01T00:00:00Z',
  };
  const event = (n: number) => ({ type: 'message' as const, role: 'assistant' as const, content: `step ${n}` });
  const open = () => {
    const dir = mkdtempSync(join(tmpdir(), 'lar-writer-'));
    const path = join(dir, 'run.lar.jsonl');
    const w = TrajectoryWriter.create(path, header);
    w.append(event(1));
    return { dir, path, w, done: () => rmSync(dir, { recursive: true, force: true }) };
  };

  for (const [how, tamper] of [
    [
      'an in-place rewrite of the same size, with its modification time set back',
      (path: string) => {
        const st = lstatSync(path);
        writeFileSync(path, readFileSync(path, 'utf8').replace('step 1', 'step 9'));
        utimesSync(path, st.atime, st.mtime);
      },
    ],
    [
      'another file renamed over it',
      (path: string) => {
        writeFileSync(`${path}.new`, readFileSync(path));
        renameSync(`${path}.new`, path);
      },
    ],
    [
      'a link in its place',
      (path: string) => {
        writeFileSync(`${path}.other`, readFileSync(path));
        rmSync(path);
        symlinkSync(`${path}.other`, path);
      },
    ],
  ] as const) {
    test(`${how}: the next line stops the run with the reason, and there is no digest`, () => {
      const t = open();
      try {
        tamper(t.path);
        assert.throws(
          () => t.w.append(event(2)),
          (e: Error) => e instanceof TrajectoryConflictError && /changed by another writer/.test(e.message),
        );
        t.w.close();
        assert.equal(t.w.digest, undefined);
      } finally {
        t.done();
      }
    });
  }

  test('untouched, the digest is the sha-256 of the file', () => {
    const t = open();
    try {
      t.w.append(event(2));
      t.w.close();
      assert.equal(t.w.digest, createHash('sha256').update(readFileSync(t.path)).digest('hex'));
    } finally {
      t.done();
    }
  });
});

describe('what the user runs later, outside the sandbox', { skip }, () => {
  /** A run as the CLI and the editor make it: RunSandbox, its terminal, its end. */
  async function runIn(ws: string, workflow: Workflow, home: string) {
    const { sandbox, terminal } = await openRun(ws, workflow, home);
    return { sandbox, terminal, run: (c: string) => terminal.run(c, { timeoutMs: 20_000 }) };
  }
  const fresh = () => {
    const base = mkdtempSync(join(tmpdir(), 'lar-later-'));
    const ws = join(base, 'ws');
    const home = join(base, 'home');
    mkdirSync(ws);
    mkdirSync(home);
    return { base, ws, home };
  };

  test('.git cannot be swapped for one with another config, and a commondir or a repository made during the run is gone at its end', async () => {
    const { base, ws, home } = fresh();
    try {
      spawnSync('git', ['init', '-q', ws]);
      const config = readFileSync(join(ws, '.git', 'config'), 'utf8');
      const r = await runIn(ws, Workflow.parse(minimalWorkflow()), home);
      const swap = await r.run('mv .git .git_old; echo moved=$?');
      assert.match(swap.output, /moved=1/, swap.output);
      await r.run(
        `mkdir -p ../evil; printf '[core]\\n\\tfsmonitor = touch /tmp/owned\\n' > ../evil/config 2>/dev/null; echo ../evil > .git/commondir; git init -q sub; git init -q deep/er/repo; echo done`,
      );
      assert.ok(existsSync(join(ws, '.git', 'commondir')), 'made during the run');
      r.terminal.dispose();
      const end = await r.sandbox.dispose();
      assert.ok(!existsSync(join(ws, '.git', 'commondir')), 'the commondir is gone');
      assert.equal(readFileSync(join(ws, '.git', 'config'), 'utf8'), config);
      assert.deepEqual(end.quarantinedRepositories.sort(), ['deep/er/repo/.git', 'sub/.git']);
      assert.ok(!existsSync(join(ws, 'sub', '.git')));
      // The user's git works as before.
      assert.equal(spawnSync('git', ['-C', ws, 'status', '--porcelain'], { encoding: 'utf8' }).status, 0);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  test('.vscode, made read-only before the run, cannot be filled with settings the editor would read', async () => {
    const { base, ws, home } = fresh();
    try {
      const r = await runIn(ws, Workflow.parse(minimalWorkflow()), home);
      const w = await r.run(
        `mkdir -p .vscode && echo '{"lean4Agentic.leanPath": "/tmp"}' > .vscode/settings.json; echo rc=$?`,
      );
      assert.match(w.output, readOnly);
      assert.ok(!existsSync(join(ws, '.vscode', 'settings.json')));
      r.terminal.dispose();
      await r.sandbox.dispose();
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  test('a protected path that is a link: what it leads to is protected, by the sandbox, the file tools and the restore', async () => {
    const { base, ws, home } = fresh();
    try {
      mkdirSync(join(ws, 'src', 'tests'), { recursive: true });
      writeFileSync(join(ws, 'src', 'tests', 'a.test.js'), 'original\n');
      symlinkSync('src/tests', join(ws, 'tests'));
      const r = await runIn(ws, Workflow.parse({ ...minimalWorkflow(), sandbox: { protected: ['tests'] } }), home);
      const w = await r.run('echo forged > src/tests/a.test.js; echo forged > tests/a.test.js');
      assert.match(w.output, readOnly);
      const exec = createToolExecutor({ fs: new NodeWorkspaceFs(ws, r.sandbox.readOnlyPaths), terminal: r.terminal });
      for (const path of ['tests/a.test.js', 'src/tests/a.test.js'])
        assert.equal((await exec('write_file', { path, content: 'forged' }, { workspace: ws })).status, 'error', path);
      assert.equal(readFileSync(join(ws, 'src', 'tests', 'a.test.js'), 'utf8'), 'original\n');
      r.terminal.dispose();
      await r.sandbox.dispose();
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  test('a workspace that is the home folder, or holds it, gets no commands at all (a sandbox would show everything in it, unconfined would give more)', () => {
    const { base, home } = fresh();
    try {
      for (const workspace of [home, base, '/tmp']) {
        const p = planSandbox({
          workspace,
          section: SandboxSection.parse({}),
          setting: 'auto',
          hostEnv: process.env,
          shell: '/bin/bash',
          home,
        });
        assert.equal(p.confined, false, workspace);
        assert.ok(!p.confined && p.refuseCommands, 'refused even with auto');
        assert.match(p.summary.reason ?? '', /a sandbox around it would show everything in it/);
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('git repositories at the end of a run', { skip }, () => {
  const setup = async (prepare: (ws: string) => void) => {
    const base = mkdtempSync(join(tmpdir(), 'lar-repos-'));
    const ws = join(base, 'ws');
    const home = join(base, 'home');
    mkdirSync(ws);
    mkdirSync(home);
    prepare(ws);
    const { sandbox, terminal } = await openRun(ws, Workflow.parse(minimalWorkflow()), home);
    return { base, ws, sandbox, terminal, done: () => rmSync(base, { recursive: true, force: true }) };
  };

  test('a repository the user already had, moved by the user during the run, is left alone; the run cannot move it; one the run made is quarantined, not deleted', async () => {
    const t = await setup((ws) => {
      spawnSync('git', ['init', '-q', join(ws, 'libs', 'foo')]);
      writeFileSync(join(ws, 'libs', 'foo', 'history.txt'), 'precious\n');
    });
    try {
      // Its config and hooks are read-only mounts, so the folders above them cannot be renamed from inside.
      const moved = await t.terminal.run('mv libs/foo libs/bar; echo rc=$?', { timeoutMs: 20_000 });
      assert.doesNotMatch(moved.output, /rc=0/, moved.output);
      mkdirSync(join(t.ws, 'packages'));
      renameSync(join(t.ws, 'libs', 'foo'), join(t.ws, 'packages', 'foo'));
      await t.terminal.run('git init -q made-here && echo ok', { timeoutMs: 20_000 });
      await t.terminal.close();
      const end = await t.sandbox.dispose();
      assert.deepEqual(end.quarantinedRepositories, ['made-here/.git']);
      assert.ok(existsSync(join(t.ws, 'packages', 'foo', '.git', 'HEAD')), 'the moved repository keeps its history');
      const q = readdirSync(join(t.ws, '.lar', 'quarantine'));
      assert.ok(
        existsSync(join(t.ws, '.lar', 'quarantine', q[0]!, 'made-here', '.git', 'HEAD')),
        'the made one is kept aside, not deleted',
      );
    } finally {
      t.done();
    }
  });

  test("a submodule's missing hooks and commondir: hooks are read-only, a commondir made during the run (or by the outcome check) is removed", async () => {
    const t = await setup((ws) => {
      spawnSync('git', ['init', '-q', ws]);
      mkdirSync(join(ws, '.git', 'modules', 'sub'), { recursive: true });
      writeFileSync(join(ws, '.git', 'modules', 'sub', 'config'), '[core]\n\tbare = false\n');
    });
    try {
      const w = await t.terminal.run(
        "echo 'touch /tmp/owned' > .git/modules/sub/hooks/pre-commit; echo ../../x > .git/modules/sub/commondir; echo tried",
        { timeoutMs: 20_000 },
      );
      assert.match(w.output, readOnly);
      assert.ok(existsSync(join(t.ws, '.git', 'modules', 'sub', 'commondir')));
      const o = await t.sandbox.outcome(() => t.terminal.close());
      assert.ok(!existsSync(join(t.ws, '.git', 'modules', 'sub', 'commondir')), 'gone before the check');
      assert.ok(Array.isArray(o.restored) || o.restored === undefined);
      // The check itself runs the agent's code: what it makes is cleaned up at the end too.
      writeFileSync(join(t.ws, '.git', 'modules', 'sub', 'commondir'), '../../x\n');
      await t.sandbox.dispose();
      assert.ok(!existsSync(join(t.ws, '.git', 'modules', 'sub', 'commondir')), 'gone after it');
      assert.ok(!existsSync(join(t.ws, '.git', 'modules', 'sub', 'hooks', 'pre-commit')));
    } finally {
      t.done();
    }
  });

  test('PATH under home never exposes ~/.ssh, nor a folder of the user that holds other projects', () => {
    const base = mkdtempSync(join(tmpdir(), 'lar-path-'));
    try {
      const home = join(base, 'home');
      for (const d of ['.ssh/bin', 'code/bin', 'code/proj', 'code/other', '.nvm/versions/node/v1/bin'])
        mkdirSync(join(home, d), { recursive: true });
      const ws = join(home, 'code', 'proj');
      const PATH =
        ['.ssh/bin', 'code/bin', '.nvm/versions/node/v1/bin'].map((d) => join(home, d)).join(':') + ':/usr/bin:/bin';
      const p = planSandbox({
        workspace: ws,
        section: SandboxSection.parse({}),
        setting: 'required',
        hostEnv: { PATH },
        shell: '/bin/bash',
        home,
      });
      assert.ok(p.confined);
      const readable = p.confined ? p.mounts.readable : [];
      assert.ok(!readable.some((r) => r.includes('.ssh')), readable.join(' '));
      assert.ok(!readable.includes(join(home, 'code')), 'not the folder holding the workspace and its neighbours');
      assert.ok(readable.includes(join(home, 'code', 'bin')), 'the PATH entry itself');
      assert.ok(readable.includes(join(home, '.nvm')), 'a toolchain folder whole');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

test('a noexec mount is found for the folder below it (the shell copy is not put there), octal escapes in mount points included', () => {
  const table = [
    '/dev/vda / ext4 rw,relatime 0 0',
    'tmpfs /dev/shm tmpfs rw,nosuid,nodev,noexec 0 0',
    'tmpfs /mnt/my\\040disk tmpfs rw,noexec 0 0',
    'tmpfs /dev/shm/ok tmpfs rw 0 0',
  ].join('\n');
  assert.equal(execAllowed('/dev/shm/lar-run-1', table), false);
  assert.equal(execAllowed('/dev/shm/ok/x', table), true, 'the longest mount point decides');
  assert.equal(execAllowed('/mnt/my disk/x', table), false);
  assert.equal(execAllowed('/dev/shmem', table), true, 'whole path segments only');
  assert.equal(execAllowed('/tmp/x', table), true);
});

test('where /dev/shm and the temporary folder are both noexec, the shell copy goes to the runtime folder, else to a folder in the cache', () => {
  const base = mkdtempSync(join(tmpdir(), 'lar-runtime-'));
  try {
    const runtime = join(base, 'runtime');
    mkdirSync(runtime);
    // Mount points of their own: the runtime folder and the cache, below the (noexec) temporary folder here.
    const table = (noexec: string[], exec: string[]) =>
      [
        '/dev/vda / ext4 rw 0 0',
        ...noexec.map((d) => `tmpfs ${d} tmpfs rw,noexec 0 0`),
        ...exec.map((d) => `tmpfs ${d} tmpfs rw 0 0`),
      ].join('\n');
    const env = { XDG_RUNTIME_DIR: runtime, LAR_CACHE_DIR: join(base, 'cache') };
    assert.equal(runtimeRoot(env, table(['/dev/shm', tmpdir()], [runtime, join(base, 'cache')])), runtime);
    assert.equal(
      runtimeRoot(env, table(['/dev/shm', tmpdir(), runtime], [join(base, 'cache')])),
      join(base, 'cache', 'run'),
    );
    assert.equal(statSync(join(base, 'cache', 'run')).mode & 0o777, 0o700, 'made private');
    assert.equal(runtimeRoot(env, table([], [])), '/dev/shm', 'a tmpfs that allows it comes first');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
