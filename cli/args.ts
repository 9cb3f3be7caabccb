/** The command line's flags and the output streams, shared by every subcommand. */
import { UsageError } from './read-input';

export interface Flags {
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
  '--concurrency',
  '--temperature',
  '--seed',
  '--max-time',
  '--advantage',
  '--skyrl-rows',
  '--mcp-config',
]);
const SWITCHES = new Set([
  '--json',
  '--no-color',
  '--help',
  '-h',
  '--stdio',
  '--yes',
  '--break-hard-links',
  '--keep',
  '--record-tokens',
]);

export function parseFlags(args: string[]): Flags {
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

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  color: boolean;
}
