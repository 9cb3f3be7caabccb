/** What every file tool shares: the limits on what the model is shown, argument reading, outcome wording. */
import type { ToolResult } from '../schema/trajectory';
import type { ToolOutcome } from './types';

/** Limits on what the model is shown. */
export const FILE_LIMITS = {
  /** read_file: lines shown per call. */
  readLines: 2000,
  /** read_file: characters shown per line. */
  lineChars: 2000,
  /** read_file / edit_file / search: bytes read from one file. */
  readBytes: 10 * 1024 * 1024,
  /** list_files: entries shown. */
  listEntries: 1000,
  /** search: matches shown. */
  searchMatches: 200,
  /** search: files looked at. */
  searchFiles: 20000,
  /** search: files larger than this are skipped. */
  searchFileBytes: 2 * 1024 * 1024,
  /** search: characters of a matching line shown. */
  searchLineChars: 300,
  /** search: the time a regular expression may take over all files (a catastrophic one would freeze the editor). */
  searchRegexMs: 3000,
};

export type Args = Record<string, unknown>;

export class ArgError extends Error {}

export function str(args: Args, key: string, fallback?: string): string {
  const v = args[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'string') throw new ArgError(`"${key}" must be a string`);
  return v;
}

export function optInt(args: Args, key: string): number | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw new ArgError(`"${key}" must be a positive whole number`);
  return v;
}

export function optBool(args: Args, key: string): boolean {
  const v = args[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new ArgError(`"${key}" must be true or false`);
  return v;
}

export function ok(observation: string, result: ToolResult = {}): ToolOutcome {
  return { status: 'ok', result, observation };
}

export function fail(error: string, result: ToolResult = {}): ToolOutcome {
  return { status: 'error', result: { ...result, error }, observation: `Error: ${error}` };
}

/** Split text into lines the way an editor shows them (a final newline does not start a line). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function clip(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max)}… [${line.length - max} more characters]`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
