import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { EPSILON } from '../../../core/rewards/advantages';
import { lar } from '../../support/lar-cli';
import { checkRllmEpisode, checkSkyrlOutput, episodesOf, type Episode } from '../../support/trainer-shapes';

const GROUP = resolve(__dirname, '../../../../test-fixtures/training/group-4');
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} ≉ ${b}`);

/*
 * The group of docs/training.md, by hand. Outcomes o = 1, 1, 0, 0: mean ½, std ½, so
 * A^o = ±½ / (½ + ε). Every visit scores +1: each stage's advantage is 0. Tool rewards: in stage
 * `work` all 1 (advantage 0); in `done` run_command and submit give 1 seven times and 0 once
 * (rollout 3's failing npm test): mean ⅞, std √(7/64) = 0.3307…, so Â^t = ⅛/(std + ε) for a 1 and
 * −⅞/(std + ε) for the 0. A step's advantage is A^o + ½·0 + ¼·Â^t.
 */
const Ao = 0.5 / (0.5 + EPSILON);
const std = Math.sqrt(7 / 64);
const up = 0.125 / (std + EPSILON);
const down = -0.875 / (std + EPSILON);
const byHand = [
  [Ao, Ao, Ao + up / 4, Ao + up / 4],
  [Ao, Ao, Ao + up / 4, Ao + up / 4],
  [-Ao, -Ao, -Ao + down / 4, -Ao + up / 4],
  [-Ao, -Ao, -Ao + up / 4, -Ao + up / 4],
];

test('the group of docs/training.md: rLLM steps carry the advantages computed by hand, in rLLM’s own shape', async () => {
  const r = await lar(['export', '--format', 'rllm', '--advantage', 'step', GROUP]);
  assert.equal(r.code, 0, r.err);
  const episodes = episodesOf(r.out);
  assert.equal(episodes.length, 4);
  episodes.forEach((e, k) => {
    checkRllmEpisode(e);
    assert.equal(e.id.split(':')[1], String(k));
    assert.equal(e.is_correct, k < 2);
    assert.equal(e.termination_reason, 'env_done');
    const steps = e.trajectories[0]!.steps;
    assert.equal(steps.length, 4);
    steps.forEach((s, i) => close(s.advantage as number, byHand[k]![i]!));
    assert.deepEqual(steps[0]!.response_ids, [100 * (k + 1) + 1, 100 * (k + 1) + 2]);
    assert.deepEqual(steps[1]!.prompt_ids, [1, 2, 3, 100 * (k + 1) + 1, 100 * (k + 1) + 2, 7, 8]);
    assert.equal(steps[3]!.done, true);
  });
  // The default: one value per response token, the list rLLM's precomputed-advantage path takes.
  const tokens = await lar(['export', '--format', 'rllm', GROUP]);
  const e3 = JSON.parse(tokens.out.split('\n')[2]!) as Episode;
  const s = e3.trajectories[0]!.steps[2]!;
  assert.equal((s.advantage as number[]).length, 2);
  for (const a of s.advantage as number[]) close(a, byHand[2]![2]!);
});

test('the same group as one SkyRL GeneratorOutput: one segment per rollout, tool results masked out, turn advantages as token rewards', async () => {
  const r = await lar(['export', '--format', 'skyrl', GROUP]);
  assert.equal(r.code, 0, r.err);
  const o = JSON.parse(r.out) as Record<string, unknown[] | null>;
  checkSkyrlOutput(o, 4, false);
  assert.deepEqual(o.prompt_token_ids![0], [1, 2, 3]);
  assert.deepEqual(o.response_ids![0], [101, 102, 7, 8, 103, 9, 104, 105, 6, 6, 106]);
  assert.deepEqual(o.loss_masks![2], [1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1]);
  const a = byHand[2]!;
  (o.rewards![2] as number[]).forEach((v, i) => close(v, [a[0], a[0], 0, 0, a[1], 0, a[2], a[2], 0, 0, a[3]][i]!));
  assert.deepEqual(o.rollout_logprobs![0], [-0.5, -0.25, 0, 0, -1, 0, -0.125, 0, 0, 0, -2]);
  assert.deepEqual(o.trajectory_ids![3], {
    instance_id: (o.trajectory_ids![0] as { instance_id: string }).instance_id,
    repetition_id: 3,
  });
  const steps = await lar(['export', '--format', 'skyrl', '--skyrl-rows', 'step', GROUP]);
  assert.equal(steps.code, 0, steps.err);
  const so = JSON.parse(steps.out) as Record<string, unknown[] | null>;
  checkSkyrlOutput(so, 4, true);
  assert.equal(so.response_ids!.length, 16);
  assert.deepEqual(so.is_last_step!.slice(0, 4), [false, false, false, true]);
});

test('a rollout whose prompt does not continue the turn before is refused as one segment, with the turn named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-skyrl-'));
  cpSync(GROUP, dir, { recursive: true });
  const f = join(dir, 'rollout-2.lar.jsonl');
  // Turn 3's prompt re-renders turn 2's answer: its shared prefix stops short.
  writeFileSync(
    f,
    readFileSync(f, 'utf8').replace('"promptShared":8,"promptIds":[9]', '"promptShared":7,"promptIds":[5,9]'),
  );
  const r = await lar(['export', '--format', 'skyrl', dir]);
  assert.equal(r.code, 1);
  assert.match(r.err, /rollout-2\.lar\.jsonl: turn 3's prompt does not continue turn 2 .*--skyrl-rows step/);
  assert.equal(r.out, '');
  const ok = await lar(['export', '--format', 'skyrl', '--skyrl-rows', 'step', dir]);
  assert.equal(ok.code, 0, ok.err);
});

test('bad input: no files, an unknown shape, a group of different tasks', async () => {
  assert.equal((await lar(['export', '--format', 'rllm'])).code, 2);
  const bad = await lar(['export', '--format', 'rllm', '--advantage', 'half', GROUP]);
  assert.match(bad.err, /--advantage must be step or token/);
  const dir = mkdtempSync(join(tmpdir(), 'lar-rllm-'));
  cpSync(GROUP, dir, { recursive: true });
  const f = join(dir, 'rollout-4.lar.jsonl');
  writeFileSync(f, readFileSync(f, 'utf8').replace('Make npm test pass', 'Another task'));
  const mixed = await lar(['export', '--format', 'rllm', dir]);
  assert.equal(mixed.code, 1);
  assert.match(mixed.err, /not rollouts of one task/);
});

test('tokens lines out of place are refused, not exported with the wrong prefix or the wrong advantage', async () => {
  const cases: [string, (text: string) => string, RegExp][] = [
    [
      'a tokens line missing',
      (t) => t.replace(/\{"type":"tokens","turn":2,[^\n]*\n/, ''),
      /turn 3 follows turn 1: a tokens line is missing or out of place/,
    ],
    [
      'a tokens line between two calls of one reply',
      (t) => t.replace('"reply":2}', '"reply":1}'),
      /a tokens line splits the calls of reply 1/,
    ],
  ];
  for (const [what, edit, says] of cases) {
    const dir = mkdtempSync(join(tmpdir(), 'lar-export-bad-'));
    cpSync(GROUP, dir, { recursive: true });
    const f = join(dir, 'rollout-3.lar.jsonl');
    writeFileSync(f, edit(readFileSync(f, 'utf8')));
    for (const format of ['rllm', 'skyrl']) {
      const r = await lar(['export', '--format', format, dir]);
      assert.equal(r.code, 1, `${what} (${format})`);
      assert.match(r.err, says, `${what} (${format})`);
      assert.equal(r.out, '', `${what} (${format}): nothing is written`);
    }
  }
});

test('a group folder exports the members its advantages.jsonl lists, not a rollout the group left out', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-export-members-'));
  cpSync(GROUP, dir, { recursive: true });
  // Rollout 4 was left out of the group: it is on disk, not in advantages.jsonl.
  const a = await lar([
    'advantages',
    '--out',
    join(dir, 'advantages.jsonl'),
    ...[1, 2, 3].map((k) => join(dir, `rollout-${k}.lar.jsonl`)),
  ]);
  assert.equal(a.code, 0, a.err);
  const r = await lar(['export', '--format', 'rllm', dir]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /the group's 3 members/);
  assert.equal(episodesOf(r.out).length, 3);
});
