import { TOOL_FORMATS, type ToolFormatSetting } from '../core/model/formats';
import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseTrajectory } from '../core/schema/jsonl';
import { exportAtif } from '../core/export/atif';
import { groupAdvantages } from '../core/rewards/advantages';
import { BuiltinBackend, type VerifierBackend } from '../core/verifier/backend';
import { verifyTrajectoryTextWith, type TrajectoryReport, type VerifyOptions } from '../core/verifier/verify';
import { loadWorkflowText } from '../core/workflow/load';
import { COLOR, PLAIN, formatReport } from './report-format';
import { UsageError, readText } from './read-input';
import { fileResolver, formatProblem, loadWorkflowRef } from '../core/workflow/resolve';
import { openBackend } from './backends';
import { checkDigest, type DigestCheck } from '../core/agent/run-digests';
import { MAX_TRAJECTORY_BYTES, readBoundedBytes } from '../core/workspace/bounded-read';
import { runFromCli } from './run';
import { JSON_SCHEMAS } from '../core/schema/json-schema';
import {
  createConnection,
  ProposedFeatures,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver/node';
import { startServer } from '../server/server';
import packageJson from '../package.json';

const HELP = `lar — verify coding-agent trajectories against a formal workflow (Lean4 Agentic)

Usage:
  lar verify FILE.lar.jsonl [--workflow W] [--backend builtin|lean] [--json]
      Per-step table (line, stage, tool, tool reward, failed checks), stage rewards,
      outcome and return. Exit 0: well-formed; 1: a malformed line, an unusable
      workflow, or a file that changed after its run ended (the digest its run
      recorded outside the workspace, in $LAR_STATE_DIR or ~/.local/state/lean4-agentic,
      no longer matches); 2: usage error.
  lar advantages FILES... --out OUT.jsonl [--workflow W] [--backend builtin|lean]
      Stage-normalized GRPO advantages for a group of rollouts of one task, one
      output line per trajectory (docs/rewards.md).
  lar export FILE --format atif [--out OUT.json] [--workflow W] [--backend builtin|lean]
      The trajectory as ATIF-v1.7 with the verifier's results in extra.lar.
  lar workflow check FILE.larflow.json
      Well-formedness of a workflow. Exit 0: usable (warnings allowed); 1: not.
  lar run --task TEXT [--endpoint URL] [--model M] [--workflow W] [--workspace DIR]
          [--out FILE] [--enforcement block|warn] [--yes] [--max-steps N] [--tool-format F]
          [--context-length N] [--thinking auto|on|off] [--rules FILE,…]
          [--rollouts N] [--max-repeated-failures N] [--sandbox auto|required|off]
          [--break-hard-links]
      The verified agent in the terminal: every tool call is gated by the workflow,
      each step is written to the trajectory (default .lar/runs/ in the workspace).
      The endpoint defaults to SGLang's http://127.0.0.1:30000/v1; the API key is
      read from $LAR_API_KEY. Calls that need approval are rejected unless --yes.
      Exit 0 when the run submitted, 1 otherwise.
      --rollouts N (2–64): N rollouts one after the other, each in a fresh copy of the
      workspace (left untouched), written as a group to .lar/runs/group-*/ (or --out
      DIR) with their GRPO advantages in advantages.jsonl. Exit 0 when all N ran.
      --tool-format (default auto): how tool calls travel: auto (native, calls a server
      left as text still read, a text format when the server has no parser), native,
      or a text format: ${TOOL_FORMATS.filter((f) => f !== 'auto' && f !== 'native').join(', ')}.
      --context-length N: the model's window in tokens (default 0: ask the server).
      --thinking on|off: ask the chat template for reasoning or not (default auto: send nothing).
      --rules FILE,…: the workspace's rule files for the system prompt (default AGENTS.md; "" for none).
      --sandbox (default auto): commands run in a bubblewrap sandbox (no network, private
      home, read-only system and protected paths); auto runs them unconfined, and says
      so on every step, when it cannot start; required refuses to run commands then.
      --break-hard-links: make each workspace file with more than one link (a pnpm
      store's, a local clone's objects) its own copy before the first step, instead of
      mounting each read-only in the sandbox (or refusing the run past 3 000 of them).
  lar lsp --stdio
      The language server over standard input/output, for any LSP editor
      (Neovim, Helix, Emacs …; docs/protocol.md).
  lar schema workflow|header|event
      JSON Schema of a workflow file, a trajectory header line or an event line
      (for editors: completion and validation of *.larflow.json).

  W is a path to a *.larflow.json file or builtin:ID (builtin:default-coding).
  --no-color (or NO_COLOR) turns colours off.
`;

interface Flags {
  positional: string[];
  values: Map<string, string>;
  switches: Set<string>;
}

const VALUE_FLAGS = new Set([
  '--workflow',
  '--backend',
  '--out',
  '--format',
  '--task',
  '--endpoint',
  '--model',
  '--workspace',
  '--enforcement',
  '--max-steps',
  '--tool-format',
  '--context-length',
  '--thinking',
  '--rules',
  '--rollouts',
  '--max-repeated-failures',
  '--sandbox',
]);
const SWITCHES = new Set(['--json', '--no-color', '--help', '-h', '--stdio', '--yes', '--break-hard-links']);

function parseFlags(args: string[]): Flags {
  const f: Flags = { positional: [], values: new Map(), switches: new Set() };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    if (VALUE_FLAGS.has(name)) {
      const v = eq > 0 && a.startsWith('--') ? a.slice(eq + 1) : args[++i];
      if (v === undefined || v === '') throw new UsageError(`${name} needs a value`);
      f.values.set(name, v);
    } else if (SWITCHES.has(a)) {
      f.switches.add(a);
    } else if (a.startsWith('-') && a !== '-') {
      throw new UsageError(`unknown option ${a}`);
    } else {
      f.positional.push(a);
    }
  }
  return f;
}

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  color: boolean;
}

