/**
 * The conformance corpus (test-fixtures/conformance/): loading it and comparing
 * a backend's results with a case's expectations. Backend-neutral: any verifier
 * that produces line errors, per-line step results and a summary in the shapes
 * of core/verifier/state.ts can be checked with `compareCase`.
 *
 * The expectations were derived by hand from docs/rewards.md; the format is
 * described in test-fixtures/conformance/README.md.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CHECK_IDS, type CheckId, type Verdict } from '../../core/verifier/checks';
import type { GateResult, ProposedCall, StepResult, TrajectorySummary } from '../../core/verifier/types';
import type { VerifierBackend } from '../../core/verifier/backend';
import { verifyTrajectoryText, type WorkflowResolver } from '../../core/verifier/verify';
import { parseTrajectory } from '../../core/schema/jsonl';
import { loadWorkflowText, BUILTIN_WORKFLOWS } from '../../core/workflow/load';

export type Reward = -1 | 0 | 1;

export interface ExpectedLineError {
  line: number;
  column?: number;
}

/** One judged event: a tool_call (has toolReward) or an outcome event (has none). */
export interface ExpectedStep {
  line: number;
  toolReward?: Reward;
  /** Exactly the checks that fail on this line. */
  failed: CheckId[];
  /** Checks that must be made and pass. */
  passed?: CheckId[];
  /** Checks that must not be made at all (they do not apply). */
  absent?: CheckId[];
}

export interface ExpectedStage {
  stage: string;
  reward: Reward;
  failed: CheckId[];
  passed?: CheckId[];
  absent?: CheckId[];
}

/** A call put to the gate after the case's last event, and what the gate must decide. */
export interface ExpectedGate {
  call: ProposedCall;
  decision: 'allow' | 'ask' | 'block';
  /** The ask pattern the gate must report; absent: it must report none. */
  askPattern?: string;
  toolReward: Reward;
  failed: CheckId[];
  passed?: CheckId[];
  absent?: CheckId[];
}

export interface ExpectedCase {
  description: string;
  /** Calls proposed to the gate on the state after the last event. */
  gates?: ExpectedGate[];
  lineErrors?: ExpectedLineError[];
  steps: ExpectedStep[];
  stages: ExpectedStage[];
  outcome: 0 | 1;
  /** Exactly the summary's failed outcome checks (outcome.submitted, outcome.check_passed). */
  outcomeFailed?: CheckId[];
  /** Whether the summary's outcome waits for a judge outside the run (`outcome.pending`); absent: not compared. */
  outcomePending?: boolean;
  return: number;
  /** Set when the builtin verifier is believed to disagree with the spec: the case is reported as a todo. */
  disputed?: string;
}

export interface ConformanceCase {
  /** `NNN-short-name`. */
  name: string;
  trajectoryPath: string;
  expectedPath: string;
  text: string;
  expected: ExpectedCase;
}

/** What a backend produced for one trajectory. */
export interface ConformanceResults {
  lineErrors: readonly { line: number; column?: number; message?: string }[];
  steps: readonly StepResult[];
  summary?: TrajectorySummary | undefined;
}

export const RETURN_TOLERANCE = 1e-9;

