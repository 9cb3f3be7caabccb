/**
 * A stand-in for `lar-verify` (lean/Main.lean) for the tests of the Lean
 * backend's process management, on machines without a Lean toolchain. It
 * speaks the same JSON-lines protocol (docs/lean.md) and answers by
 * delegating to the builtin `VerifierState`, so what the tests check is the
 * TypeScript side: framing, multiplexing, timeouts, restarts and replay.
 *
 * It serves only when started with `--serve`: `node --test out/test/` also runs
 * every .js file under test/, and without the flag this file exits at once.
 *
 * Magic, for the tests:
 * - an `append` of a `message` event whose content is `__crash__` exits with code 3;
 * - an `append` of a `message` event whose content is `__hang__` is never answered;
 * - `--chunked`: every response is written in three pieces, and a line that is
 *   not JSON is written first, so the reader must reassemble and skip;
 * - `--exit-at-start`: exits with code 4 before reading anything;
 * - `$FAKE_LAR_LOG`: each request line is appended to that file.
 */
import * as fs from 'node:fs';
import { Workflow } from '../../core/schema/workflow';
import { SandboxRecord, TrajectoryEvent } from '../../core/schema/trajectory';
import { VerifierState } from '../../core/verifier/state';
import type { ProposedCall } from '../../core/verifier/types';

const serve = process.argv.includes('--serve');
const chunked = process.argv.includes('--chunked');
if (serve && process.argv.includes('--exit-at-start')) process.exit(4);
const logFile = process.env.FAKE_LAR_LOG;

const sessions = new Map<string, VerifierState>();
const HANG = Symbol('hang');

function write(obj: unknown): void {
  const line = `${JSON.stringify(obj)}\n`;
  if (!chunked) {
    process.stdout.write(line);
    return;
  }
  process.stdout.write('this line is not JSON and must be skipped\n');
  const a = Math.floor(line.length / 3);
  const b = Math.floor((2 * line.length) / 3);
  process.stdout.write(line.slice(0, a));
  process.stdout.write(line.slice(a, b));
  process.stdout.write(line.slice(b));
}

function respond(req: Record<string, unknown>): unknown {
  const op = req.op;
  if (op === 'hello') return { protocol: 1, lar: 1, checker: 'fake-lar-verify', sessions: sessions.size };
  const session = req.session;
  if (typeof session !== 'string') throw new Error('"session" must be a string');
  if (op === 'load') {
    const wf = Workflow.parse(req.workflow);
    const headerLine = typeof req.headerLine === 'number' ? req.headerLine : 1;
    sessions.set(
      session,
      new VerifierState(wf, headerLine, req.sandbox === undefined ? undefined : SandboxRecord.parse(req.sandbox)),
    );
    return { session };
  }
  if (op === 'close') {
    sessions.delete(session);
    return { session };
  }
  const st = sessions.get(session);
  if (!st) throw new Error(`no session "${session}": load a workflow first`);
  switch (op) {
    case 'append': {
      const event = TrajectoryEvent.parse(req.event);
      if (event.type === 'message' && event.content === '__crash__') process.exit(3);
      if (event.type === 'message' && event.content === '__hang__') return HANG;
      if (typeof req.line !== 'number') throw new Error('"line" must be a number');
      return st.append(event, req.line);
    }
    case 'gate':
      return st.gate(req.call as ProposedCall);
    case 'summary':
      return st.summary();
    default:
      throw new Error(`unknown op "${String(op)}"`);
  }
}

function handle(line: string): void {
  if (logFile) fs.appendFileSync(logFile, `${line}\n`);
  let req: Record<string, unknown>;
  try {
    req = JSON.parse(line) as Record<string, unknown>;
  } catch (e) {
    write({ id: null, ok: false, error: `invalid JSON request: ${(e as Error).message}` });
    return;
  }
  const id = typeof req.id === 'number' ? req.id : null;
  try {
    const result = respond(req);
    if (result !== HANG) write({ id, ok: true, result });
  } catch (e) {
    write({ id, ok: false, error: (e as Error).message });
  }
}

let buffer = '';

function listen(): void {
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim() !== '') handle(line);
    }
  });
  process.stdin.on('end', () => process.exit(0));
}

if (serve) listen();
