/**
 * A small seccomp filter for the sandbox: the kernel keyrings are not
 * namespaced, so without it a command could read the keys of the user's
 * session keyring (Kerberos tickets, ecryptfs keys, anything a tool stored
 * with keyctl). `add_key`, `request_key` and `keyctl` fail with EPERM, as do
 * the x32 system calls on x86-64 (the same calls with another number).
 * Everything else is allowed: the filter takes nothing a build or a test needs.
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
/** struct seccomp_data: nr at 0, arch at 4. */
const NR = 0;
const ARCH = 4;
const X32_BIT = 0x40000000;

interface Arch {
  audit: number;
  /** add_key, request_key, keyctl. */
  denied: number[];
  x32?: boolean;
}

const ARCHES: Partial<Record<string, Arch>> = {
  x64: { audit: 0xc000003e, denied: [248, 249, 250], x32: true },
  arm64: { audit: 0xc00000b7, denied: [217, 218, 219] },
};

function insn(code: number, jt: number, jf: number, k: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt16LE(code, 0);
  b.writeUInt8(jt, 2);
  b.writeUInt8(jf, 3);
  b.writeUInt32LE(k >>> 0, 4);
  return b;
}

/** The filter for `arch` (Node's process.arch), or undefined where none is written. */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const prog: Buffer[] = [];
  // A call made under another architecture's numbering is not judged (it cannot be on these kernels but for x32, below).
  prog.push(insn(LD_W_ABS, 0, 0, ARCH));
  prog.push(insn(JEQ_K, 1, 0, a.audit));
  prog.push(insn(RET_K, 0, 0, RET_ALLOW));
  prog.push(insn(LD_W_ABS, 0, 0, NR));
  const denyAt = (i: number): number => a.denied.length + (a.x32 ? 1 : 0) + 1 - i - 1;
  if (a.x32) prog.push(insn(JGE_K, denyAt(0), 0, X32_BIT));
  a.denied.forEach((nr, i) => prog.push(insn(JEQ_K, denyAt(i + (a.x32 ? 1 : 0)), 0, nr)));
  prog.push(insn(RET_K, 0, 0, RET_ALLOW));
  prog.push(insn(RET_K, 0, 0, RET_EPERM));
  return Buffer.concat(prog);
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