async function verifyFile(file: string, flags: Flags, backend: VerifierBackend): Promise<TrajectoryReport> {
  const text = readText(file);
  const opts: VerifyOptions = { resolve: fileResolver(file) };
  const w = flags.values.get('--workflow');
  if (w !== undefined) {
    const r = loadWorkflowRef(w, process.cwd());
    if ('error' in r) throw new UsageError(r.error);
    opts.workflow = r.workflow;
    opts.workflowSource = r.source;
  }
  return verifyTrajectoryTextWith(backend, text, opts);
}

async function withBackend<T>(flags: Flags, io: Io, run: (b: VerifierBackend) => Promise<T>): Promise<T> {
  const name = flags.values.get('--backend') ?? 'builtin';
  if (name !== 'builtin' && name !== 'lean') throw new UsageError(`--backend must be builtin or lean, not "${name}"`);
  const backend = name === 'builtin' ? new BuiltinBackend() : await openBackend(name, (msg) => io.err(msg));
  try {
    return await run(backend);
  } finally {
    backend.dispose();
  }
}

/** The file's bytes against the digest its run recorded; unrecorded when it cannot be read or no run of this machine wrote it. */
function integrityOf(file: string): DigestCheck {
  try {
    return checkDigest(file, readBoundedBytes(file, MAX_TRAJECTORY_BYTES));
  } catch {
    return { state: 'unrecorded' };
  }
}

