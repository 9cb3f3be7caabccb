/** `lar export --format rllm|skyrl`: a group of rollouts in a trainer's own shape (docs/training.md). */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { groupAdvantages } from '../core/rewards/advantages';
import { parseTrajectory } from '../core/schema/jsonl';
import { rllmEpisode } from '../core/training/rllm';
import { skyrlOutput } from '../core/training/skyrl';
import { trainingRollout } from '../core/training/turns';
import type { Flags, Io } from './args';
import { UsageError, readText } from './read-input';

/** The most token ids an exported group may hold in all (prompts put back whole). */
const MAX_GROUP_IDS = 64 * 2 ** 20;
import { integrityOf, verifyFile, withBackend } from './trajectory-input';

/**
 * The group's files: those named, or a group folder's members. `lar run --rollouts` lists them in the
 * folder's advantages.jsonl: a rollout it left out (crashed, ended on an error, changed) stays on disk
 * but out of the group, and out of its advantages. Without that file, every `rollout-K.lar.jsonl` in order.
 */
function groupFiles(positional: readonly string[], io: Io): string[] {
  if (positional.length === 1 && statSync(positional[0]!, { throwIfNoEntry: false })?.isDirectory()) {
    const dir = positional[0]!;
    const listed = join(dir, 'advantages.jsonl');
    if (existsSync(listed)) {
      const members = readText(listed)
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => {
          const source = (JSON.parse(l) as { source?: unknown }).source;
          if (typeof source !== 'string') throw new UsageError(`${listed}: a line names no source trajectory`);
          return join(dir, basename(source));
        });
      io.err(`lar export: the group's ${members.length} members, as ${listed} lists them`);
      return members;
    }
    const files = readdirSync(dir)
      .map((f) => /^rollout-(\d+)\.lar\.jsonl$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .sort((a, b) => Number(a[1]) - Number(b[1]))
      .map((m) => join(dir, m[0]));
    if (!files.length) throw new UsageError(`${dir} holds no rollout-K.lar.jsonl files`);
    return files;
  }
  return [...positional];
}

export async function exportGroup(format: 'rllm' | 'skyrl', flags: Flags, io: Io): Promise<number> {
  if (flags.positional.length === 0)
    throw new UsageError(`lar export --format ${format} needs a group folder or the group's trajectory files`);
  // rLLM's precomputed-advantage path takes a list per step: one value per response token by default.
  const shape = flags.values.get('--advantage') ?? 'token';
  if (shape !== 'step' && shape !== 'token') throw new UsageError('--advantage must be step or token');
  const rows = flags.values.get('--skyrl-rows') ?? 'segment';
  if (rows !== 'segment' && rows !== 'step') throw new UsageError('--skyrl-rows must be segment or step');
  const files = groupFiles(flags.positional, io);
  const verified = await withBackend(flags, io, async (b) => {
    const list = [];
    for (const file of files) {
      // A trajectory changed after its run ended is not the run's: it stays out of training data.
      if (integrityOf(file).state === 'changed') {
        io.err(`lar export: ${file} changed after its run ended: left out`);
        continue;
      }
      list.push({ source: file, report: await verifyFile(file, flags, b), parsed: parseTrajectory(readText(file)) });
    }
    return list;
  });
  let malformed = 0;
  for (const { source, report } of verified)
    for (const e of report.lineErrors) {
      malformed++;
      io.err(`${source}:${e.line}:${e.column}: ${e.message} (line skipped)`);
    }
  let text: string;
  let leftOut = 0;
  try {
    const advantages = groupAdvantages(verified);
    let ids = 0;
    const all = verified.map((v, i) => {
      const r = trainingRollout(v.parsed, v.report, advantages[i]!, i);
      // Each rollout is bounded (core/export/token-turns.ts); so is what a group holds at once.
      ids += r.turns.reduce((n, t) => n + t.promptIds.length + t.completionIds.length, 0);
      if (ids > MAX_GROUP_IDS)
        throw new Error(`the group holds more than ${MAX_GROUP_IDS} token ids in all; export it in parts`);
      return r;
    });
    // A trainer trains on ids: a rollout without them on every turn is left out, and said so.
    const rollouts = all.filter((r) => r.hasTokens);
    for (const r of all)
      if (!r.hasTokens) {
        leftOut++;
        io.err(
          `lar export: ${r.source}: left out: ${r.turns.length ? 'a turn has no token ids (record them with --record-tokens)' : 'it has no model turn'}`,
        );
      }
    if (!rollouts.length) throw new Error('no rollout of the group has token ids on every turn');
    text =
      format === 'rllm'
        ? rollouts.map((r) => JSON.stringify(rllmEpisode(r, shape))).join('\n') + '\n'
        : JSON.stringify(skyrlOutput(rollouts, rows)) + '\n';
  } catch (e) {
    io.err(`lar export: ${(e as Error).message}`);
    return 1;
  }
  const out = flags.values.get('--out');
  if (out) {
    writeFileSync(out, text);
    io.err(`wrote ${out} (${format}, ${verified.length} rollout${verified.length === 1 ? '' : 's'})`);
  } else io.out(text.trimEnd());
  return malformed || leftOut || verified.length < files.length ? 1 : 0;
}
