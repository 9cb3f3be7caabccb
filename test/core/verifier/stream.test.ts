/**
 * The streaming verifier (core/verifier/stream.ts, VerifierState.judge) against the whole report:
 * the same verdicts, on the conformance corpus and on random workflows and events, though it keeps
 * nothing per step and reuses one view. Property tests print their seed (test/support/fc.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import fc from '../../support/fc';
import { eventsOver, workflowValue } from '../../support/arbitrary';
import { compareCase, loadCorpus, workflowResolver } from '../../support/conformance';
import { splitLines, type LineError } from '../../../core/schema/jsonl';
import type { TrajectoryEvent } from '../../../core/schema/trajectory';
import { VerifierState } from '../../../core/verifier/state';
import { verifyLines, type StreamStart, type TrajectorySink, type UserContext } from '../../../core/verifier/stream';
import type { StageVisitResult, StepResult, TrajectorySummary } from '../../../core/verifier/types';
import { verifyTrajectoryText, type TrajectoryReport } from '../../../core/verifier/verify';
import { loadWorkflow } from '../../../core/workflow/load';

const CORPUS = path.resolve(__dirname, '../../../../test-fixtures/conformance');

/** A stream's output put back together as a report: copies of the reused views, visits from their steps. */
class Reassembled implements TrajectorySink {
  begun: StreamStart | undefined;
  steps: StepResult[] = [];
  lineErrors: LineError[] = [];
  context: UserContext[] = [];
  visits: StageVisitResult[] = [];
  summary: TrajectorySummary | undefined;
  start(s: StreamStart): void {
    this.begun = s;
  }

  step(s: StepResult): void {
    // A copy: the view is one object, overwritten by the next step.
    const copy = JSON.parse(JSON.stringify(s)) as StepResult;
    this.steps.push(copy);
    if (s.stageVisit) this.visits.push(copy.stageVisit!);
  }

  lineError(e: LineError): void {
    this.lineErrors.push(e);
  }

  userContext(c: UserContext): void {
    this.context.push(c);
  }

  end(summary: TrajectorySummary | undefined): void {
    this.summary = summary && { ...summary, stages: [...this.visits, ...summary.stages] };
  }
}

/** The stream of `text` (nothing kept per step, one reused view) beside the whole report. */
function both(text: string, opts = {}): { stream: Reassembled; report: TrajectoryReport } {
  const stream = new Reassembled();
  verifyLines(splitLines(text), { ...opts, reuse: true, keepVisits: false }, stream);
  return { stream, report: verifyTrajectoryText(text, opts) };
}

/** JSON round trip: what a sink sees, without the undefined members of a view. */
const plain = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

test('the stream gives every conformance case its expected verdicts, step by step as the whole report does', () => {
  const cases = loadCorpus(CORPUS);
  assert.ok(cases.length >= 40);
  for (const c of cases) {
    const { stream, report } = both(c.text, { resolve: workflowResolver(c.trajectoryPath) });
    assert.deepEqual(compareCase(c.expected, stream), [], c.name);
    assert.deepEqual(stream.steps, plain(report.steps), c.name);
    assert.deepEqual(stream.lineErrors, report.lineErrors, c.name);
    assert.deepEqual(plain(stream.summary), plain(report.summary), c.name);
    assert.equal(stream.begun?.fatal, report.fatal, c.name);
    assert.deepEqual(stream.begun?.workflow, report.workflow, c.name);
  }
});

const workflowAndEvents = workflowValue.chain((value) => {
  const load = loadWorkflow(value);
  if (!load.ok) throw new Error(load.problems.map((p) => p.message).join('; '));
  return fc.tuple(
    fc.constant(load.workflow),
    eventsOver(
      load.workflow.stages.map((s) => s.id),
      60,
    ),
  );
});

test('judge (a reused view) and append (a result of its own) agree on random workflows, from clones taken anywhere', () => {
  fc.assert(
    fc.property(workflowAndEvents, fc.nat(60), ([wf, list], cut) => {
      const a = new VerifierState(wf);
      const b = new VerifierState(wf, 1, undefined, { keepVisits: false });
      const k = Math.min(cut, list.length);
      const judged: StepResult[] = [];
      let c: VerifierState | undefined;
      list.forEach((e: TrajectoryEvent, i) => {
        if (i === k) c = b.clone();
        const want = a.append(e, i + 2);
        const got = b.judge(e, i + 2);
        assert.deepEqual(plain(got), plain(want));
        judged.push(plain(got));
      });
      // A clone judges the rest alone: its view is its own, and its verdicts are the same.
      if (c) for (let i = k; i < list.length; i++) assert.deepEqual(plain(c.judge(list[i]!, i + 2)), judged[i]);
      const full = a.summary();
      const streamed = b.summary();
      const open = full.stages.filter((v) => v.endedBy === 'run_end');
      assert.deepEqual(streamed.stages, open);
      assert.deepEqual({ ...streamed, stages: [] }, { ...full, stages: [] });
    }),
    { numRuns: 200 },
  );
});

test('clones share the closed visits yet each summary is its own: a clone goes on alone, the original too', () => {
  fc.assert(
    fc.property(workflowAndEvents, fc.nat(60), fc.nat(60), ([wf, list], cut, divergeAt) => {
      const k = Math.min(cut, list.length);
      const original = new VerifierState(wf);
      list.slice(0, k).forEach((e, i) => original.append(e, i + 2));
      const checkpoint = original.clone();
      // The original goes on with the rest; a clone of the checkpoint goes on with the rest in another order.
      list.slice(k).forEach((e, i) => original.append(e, k + i + 2));
      const branch = checkpoint.clone();
      const other = list.slice(k).reverse();
      other.forEach((e, i) => branch.append(e, k + i + 2));
      const replay = (events: TrajectoryEvent[]) => {
        const s = new VerifierState(wf);
        events.forEach((e, i) => s.append(e, i + 2));
        return s.summary();
      };
      assert.deepEqual(original.summary(), replay(list));
      assert.deepEqual(branch.summary(), replay([...list.slice(0, k), ...other]));
      assert.deepEqual(checkpoint.summary(), replay(list.slice(0, k)), 'the checkpoint is as it was');
      // And the checkpoint itself may go on later, alone.
      const d = Math.min(divergeAt, list.length - k);
      list.slice(k, k + d).forEach((e, i) => checkpoint.append(e, k + i + 2));
      assert.deepEqual(checkpoint.summary(), replay(list.slice(0, k + d)));
      assert.deepEqual(original.summary(), replay(list), 'the original is untouched by it');
    }),
    { numRuns: 200 },
  );
});

test('a file with no header, or a workflow that cannot be used, streams why and no step', () => {
  const none = both('{"type":"message","role":"user","content":"hi"}\n');
  assert.equal(none.stream.steps.length, 0);
  assert.match(none.stream.begun?.fatal ?? '', /no header names a workflow/);
  assert.equal(none.stream.summary, undefined);
  assert.deepEqual(none.stream.lineErrors, none.report.lineErrors);
  const blank = both('\n\n');
  assert.equal(blank.stream.begun?.fatal, blank.report.fatal);
});