const TRAJECTORY_SUFFIX = '.lar.jsonl';
const EXPECTED_SUFFIX = '.expected.json';
const CASE_NAME = /^\d{3}-[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Loads every case in `dir`, sorted by name; throws on a missing partner file or a malformed expectation. */
export function loadCorpus(dir: string): ConformanceCase[] {
  const files = fs.readdirSync(dir);
  const trajectories = files
    .filter((f) => f.endsWith(TRAJECTORY_SUFFIX))
    .map((f) => f.slice(0, -TRAJECTORY_SUFFIX.length));
  const expectations = files.filter((f) => f.endsWith(EXPECTED_SUFFIX)).map((f) => f.slice(0, -EXPECTED_SUFFIX.length));
  const problems: string[] = [];
  for (const name of expectations)
    if (!trajectories.includes(name)) problems.push(`${name}${EXPECTED_SUFFIX} has no ${name}${TRAJECTORY_SUFFIX}`);
  for (const name of trajectories)
    if (!expectations.includes(name)) problems.push(`${name}${TRAJECTORY_SUFFIX} has no ${name}${EXPECTED_SUFFIX}`);
  for (const name of trajectories) if (!CASE_NAME.test(name)) problems.push(`"${name}" is not named NNN-short-name`);
  const numbers = new Map<string, string>();
  for (const name of trajectories) {
    const n = name.slice(0, 3);
    if (numbers.has(n)) problems.push(`case number ${n} is used twice (${numbers.get(n)}, ${name})`);
    numbers.set(n, name);
  }
  const cases: ConformanceCase[] = [];
  for (const name of trajectories.sort()) {
    const trajectoryPath = path.join(dir, name + TRAJECTORY_SUFFIX);
    const expectedPath = path.join(dir, name + EXPECTED_SUFFIX);
    if (!fs.existsSync(expectedPath)) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(expectedPath, 'utf8'));
    } catch (e) {
      problems.push(`${name}${EXPECTED_SUFFIX}: not JSON: ${(e as Error).message}`);
      continue;
    }
    const shape = checkExpected(raw);
    if (shape.length) {
      problems.push(...shape.map((p) => `${name}${EXPECTED_SUFFIX}: ${p}`));
      continue;
    }
    cases.push({
      name,
      trajectoryPath,
      expectedPath,
      text: fs.readFileSync(trajectoryPath, 'utf8'),
      expected: raw as ExpectedCase,
    });
  }
  if (problems.length) throw new Error(`the conformance corpus in ${dir} is malformed:\n  ${problems.join('\n  ')}`);
  return cases;
}

/** Reads a workflow named by a path in a trajectory header, relative to the trajectory file. */
export function workflowResolver(trajectoryPath: string): WorkflowResolver {
  return (ref) => {
    const file = path.resolve(path.dirname(trajectoryPath), ref);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      return { error: `cannot read the workflow "${ref}" (${file}): ${(e as Error).message}` };
    }
    const load = loadWorkflowText(text);
    return load.ok
      ? { workflow: load.workflow, source: file }
      : { error: `the workflow "${ref}" is not well-formed`, problems: load.problems };
  };
}

/**
 * The reward weights a case's workflow declares, read from the raw JSON (inline,
 * builtin or file) with the schema defaults, without going through any verifier
 * code. Used to check that each hand-computed `return` agrees with its own
 * hand-computed rewards.
 */
export function declaredWeights(c: ConformanceCase): { alpha: number; beta: number } {
  const header = JSON.parse(c.text.split('\n')[0]!) as { workflow: unknown };
  let wf: unknown = header.workflow;
  if (typeof wf === 'string') {
    wf = wf.startsWith('builtin:')
      ? BUILTIN_WORKFLOWS[wf.slice('builtin:'.length)]
      : JSON.parse(fs.readFileSync(path.resolve(path.dirname(c.trajectoryPath), wf), 'utf8'));
  }
  const rewards = (wf as { rewards?: { alpha?: number; beta?: number } }).rewards ?? {};
  return { alpha: rewards.alpha ?? 0.5, beta: rewards.beta ?? 0.25 };
}

/** R = o + α·mean(S) + β·mean(T) computed from the expectation itself (mean(∅) = 0). */
export function returnOfExpected(e: ExpectedCase, weights: { alpha: number; beta: number }): number {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const tool = e.steps.flatMap((s) => (s.toolReward === undefined ? [] : [s.toolReward]));
  return e.outcome + weights.alpha * mean(e.stages.map((s) => s.reward)) + weights.beta * mean(tool);
}

