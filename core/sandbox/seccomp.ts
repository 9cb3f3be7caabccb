/**
 * A small seccomp filter for the sandbox. Everything else is allowed: the
 * filter takes nothing a build or a test needs. It makes these fail with EPERM:
 *
 * - `add_key`, `request_key` and `keyctl`: the kernel keyrings are not
 *   namespaced, so without it a command could read the keys of the user's
 *   session keyring (Kerberos tickets, ecryptfs keys, anything a tool stored
 *   with keyctl).
 * - `ioctl` with the request TIOCSTI (push a character into a terminal's
 *   input) or TIOCLINUX (whose paste-selection does the same on a console):
 *   a program a command runs shares the shell's terminal, and a line pushed
 *   into it is read by the shell as the next command, before the agent's own,
 *   so it could redefine how the shell reports exit codes and have every
 *   failing command recorded as exit 0. Only the low 32 bits of the request
 *   are compared: the kernel truncates `cmd` to unsigned int, so a request
 *   with high bits set is the same request.
 * - on x86-64, every x32 call (the same calls with another number).
 *
 * Each architecture is judged with its own numbers, and a process may make
 * system calls under two: a 64-bit program on x86-64 can enter through
 * `int 0x80` with the i386 numbers (AUDIT_ARCH_I386), and on arm64 an AArch32
 * program uses the arm EABI numbers (AUDIT_ARCH_ARM). Those compat ABIs are
 * filtered too, with their own numbers for the same calls (i386: ioctl 54,
 * add_key 286, request_key 287, keyctl 288; arm EABI: ioctl 54, add_key 309,
 * request_key 310, keyctl 311, from the kernel's syscall tables), rather than
 * denied outright: 32-bit programs (old toolchains, Wine, a test suite built
 * with -m32) must keep working in the sandbox, and would not under a filter
 * that failed every one of their calls. Any other architecture cannot occur
 * on these kernels; a call under one fails with EPERM, so nothing is let
 * through unjudged.
 *
 * The program is classic BPF, as seccomp(2) and bwrap's `--seccomp FD` take it:
 * one 8-byte instruction each (code u16, jt u8, jf u8, k u32, little-endian).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | 1; // SECCOMP_RET_ERRNO | EPERM
/**
 * struct seccomp_data: nr at 0, arch at 4, then the instruction pointer and
 * the six arguments (u64 each, from 16). Both architectures are
 * little-endian: the low half of args[1] (the ioctl request) is at 24.
 */
const NR = 0;
const ARCH = 4;
const ARG1_LOW = 24;
const X32_BIT = 0x40000000;
export const TIOCSTI = 0x5412;
export const TIOCLINUX = 0x541c;

interface Abi {
  audit: number;
  ioctl: number;
  /** add_key, request_key, keyctl. */
  keys: number[];
  /** Every call at or above this number (x32) fails. */
  denyFrom?: number;
}

interface Arch {
  native: Abi;
  /** The 32-bit ABI the same kernel also takes. */
  compat: Abi;
}

const ARCHES: Partial<Record<string, Arch>> = {
  x64: {
    native: { audit: 0xc000003e, ioctl: 16, keys: [248, 249, 250], denyFrom: X32_BIT },
    compat: { audit: 0x40000003, ioctl: 54, keys: [286, 287, 288] }, // AUDIT_ARCH_I386
  },
  arm64: {
    native: { audit: 0xc00000b7, ioctl: 29, keys: [217, 218, 219] },
    compat: { audit: 0x40000028, ioctl: 54, keys: [309, 310, 311] }, // AUDIT_ARCH_ARM (EABI)
  },
};

/** One instruction; a jump names its targets by label, resolved by assemble(). */
interface Insn {
  code: number;
  k: number;
  jt?: string;
  jf?: string;
  label?: string;
}

function assemble(prog: Insn[]): Buffer {
  const at = new Map<string, number>();
  prog.forEach((p, i) => p.label && at.set(p.label, i));
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0;
    const to = at.get(label);
    const d = to === undefined ? -1 : to - from - 1;
    if (d < 0 || d > 255) throw new Error(`seccomp: no forward jump from ${from} to ${label}`);
    return d;
  };
  return Buffer.concat(
    prog.map((p, i) => {
      const b = Buffer.alloc(8);
      b.writeUInt16LE(p.code, 0);
      b.writeUInt8(offset(i, p.jt), 2);
      b.writeUInt8(offset(i, p.jf), 3);
      b.writeUInt32LE(p.k >>> 0, 4);
      return b;
    }),
  );
}

/** The calls of one ABI: keyrings (and x32) denied, ioctl to the request check, the rest allowed. */
function abiBlock(name: string, a: Abi): Insn[] {
  return [
    { label: name, code: LD_W_ABS, k: NR },
    ...(a.denyFrom !== undefined ? [{ code: JGE_K, k: a.denyFrom, jt: 'deny' }] : []),
    ...a.keys.map((nr) => ({ code: JEQ_K, k: nr, jt: 'deny' })),
    { code: JEQ_K, k: a.ioctl, jt: 'ioctl' },
    { code: RET_K, k: RET_ALLOW },
  ];
}

/** The filter for `arch` (Node's process.arch), or undefined where none is written. */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  return assemble([
    { code: LD_W_ABS, k: ARCH },
    { code: JEQ_K, k: a.native.audit, jt: 'native' },
    { code: JEQ_K, k: a.compat.audit, jt: 'compat' },
    // No other architecture's calls reach this process on these kernels: none goes unjudged.
    { code: RET_K, k: RET_EPERM },
    ...abiBlock('native', a.native),
    ...abiBlock('compat', a.compat),
    // ioctl: the request's low 32 bits (the kernel's unsigned int cmd).
    { label: 'ioctl', code: LD_W_ABS, k: ARG1_LOW },
    { code: JEQ_K, k: TIOCSTI, jt: 'deny' },
    { code: JEQ_K, k: TIOCLINUX, jt: 'deny' },
    { code: RET_K, k: RET_ALLOW },
    { label: 'deny', code: RET_K, k: RET_EPERM },
  ]);
}

let file: string | undefined;

/** The filter written to a file of this process (removed at exit), for bwrap to read; undefined where there is none. */
export function seccompFile(): string | undefined {
  if (file) return file;
  const f = seccompFilter();
  if (!f) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'lar-seccomp-'));
  file = join(dir, 'filter.bpf');
  writeFileSync(file, f, { mode: 0o600 });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return file;
}