async function cmdVerify(flags: Flags, io: Io): Promise<number> {
  if (flags.positional.length !== 1) throw new UsageError('lar verify takes exactly one trajectory file');
  const file = flags.positional[0]!;
  const report = await withBackend(flags, io, (b) => verifyFile(file, flags, b));
  // Whether the file still holds what its run ended with (recorded outside the workspace).
  const integrity = integrityOf(file);
  if (flags.switches.has('--json')) io.out(JSON.stringify({ ...report, integrity }, null, 2));
  else io.out(formatReport(file, report, io.color ? COLOR : PLAIN));
  if (integrity.state === 'changed') {
    io.err(
      `lar verify: ${file} changed after its run ended (${integrity.recorded.ended}): it held ${integrity.recorded.bytes} bytes with sha-256 ${integrity.recorded.digest}, it now holds ${integrity.bytes} with ${integrity.now}. Its rewards are not the run's.`,
    );
    return 1;
  }
  return report.lineErrors.length > 0 || report.fatal !== undefined ? 1 : 0;
}

async function cmdAdvantages(flags: Flags, io: Io): Promise<number> {
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

async function cmdExport(flags: Flags, io: Io): Promise<number> {
  const format = flags.values.get('--format');
  if (format !== 'atif')
    throw new UsageError(
      format === undefined ? 'lar export needs --format atif' : `unknown export format "${format}" (supported: atif)`,
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

function cmdWorkflow(flags: Flags, io: Io): number {
  const [sub, file, ...rest] = flags.positional;
  if (sub !== 'check' || file === undefined || rest.length)
    throw new UsageError('usage: lar workflow check FILE.larflow.json');
  const text = readText(file);
  const load = loadWorkflowText(text);
  for (const p of load.problems) io.out(formatProblem(file, text, p));
  if (load.ok)
    io.out(
      `${file}: workflow "${load.workflow.id}" is well-formed (${load.workflow.stages.length} stages${load.problems.length ? `, ${load.problems.length} warning${load.problems.length === 1 ? '' : 's'}` : ''})`,
    );
  return load.ok ? 0 : 1;
}

async function cmdRun(flags: Flags, io: Io): Promise<number> {
  const task = flags.values.get('--task');
  if (!task || flags.positional.length) throw new UsageError('usage: lar run --task TEXT [options] (see lar --help)');
  const w = flags.values.get('--workflow') ?? 'builtin:default-coding';
  const wf = loadWorkflowRef(w, process.cwd());
  if ('error' in wf) throw new UsageError(wf.error);
  const enforcement = flags.values.get('--enforcement') ?? 'block';
  if (enforcement !== 'block' && enforcement !== 'warn') throw new UsageError('--enforcement must be block or warn');
  const toolFormat = flags.values.get('--tool-format');
  if (toolFormat !== undefined && !(TOOL_FORMATS as readonly string[]).includes(toolFormat))
    throw new UsageError(`--tool-format must be one of ${TOOL_FORMATS.join(', ')}`);
  const contextLength = flags.values.get('--context-length');
  if (
    contextLength !== undefined &&
    !(
      /^[0-9]+$/.test(contextLength) &&
      (Number(contextLength) === 0 || Number(contextLength) >= 1024) &&
      Number(contextLength) <= 10_000_000
    )
  )
    throw new UsageError('--context-length must be 0 (ask the server) or a number of tokens from 1024 to 10000000');
  const thinking = flags.values.get('--thinking');
  if (thinking !== undefined && thinking !== 'auto' && thinking !== 'on' && thinking !== 'off')
    throw new UsageError('--thinking must be auto, on or off');
  const maxSteps = flags.values.get('--max-steps');
  if (maxSteps !== undefined && !/^[1-9][0-9]*$/.test(maxSteps))
    throw new UsageError('--max-steps must be a positive integer');
  const maxRepeats = flags.values.get('--max-repeated-failures');
  if (maxRepeats !== undefined && !(/^[0-9]+$/.test(maxRepeats) && Number(maxRepeats) >= 2))
    throw new UsageError('--max-repeated-failures must be an integer of at least 2');
  const rollouts = flags.values.get('--rollouts');
  if (rollouts !== undefined && !(/^[1-9][0-9]*$/.test(rollouts) && Number(rollouts) <= 64))
    throw new UsageError('--rollouts must be an integer from 1 to 64');
  const sandbox = flags.values.get('--sandbox') ?? 'auto';
  if (sandbox !== 'auto' && sandbox !== 'required' && sandbox !== 'off')
    throw new UsageError('--sandbox must be auto, required or off');
  const out = flags.values.get('--out');
  const model = flags.values.get('--model');
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  return runFromCli(
    {
      task,
      endpoint: flags.values.get('--endpoint') ?? process.env.LAR_ENDPOINT ?? 'http://127.0.0.1:30000/v1',
      ...((model ?? process.env.LAR_MODEL) ? { model: (model ?? process.env.LAR_MODEL)! } : {}),
      workspace: flags.values.get('--workspace') ?? process.cwd(),
      ...(out ? { out } : {}),
      workflow: wf.workflow,
      workflowRef: w.startsWith('builtin:') ? w : wf.workflow,
      enforcement,
      yes: flags.switches.has('--yes'),
      breakHardLinks: flags.switches.has('--break-hard-links'),
      ...(maxSteps ? { maxSteps: Number(maxSteps) } : {}),
      ...(maxRepeats ? { maxRepeatedFailures: Number(maxRepeats) } : {}),
      ...(toolFormat ? { toolFormat: toolFormat as ToolFormatSetting } : {}),
      ...(contextLength ? { contextLength: Number(contextLength) } : {}),
      ...(thinking ? { thinking: thinking } : {}),
      ...(flags.values.has('--rules')
        ? {
            rules: (flags.values.get('--rules') ?? '')
              .split(',')
              .map((r) => r.trim())
              .filter(Boolean),
          }
        : {}),
      ...(rollouts ? { rollouts: Number(rollouts) } : {}),
      sandbox,
    },
    { out: (s) => process.stdout.write(s), err: io.err },
    io.color ? COLOR : PLAIN,
    ac.signal,
  );
}

/** Runs the language server on stdio until the client closes it; resolves with its exit code. */
async function cmdLsp(flags: Flags): Promise<number> {
  if (!flags.switches.has('--stdio') || flags.positional.length) throw new UsageError('usage: lar lsp --stdio');
  const connection = createConnection(
    ProposedFeatures.all,
    new StreamMessageReader(process.stdin),
    new StreamMessageWriter(process.stdout),
  );
  startServer(connection);
  return new Promise<number>((resolve) => connection.onExit(() => resolve(0)));
}

function cmdSchema(flags: Flags, io: Io): number {
  const [which, ...rest] = flags.positional;
  const schema = which === undefined ? undefined : JSON_SCHEMAS[which];
  if (!schema || rest.length) throw new UsageError(`usage: lar schema ${Object.keys(JSON_SCHEMAS).join('|')}`);
  io.out(JSON.stringify(schema(), null, 2));
  return 0;
}

export async function main(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      io.out(HELP);
      return command === undefined ? 2 : 0;
    }
    if (command === '--version') {
      io.out(packageJson.version);
      return 0;
    }
    const flags = parseFlags(rest);
    if (flags.switches.has('--help') || flags.switches.has('-h')) {
      io.out(HELP);
      return 0;
    }
    if (flags.switches.has('--no-color')) io.color = false;
    switch (command) {
      case 'verify':
        return await cmdVerify(flags, io);
      case 'advantages':
        return await cmdAdvantages(flags, io);
      case 'export':
        return await cmdExport(flags, io);
      case 'workflow':
        return cmdWorkflow(flags, io);
      case 'schema':
        return cmdSchema(flags, io);
      case 'run':
        return await cmdRun(flags, io);
      case 'lsp':
        return await cmdLsp(flags);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`lar: ${e.message}\nRun "lar --help" for usage.`);
      return 2;
    }
    io.err(`lar: ${(e as Error).message}`);
    return 1;
  }
}

if (require.main === module) {
  const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
  void main(process.argv.slice(2), {
    out: (s) => process.stdout.write(s + '\n'),
    err: (s) => process.stderr.write(s + '\n'),
    color,
  }).then((code) => {
    process.exitCode = code;
  });
}