/** Human-readable differences between a case's expectations and a backend's results; empty when they agree. */
export function compareCase(expected: ExpectedCase, results: ConformanceResults): string[] {
  const diffs: string[] = [];

  // Malformed lines.
  const gotErrors = new Map(results.lineErrors.map((e) => [e.line, e]));
  const wantErrors = new Map((expected.lineErrors ?? []).map((e) => [e.line, e]));
  for (const want of wantErrors.values()) {
    const got = gotErrors.get(want.line);
    if (!got) diffs.push(`line ${want.line}: expected a line error, got none`);
    else if (want.column !== undefined && got.column !== want.column) {
      diffs.push(
        `line ${want.line}: expected the line error at column ${want.column}, got column ${got.column}${got.message ? ` (${got.message})` : ''}`,
      );
    }
  }
  for (const got of gotErrors.values()) {
    if (!wantErrors.has(got.line))
      diffs.push(
        `line ${got.line}: unexpected line error at column ${got.column}${got.message ? `: ${got.message}` : ''}`,
      );
  }

  // Judged events, in order; message and end events carry no verdict.
  const judged = results.steps.filter((s) => s.type === 'tool_call' || s.type === 'outcome');
  for (const s of results.steps) {
    if (s.type === 'tool_call' || s.type === 'outcome') continue;
    if (s.verdicts.length)
      diffs.push(`line ${s.line}: a ${s.type} event carries no verdict, got ${s.verdicts.map(show).join(', ')}`);
    if (s.toolReward !== undefined)
      diffs.push(`line ${s.line}: a ${s.type} event has no tool reward, got ${s.toolReward}`);
  }
  const wantLines = expected.steps.map((s) => s.line);
  const gotLines = judged.map((s) => s.line);
  if (wantLines.join(',') !== gotLines.join(',')) {
    diffs.push(
      `judged lines (tool_call and outcome events): expected [${wantLines.join(', ')}], got [${gotLines.join(', ')}]`,
    );
  }
  const byLine = new Map(judged.map((s) => [s.line, s]));
  for (const want of expected.steps) {
    const got = byLine.get(want.line);
    if (!got) {
      diffs.push(
        `line ${want.line}: expected a judged ${want.toolReward === undefined ? 'outcome event' : 'tool call'}, got no result`,
      );
      continue;
    }
    if (got.type === 'tool_call') {
      if (want.toolReward === undefined) diffs.push(`line ${want.line}: expected an outcome event, got a tool call`);
      else if (got.toolReward !== want.toolReward)
        diffs.push(
          `line ${want.line}: expected tool reward ${want.toolReward}, got ${got.toolReward}${failedNote(got.verdicts)}`,
        );
    } else {
      if (want.toolReward !== undefined)
        diffs.push(`line ${want.line}: expected a tool call with reward ${want.toolReward}, got an outcome event`);
      if (got.toolReward !== undefined)
        diffs.push(`line ${want.line}: an outcome event has no tool reward, got ${got.toolReward}`);
    }
    diffs.push(...compareVerdicts(`line ${want.line}`, want, got.verdicts));
  }
  const wantCalls = expected.steps.filter((s) => s.toolReward !== undefined).length;

  const summary = results.summary;
  if (!summary) {
    diffs.push('no summary was produced');
    return diffs;
  }
  if (summary.steps !== wantCalls)
    diffs.push(`summary: expected ${wantCalls} steps (tool calls), got ${summary.steps}`);

  // Stage visits, in order, the unclosed last one included.
  const n = Math.max(expected.stages.length, summary.stages.length);
  if (expected.stages.length !== summary.stages.length) {
    diffs.push(
      `visits: expected ${expected.stages.length} [${expected.stages.map((s) => s.stage).join(', ')}], got ${summary.stages.length} [${summary.stages.map((s) => s.stage).join(', ')}]`,
    );
  }
  for (let i = 0; i < n; i++) {
    const want = expected.stages[i];
    const got = summary.stages[i];
    if (!want || !got) continue;
    const where = `visit ${i + 1} (${want.stage})`;
    if (got.stage !== want.stage) diffs.push(`${where}: expected stage ${want.stage}, got ${got.stage}`);
    if (got.reward !== want.reward)
      diffs.push(`${where}: expected stage reward ${want.reward}, got ${got.reward}${failedNote(got.verdicts)}`);
    diffs.push(...compareVerdicts(where, want, got.verdicts));
  }

  // Outcome and return.
  if (summary.outcome.reward !== expected.outcome) {
    diffs.push(
      `outcome: expected ${expected.outcome}, got ${summary.outcome.reward}${failedNote(summary.outcome.verdicts)}`,
    );
  }
  if (expected.outcomePending !== undefined && (summary.outcome.pending ?? false) !== expected.outcomePending)
    diffs.push(`outcome pending: expected ${expected.outcomePending}, got ${summary.outcome.pending ?? false}`);
  if (expected.outcomeFailed)
    diffs.push(...compareVerdicts('summary outcome', { failed: expected.outcomeFailed }, summary.outcome.verdicts));
  if (!(Math.abs(summary.return - expected.return) <= RETURN_TOLERANCE)) {
    diffs.push(
      `return: expected ${expected.return}, got ${summary.return} (o ${summary.outcome.reward}, mean(S) ${summary.stageRewards.mean}, mean(T) ${summary.toolRewards.mean}, α ${summary.alpha}, β ${summary.beta})`,
    );
  }
  return diffs;
}

