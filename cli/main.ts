/**
 * The `lar` command line's entry: dispatches each subcommand and turns errors into exit codes. The agent, the
 * language server and Harbor are loaded only by the subcommands that run them: `lar verify` over a million
 * rollouts should not pay for starting them.
 */
import { formatProblem } from '../core/workflow/resolve';
import { builtinWorkflowValue, loadWorkflowText } from '../core/workflow/load';
import packageJson from '../package.json';
import { parseFlags, type Flags, type Io } from './args';
import { HELP } from './help';
import { UsageError, readText } from './read-input';
import { cmdAdvantages, cmdExport, cmdVerify } from './trajectory-commands';

function cmdWorkflow(flags: Flags, io: Io): number {
  const [sub, file, ...rest] = flags.positional;
  if (sub !== 'check' || file === undefined || rest.length)
    throw new UsageError('usage: lar workflow check FILE.larflow.json|builtin:ID');
  const text = file.startsWith('builtin:')
    ? JSON.stringify(builtinWorkflowValue(file.slice('builtin:'.length)), null, 2)
    : readText(file);
  const load = loadWorkflowText(text);
  for (const p of load.problems) io.out(formatProblem(file, text, p));
  if (load.ok)
    io.out(
      `${file}: workflow "${load.workflow.id}" is well-formed (${load.workflow.stages.length} stages${load.problems.length ? `, ${load.problems.length} warning${load.problems.length === 1 ? '' : 's'}` : ''})`,
    );
  return load.ok ? 0 : 1;
}

/** Runs the language server on stdio until the client closes it; resolves with its exit code. */
async function cmdLsp(flags: Flags): Promise<number> {
  if (!flags.switches.has('--stdio') || flags.positional.length) throw new UsageError('usage: lar lsp --stdio');
  const { createConnection, ProposedFeatures, StreamMessageReader, StreamMessageWriter } =
    await import('vscode-languageserver/node');
  const { startServer } = await import('../server/server.js');
  const connection = createConnection(
    ProposedFeatures.all,
    new StreamMessageReader(process.stdin),
    new StreamMessageWriter(process.stdout),
  );
  startServer(connection);
  return new Promise<number>((resolve) => connection.onExit(() => resolve(0)));
}

async function cmdSchema(flags: Flags, io: Io): Promise<number> {
  const { JSON_SCHEMAS } = await import('../core/schema/json-schema.js');
  const [which, ...rest] = flags.positional;
  const schema = which === undefined ? undefined : JSON_SCHEMAS[which];
  if (!schema || rest.length) throw new UsageError(`usage: lar schema ${Object.keys(JSON_SCHEMAS).join('|')}`);
  io.out(JSON.stringify(schema(), null, 2));
  return 0;
}

/** EPIPE errors stdout itself raised once its reader closed, told apart from a failure of the command's own pipes. */
const stdoutGone = new WeakSet<object>();
let watchingStdout = false;

/**
 * For the commands that print their results (verify): a reader that left early (`lar verify --json | head`)
 * ends the command quietly. Any other error of stdout (a full disk) still ends the process as a failure.
 */
function endQuietlyWhenReaderLeaves(): void {
  if (watchingStdout) return;
  watchingStdout = true;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    stdoutGone.add(e);
  });
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
        endQuietlyWhenReaderLeaves();
        return await cmdVerify(flags, io);
      case 'advantages':
        return await cmdAdvantages(flags, io);
      case 'export':
        return await cmdExport(flags, io);
      case 'harbor':
        return await (await import('./harbor-command.js')).cmdHarbor(flags, io);
      case 'workflow':
        return cmdWorkflow(flags, io);
      case 'schema':
        return await cmdSchema(flags, io);
      case 'run':
        return await (await import('./run-command.js')).cmdRun(flags, io);
      case 'lsp':
        return await cmdLsp(flags);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    // The reader of our output went away (`lar verify --json | head`): nothing left to say, and no failure.
    if (typeof e === 'object' && e !== null && stdoutGone.has(e)) return 0;
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
