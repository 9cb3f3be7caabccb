/**
 * The subcommands that read recorded trajectories: verify, advantages and export, with their shared steps.
 * What only advantages and export use is loaded when they run: `lar verify` starts with the verifier alone.
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseTrajectory } from '../core/schema/jsonl';
import packageJson from '../package.json';
import type { Flags, Io } from './args';
import { UsageError, readText } from './read-input';
import { integrityOf, verifyFile, verifyFileInto, withBackend } from './trajectory-input';
import { JsonLinesSink, ReportJsonSink } from '../core/verifier/verdict-json';
import { COLOR, PLAIN, TableSink } from './report-format';

/** How `lar verify` prints: `--format table|jsonl|json`; `--json` is `--format jsonl`. */
function verifyFormat(flags: Flags): 'table' | 'jsonl' | 'json' {
  const format = flags.values.get('--format') ?? (flags.switches.has('--json') ? 'jsonl' : 'table');
  if (format !== 'table' && format !== 'jsonl' && format !== 'json')
    throw new UsageError(`lar verify --format must be table, jsonl or json, not "${format}"`);
  if (format === 'table' && flags.switches.has('--json'))
    throw new UsageError('lar verify: --json is --format jsonl, not --format table');
  return format;
}

export async function cmdVerify(flags: Flags, io: Io): Promise<number> {
  if (flags.positional.length !== 1) throw new UsageError('lar verify takes exactly one trajectory file');
  const file = flags.positional[0]!;
  const format = verifyFormat(flags);
  // Stdout to a pipe is written asynchronously: when it is backed up, reading waits for it to drain.
  let backedUp = false;
  const write = (s: string) => {
    io.out(s);
    if (process.stdout.writableNeedDrain) backedUp = true;
  };
  const pace = () => {
    if (!backedUp) return undefined;
    backedUp = false;
    return once(process.stdout, 'drain').then(() => undefined);
  };
  const sink =
    format === 'table'
      ? new TableSink(file, io.color ? COLOR : PLAIN, write)
      : format === 'jsonl'
        ? new JsonLinesSink(write)
        : new ReportJsonSink(write);
  // The whole report's summary lists every stage visit, so only it keeps them.
  await withBackend(flags, io, (b) => verifyFileInto(file, flags, b, sink, { keepVisits: format === 'json', pace }));
  // Whether the file still holds what its run ended with (recorded outside the workspace).
  const integrity = integrityOf(file);
  if (!(sink instanceof TableSink)) sink.finish(integrity);
  if (integrity.state === 'changed') {
    io.err(
      `lar verify: ${file} changed after its run ended (${integrity.recorded.ended}): it held ${integrity.recorded.bytes} bytes with sha-256 ${integrity.recorded.digest}, it now holds ${integrity.bytes} with ${integrity.now}. Its rewards are not the run's.`,
    );
    return 1;
  }
  return sink.lineErrors > 0 || sink.fatal !== undefined ? 1 : 0;
}

export async function cmdAdvantages(flags: Flags, io: Io): Promise<number> {
  const out = flags.values.get('--out');
  if (!out) throw new UsageError('lar advantages needs --out OUT.jsonl');
  if (flags.positional.length === 0) throw new UsageError('lar advantages needs at least one trajectory file');
  const reports = await withBackend(flags, io, async (b) => {
    const list = [];
    for (const file of flags.positional) {
      // A trajectory changed after its run ended is not the run's: its rewards stay out of training data.
      const integrity = integrityOf(file);
      if (integrity.state === 'changed') {
        io.err(`lar advantages: ${file} changed after its run ended (${integrity.recorded.ended}): left out`);
        continue;
      }
      list.push({ source: file, report: await verifyFile(file, flags, b) });
    }
    return list;
  });
  const leftOut = flags.positional.length - reports.length;
  let malformed = 0;
  for (const { source, report } of reports) {
    for (const e of report.lineErrors) {
      malformed++;
      io.err(`${source}:${e.line}:${e.column}: ${e.message} (line skipped)`);
    }
  }
  const { groupAdvantages } = await import('../core/rewards/advantages.js');
  let lines: string;
  try {
    lines =
      groupAdvantages(reports)
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n';
  } catch (e) {
    io.err(`lar advantages: ${(e as Error).message}`);
    return 1;
  }
  writeFileSync(out, lines);
  io.err(
    `wrote ${reports.length} line${reports.length === 1 ? '' : 's'} to ${out}${malformed ? ` (${malformed} malformed line${malformed === 1 ? '' : 's'} skipped)` : ''}${leftOut ? ` (${leftOut} trajectory${leftOut === 1 ? '' : 'ies'} changed after its run ended left out)` : ''}`,
  );
  return malformed || leftOut ? 1 : 0;
}

export async function cmdExport(flags: Flags, io: Io): Promise<number> {
  const format = flags.values.get('--format');
  if (format === 'rllm' || format === 'skyrl')
    return (await import('./training-export.js')).exportGroup(format, flags, io);
  if (format !== 'atif')
    throw new UsageError(
      format === undefined
        ? 'lar export needs --format atif, rllm or skyrl'
        : `unknown export format "${format}" (supported: atif, rllm, skyrl)`,
    );
  if (flags.positional.length !== 1) throw new UsageError('lar export takes exactly one trajectory file');
  const file = flags.positional[0]!;
  const integrity = integrityOf(file);
  if (integrity.state === 'changed') {
    io.err(
      `lar export: ${file} changed after its run ended (${integrity.recorded.ended}): it is not the run's record, and is not exported`,
    );
    return 1;
  }
  const report = await withBackend(flags, io, (b) => verifyFile(file, flags, b));
  const parsed = parseTrajectory(readText(file));
  for (const e of report.lineErrors) io.err(`${file}:${e.line}:${e.column}: ${e.message} (line not exported)`);
  if (report.fatal) io.err(`${file}: exported without verifier results: ${report.fatal}`);
  const { exportAtif } = await import('../core/export/atif.js');
  const doc = exportAtif(parsed, report, {
    agentVersion: packageJson.version,
    fallbackId: basename(file).replace(/\.lar\.jsonl$/, ''),
  });
  const text = JSON.stringify(doc, null, 2) + '\n';
  const out = flags.values.get('--out');
  if (out) {
    writeFileSync(out, text);
    io.err(`wrote ${out} (${doc.schema_version}, ${doc.steps.length} steps)`);
  } else {
    io.out(text.trimEnd());
  }
  return report.lineErrors.length || report.fatal ? 1 : 0;
}