/**
 * What `backend`'s gate decides for each of the case's `gates` on the state
 * after the trajectory's last event (the events are replayed in one session).
 */
export async function gatesAfter(backend: VerifierBackend, c: ConformanceCase): Promise<GateResult[]> {
  const wanted = c.expected.gates ?? [];
  if (!wanted.length) return [];
  const parsed = parseTrajectory(c.text);
  const report = verifyTrajectoryText(c.text, { resolve: workflowResolver(c.trajectoryPath) });
  if (!report.workflow) throw new Error(`${c.name}: no workflow to gate against: ${report.fatal ?? 'unknown'}`);
  const header = parsed.lines.find((l) => l.kind === 'header');
  const session = await backend.open(
    report.workflow,
    header?.line ?? 1,
    header?.kind === 'header' ? header.header.sandbox : undefined,
  );
  try {
    for (const l of parsed.lines) if (l.kind === 'event') await session.append(l.event, l.line);
    const out: GateResult[] = [];
    for (const g of wanted) out.push(await session.gate(g.call));
    return out;
  } finally {
    session.close();
  }
}

/** Differences between the expected and the actual gate results, in order. */
export function compareGates(expected: readonly ExpectedGate[], results: readonly GateResult[]): string[] {
  const diffs: string[] = [];
  if (results.length !== expected.length)
    diffs.push(`gates: expected ${expected.length} results, got ${results.length}`);
  expected.forEach((want, i) => {
    const got = results[i];
    if (!got) return;
    const where = `gate ${i + 1} (${want.call.tool} ${JSON.stringify(want.call.args)})`;
    if (got.decision !== want.decision)
      diffs.push(`${where}: expected ${want.decision}, got ${got.decision}${failedNote(got.verdicts)}`);
    if (got.askPattern !== want.askPattern) {
      diffs.push(
        `${where}: expected ${want.askPattern === undefined ? 'no ask pattern' : `ask pattern "${want.askPattern}"`}, got ${got.askPattern === undefined ? 'none' : `"${got.askPattern}"`}`,
      );
    }
    if (got.toolReward !== want.toolReward)
      diffs.push(`${where}: expected tool reward ${want.toolReward}, got ${got.toolReward}`);
    diffs.push(...compareVerdicts(where, want, got.verdicts));
  });
  return diffs;
}

