/**
 * The sandbox's seccomp filter (core/sandbox/seccomp.ts), run here by a small
 * classic-BPF interpreter over seccomp_data buffers, for every architecture
 * and every call it judges. The numbers are this file's own, from the
 * kernel's syscall tables (arch/x86/entry/syscalls/syscall_{64,32}.tbl,
 * include/uapi/asm-generic/unistd.h, arch/arm/tools/syscall.tbl), so a wrong
 * number in the filter fails here. test/suites/sandbox-escape.test.ts runs the real calls
 * in the real sandbox.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { seccompFilter } from '../../../core/sandbox/seccomp';

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;

/** Runs a classic BPF seccomp program over a 64-byte seccomp_data; what it returns. Throws on anything the kernel would refuse. */
function run(prog: Buffer, data: Buffer): number {
  assert.equal(prog.length % 8, 0);
  const n = prog.length / 8;
  assert.ok(n > 0 && n <= 4096, 'BPF_MAXINSNS');
  let a = 0;
  for (let pc = 0; pc < n; pc++) {
    const code = prog.readUInt16LE(pc * 8);
    const jt = prog.readUInt8(pc * 8 + 2);
    const jf = prog.readUInt8(pc * 8 + 3);
    const k = prog.readUInt32LE(pc * 8 + 4);
    const jump = (cond: boolean): void => {
      pc += cond ? jt : jf;
      assert.ok(pc + 1 < n, 'a jump past the end');
    };
    switch (code) {
      case 0x20: // LD W ABS: seccomp_data is read in aligned 32-bit words
        assert.ok(k % 4 === 0 && k + 4 <= data.length, `load at ${k}`);
        a = data.readUInt32LE(k);
        break;
      case 0x15: // JEQ K
        jump(a === k);
        break;
      case 0x35: // JGE K
        jump(a >= k);
        break;
      case 0x25: // JGT K
        jump(a > k);
        break;
      case 0x45: // JSET K
        jump((a & k) !== 0);
        break;
      case 0x05: // JA
        pc += k;
        break;
      case 0x06: // RET K
        return k;
      default:
        assert.fail(`opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  return assert.fail('the program ran off its end');
}

/** struct seccomp_data { int nr; u32 arch; u64 instruction_pointer; u64 args[6]; } (little-endian). */
function data(arch: number, nr: number, args: bigint[] = []): Buffer {
  const b = Buffer.alloc(64);
  b.writeUInt32LE(nr >>> 0, 0);
  b.writeUInt32LE(arch >>> 0, 4);
  b.writeBigUInt64LE(0x401000n, 8);
  args.forEach((v, i) => b.writeBigUInt64LE(BigInt.asUintN(64, v), 16 + 8 * i));
  return b;
}

const TIOCSTI = 0x5412n;
const TIOCLINUX = 0x541cn;
/** Terminal requests that must keep working: TCGETS, TCSETS, TIOCGWINSZ, TIOCSWINSZ, FIONREAD, TIOCGPGRP, TIOCSPGRP. */
const ORDINARY_IOCTLS = [0x5401n, 0x5402n, 0x5413n, 0x5414n, 0x541bn, 0x540fn, 0x5410n];

interface Abi {
  name: string;
  audit: number;
  ioctl: number;
  keys: Record<'add_key' | 'request_key' | 'keyctl', number>;
  /** Calls every build makes: read, write, openat, execve, clone (or fork), mmap (or mmap2), exit_group. */
  ordinary: number[];
}

const ABIS: Record<string, { native: Abi; compat: Abi; foreign: number[] }> = {
  x64: {
    native: {
      name: 'x86-64',
      audit: 0xc000003e,
      ioctl: 16,
      keys: { add_key: 248, request_key: 249, keyctl: 250 },
      ordinary: [0, 1, 257, 59, 56, 9, 231],
    },
    compat: {
      name: 'i386 (int 0x80)',
      audit: 0x40000003,
      ioctl: 54,
      keys: { add_key: 286, request_key: 287, keyctl: 288 },
      ordinary: [3, 4, 295, 11, 2, 192, 252],
    },
    // aarch64, arm, riscv64
    foreign: [0xc00000b7, 0x40000028, 0xc00000f3],
  },
  arm64: {
    native: {
      name: 'aarch64',
      audit: 0xc00000b7,
      ioctl: 29,
      keys: { add_key: 217, request_key: 218, keyctl: 219 },
      ordinary: [63, 64, 56, 221, 220, 222, 94],
    },
    compat: {
      name: 'arm EABI (AArch32)',
      audit: 0x40000028,
      ioctl: 54,
      keys: { add_key: 309, request_key: 310, keyctl: 311 },
      ordinary: [3, 4, 322, 11, 2, 192, 248],
    },
    // x86-64, i386, riscv64
    foreign: [0xc000003e, 0x40000003, 0xc00000f3],
  },
};

describe('the seccomp filter, interpreted', () => {
  for (const [arch, { native, compat, foreign }] of Object.entries(ABIS)) {
    const prog = seccompFilter(arch);

    test(`${arch}: a filter is written, and every path through it ends in a return`, () => {
      assert.ok(prog, `a filter for ${arch}`);
      const n = prog.length / 8;
      for (let pc = 0; pc < n; pc++) {
        const code = prog.readUInt16LE(pc * 8);
        if ((code & 0x07) !== 0x05) continue; // not a jump
        for (const off of [prog.readUInt8(pc * 8 + 2), prog.readUInt8(pc * 8 + 3)])
          assert.ok(pc + 1 + off < n, `the jump at ${pc} lands inside`);
      }
      assert.equal(prog.readUInt16LE((n - 1) * 8), 0x06, 'the last instruction returns');
    });
    if (!prog) continue;

    for (const abi of [native, compat]) {
      test(`${arch}, ${abi.name}: add_key, request_key and keyctl fail with EPERM`, () => {
        for (const [name, nr] of Object.entries(abi.keys))
          assert.equal(run(prog, data(abi.audit, nr, [0n, -3n])), EPERM, name);
      });

      test(`${arch}, ${abi.name}: ioctl TIOCSTI and TIOCLINUX fail with EPERM, also with high bits set in the request`, () => {
        for (const req of [TIOCSTI, TIOCLINUX]) {
          for (const high of [0n, 1n, 0xdead0000n, 0xffffffffn]) {
            const request = (high << 32n) | req;
            assert.equal(
              run(prog, data(abi.audit, abi.ioctl, [0n, request, 0x7ffe0000n])),
              EPERM,
              `request 0x${request.toString(16)}`,
            );
          }
        }
      });

      test(`${arch}, ${abi.name}: other terminal requests and ordinary calls are allowed`, () => {
        for (const req of ORDINARY_IOCTLS)
          assert.equal(run(prog, data(abi.audit, abi.ioctl, [1n, req, 0n])), ALLOW, `request 0x${req.toString(16)}`);
        // The request's low 32 bits decide: neighbours of TIOCSTI in the high or low bits are other requests.
        assert.equal(run(prog, data(abi.audit, abi.ioctl, [0n, 0x15412n, 0n])), ALLOW);
        for (const nr of abi.ordinary)
          assert.equal(
            run(prog, data(abi.audit, nr, [0n, TIOCSTI])),
            ALLOW,
            `call ${nr} (with TIOCSTI as its second argument)`,
          );
      });
    }

    if (arch === 'x64') {
      test('x64: every x32 call fails with EPERM (ioctl and keyctl included)', () => {
        for (const nr of [0, 1, 514, 250, 248, 59])
          assert.equal(run(prog, data(native.audit, 0x40000000 + nr, [0n, TIOCSTI])), EPERM, `x32 call ${nr}`);
      });
    }

    test(`${arch}: a call under any other architecture's numbering is not let through`, () => {
      for (const audit of foreign)
        for (const nr of [0, 1, 16, 29, 54, 59])
          assert.equal(run(prog, data(audit, nr)), EPERM, `arch 0x${audit.toString(16)} call ${nr}`);
    });
  }

  test('no filter is written for an architecture whose numbers are not known', () => {
    assert.equal(seccompFilter('riscv64'), undefined);
  });
});
