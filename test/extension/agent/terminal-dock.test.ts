import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TerminalDock, type Dockable } from '../../../extension/agent/terminal-dock';

class Fake implements Dockable {
  closed = false;
  disposed = false;
  constructor(
    readonly name: string,
    readonly n: number,
  ) {}
  dispose(): void {
    this.disposed = true;
  }
}

function dockWith() {
  const dock = new TerminalDock<Fake>();
  let made = 0;
  const reused: number[] = [];
  const take = (name: string) =>
    dock.take(
      name,
      () => new Fake(name, ++made),
      (t) => reused.push(t.n),
    );
  return { dock, take, reused, made: () => made };
}

test('runs one after another write on in one terminal, told each time it is reused', () => {
  const { dock, take, reused, made } = dockWith();
  for (let i = 0; i < 15; i++) dock.release(take('Lean4 Agentic (sandboxed, network off)'));
  assert.equal(made(), 1, 'fifteen runs, one terminal');
  assert.equal(reused.length, 14);
});

test('a differently confined run gets its own terminal, and the ended one is closed', () => {
  const { dock, take } = dockWith();
  const a = take('Lean4 Agentic (sandboxed, network off)');
  dock.release(a);
  const b = take('Lean4 Agentic (unconfined)');
  assert.notEqual(a, b);
  assert.equal(a.disposed, true);
  assert.equal(b.disposed, false);
});

test('a terminal the user closed, or one a run still uses, is never taken; one in use is never closed', () => {
  const { dock, take, made } = dockWith();
  const a = take('T');
  const b = take('T');
  assert.notEqual(a, b, 'the first run has not ended');
  assert.equal(a.disposed, false);
  dock.release(b);
  b.closed = true;
  const c = take('T');
  assert.notEqual(c, b);
  assert.equal(made(), 3);
  dock.release(a);
  // a ended but is no longer the last terminal: a later run does not reach back for it.
  dock.release(c);
  assert.equal(take('T'), c);
});