function compareVerdicts(
  where: string,
  want: { failed: readonly string[]; passed?: readonly string[]; absent?: readonly string[] },
  verdicts: readonly Verdict[],
): string[] {
  const diffs: string[] = [];
  const failed = new Set(verdicts.filter((v) => !v.ok).map((v) => v.check as string));
  const present = new Set(verdicts.map((v) => v.check as string));
  for (const c of want.failed) {
    if (!failed.has(c))
      diffs.push(`${where}: expected ${c} to fail, but it ${present.has(c) ? 'passed' : 'was not checked'}`);
  }
  for (const v of verdicts) {
    if (!v.ok && !want.failed.includes(v.check)) diffs.push(`${where}: ${v.check} failed unexpectedly: ${v.reason}`);
  }
  for (const c of want.passed ?? []) {
    // A listed check that failed is already reported above as an unexpected failure.
    if (!present.has(c)) diffs.push(`${where}: expected ${c} to be checked and pass, but it was not checked`);
  }
  for (const c of want.absent ?? []) {
    if (present.has(c))
      diffs.push(
        `${where}: ${c} does not apply here and must not be checked, but it was (${verdicts.find((v) => v.check === c)!.ok ? 'passed' : 'failed'})`,
      );
  }
  return diffs;
}

function show(v: Verdict): string {
  return `${v.check} ${v.ok ? 'passed' : 'failed'}`;
}

function failedNote(verdicts: readonly Verdict[]): string {
  const failed = verdicts.filter((v) => !v.ok).map((v) => v.check);
  return failed.length ? ` (failed: ${failed.join(', ')})` : ' (nothing failed)';
}

// ---- shape of an expectation file ----

const CASE_KEYS = [
  'description',
  'lineErrors',
  'steps',
  'stages',
  'outcome',
  'outcomeFailed',
  'outcomePending',
  'return',
  'disputed',
  'gates',
];
const GATE_KEYS = ['call', 'decision', 'askPattern', 'toolReward', 'failed', 'passed', 'absent'];
const STEP_KEYS = ['line', 'toolReward', 'failed', 'passed', 'absent'];
const STAGE_KEYS = ['stage', 'reward', 'failed', 'passed', 'absent'];

