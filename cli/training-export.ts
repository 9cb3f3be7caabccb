/** `lar export --format rllm|skyrl`: a group of rollouts in a trainer's own shape (docs/training.md). */
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { groupAdvantages } from '../core/rewards/advantages';
import { parseTrajectory } from '../core/schema/jsonl';
import { rllmEpisode } from '../core/training/rllm';
import { skyrlOutput } from '../core/training/skyrl';
import { trainingRollout } from '../core/training/turns';
import type { Flags, Io } from './args';
import { UsageError, readText } from './read-input';
import { integrityOf, verifyFile, withBackend } from './trajectory-input';

/** The group's files: those named, or a group folder's `rollout-K.lar.jsonl` in order. */
function groupFiles(positional: readonly string[]): string[] {
  if (positional.length === 1 && statSync(positional[0]!, { throwIfNoEntry: false })?.isDirectory()) {
    const dir = positional[0]!;
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
  const shape = flags.values.get('--advantage') ?? 'step';
  if (shape !== 'step' && shape !== 'token') throw new UsageError('--advantage must be step or token');
  const rows = flags.values.get('--skyrl-rows') ?? 'segment';
  if (rows !== 'segment' && rows !== 'step') throw new UsageError('--skyrl-rows must be segment or step');
  const files = groupFiles(flags.positional);
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
  try {
    const advantages = groupAdvantages(verified);
    const rollouts = verified.map((v, i) => trainingRollout(v.parsed, v.report, advantages[i]!, i));
    for (const r of rollouts)
      if (!r.hasTokens)
        io.err(`lar export: ${r.source} has turns without token ids (record them with --record-tokens)`);
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
  return malformed || verified.length < files.length ? 1 : 0;
}