function checkExpected(raw: unknown): string[] {
  const p: string[] = [];
  if (!isObject(raw)) return ['expected a JSON object'];
  unknownKeys(raw, CASE_KEYS, '', p);
  if (typeof raw.description !== 'string' || raw.description === '') p.push('"description" must be a non-empty string');
  if (raw.disputed !== undefined && (typeof raw.disputed !== 'string' || raw.disputed === ''))
    p.push('"disputed" must be a non-empty string');
  if (raw.outcome !== 0 && raw.outcome !== 1) p.push('"outcome" must be 0 or 1');
  if (typeof raw.return !== 'number' || !Number.isFinite(raw.return)) p.push('"return" must be a number');
  if (raw.outcomeFailed !== undefined) checkIds(raw.outcomeFailed, 'outcomeFailed', p);
  if (raw.outcomePending !== undefined && typeof raw.outcomePending !== 'boolean')
    p.push('"outcomePending" must be true or false');
  if (raw.lineErrors !== undefined) {
    if (!Array.isArray(raw.lineErrors)) p.push('"lineErrors" must be an array');
    else
      raw.lineErrors.forEach((e, i) => {
        if (!isObject(e)) return void p.push(`lineErrors[${i}] must be an object`);
        unknownKeys(e, ['line', 'column'], `lineErrors[${i}].`, p);
        if (!isPositiveInt(e.line)) p.push(`lineErrors[${i}].line must be a positive integer`);
        if (e.column !== undefined && !isPositiveInt(e.column))
          p.push(`lineErrors[${i}].column must be a positive integer`);
      });
  }
  if (!Array.isArray(raw.steps)) p.push('"steps" must be an array');
  else {
    let last = 0;
    raw.steps.forEach((s, i) => {
      if (!isObject(s)) return void p.push(`steps[${i}] must be an object`);
      unknownKeys(s, STEP_KEYS, `steps[${i}].`, p);
      if (!isPositiveInt(s.line)) p.push(`steps[${i}].line must be a positive integer`);
      else if (s.line <= last) p.push(`steps[${i}].line ${s.line} is not after the previous step's line ${last}`);
      else last = s.line;
      if (s.toolReward !== undefined && s.toolReward !== -1 && s.toolReward !== 0 && s.toolReward !== 1)
        p.push(`steps[${i}].toolReward must be -1, 0 or 1`);
      checkVerdictLists(s, `steps[${i}]`, p);
    });
  }
  if (!Array.isArray(raw.stages)) p.push('"stages" must be an array');
  else
    raw.stages.forEach((s, i) => {
      if (!isObject(s)) return void p.push(`stages[${i}] must be an object`);
      unknownKeys(s, STAGE_KEYS, `stages[${i}].`, p);
      if (typeof s.stage !== 'string' || s.stage === '') p.push(`stages[${i}].stage must be a stage id`);
      if (s.reward !== -1 && s.reward !== 0 && s.reward !== 1) p.push(`stages[${i}].reward must be -1, 0 or 1`);
      checkVerdictLists(s, `stages[${i}]`, p);
    });
  if (raw.gates !== undefined) {
    if (!Array.isArray(raw.gates)) p.push('"gates" must be an array');
    else
      raw.gates.forEach((g, i) => {
        if (!isObject(g)) return void p.push(`gates[${i}] must be an object`);
        unknownKeys(g, GATE_KEYS, `gates[${i}].`, p);
        if (!isObject(g.call) || typeof g.call.tool !== 'string' || !('args' in g.call))
          p.push(`gates[${i}].call must be {"tool": …, "args": …}`);
        else unknownKeys(g.call, ['tool', 'args', 'argsError'], `gates[${i}].call.`, p);
        if (g.decision !== 'allow' && g.decision !== 'ask' && g.decision !== 'block')
          p.push(`gates[${i}].decision must be allow, ask or block`);
        if (g.askPattern !== undefined && (typeof g.askPattern !== 'string' || g.askPattern === ''))
          p.push(`gates[${i}].askPattern must be a pattern`);
        if (g.toolReward !== -1 && g.toolReward !== 0 && g.toolReward !== 1)
          p.push(`gates[${i}].toolReward must be -1, 0 or 1`);
        checkVerdictLists(g, `gates[${i}]`, p);
      });
  }
  return p;
}

function checkVerdictLists(o: Record<string, unknown>, where: string, p: string[]): void {
  checkIds(o.failed, `${where}.failed`, p);
  if (o.passed !== undefined) checkIds(o.passed, `${where}.passed`, p);
  if (o.absent !== undefined) checkIds(o.absent, `${where}.absent`, p);
  const failed = Array.isArray(o.failed) ? (o.failed as unknown[]) : [];
  const passed = Array.isArray(o.passed) ? (o.passed as unknown[]) : [];
  const absent = Array.isArray(o.absent) ? (o.absent as unknown[]) : [];
  for (const c of passed) if (failed.includes(c)) p.push(`${where}: ${String(c)} is listed as both failed and passed`);
  for (const c of absent)
    if (failed.includes(c) || passed.includes(c)) p.push(`${where}: ${String(c)} is listed as absent and as checked`);
}

function checkIds(v: unknown, where: string, p: string[]): void {
  if (!Array.isArray(v)) return void p.push(`${where} must be an array of check ids`);
  for (const c of v)
    if (typeof c !== 'string' || !(CHECK_IDS as string[]).includes(c))
      p.push(`${where}: ${JSON.stringify(c)} is not a check id`);
  if (new Set(v).size !== v.length) p.push(`${where} lists a check twice`);
}

function unknownKeys(o: Record<string, unknown>, keys: readonly string[], prefix: string, p: string[]): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) p.push(`unknown key "${prefix}${k}"`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isPositiveInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0;
}
