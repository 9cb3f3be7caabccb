/**
 * What the user attaches to a message with `@`, read by the host and never by the webview: a workspace file
 * (confined like the file tools, no binaries, capped), the selection, a file's Problems, and the agent
 * terminal's last command. Editor-free, so the rules are tested without VS Code.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { chipLabel } from '../protocol/chip-label';
import type { AttachmentPart } from '../schema/message-parts';
import type { TrajectoryEvent } from '../schema/trajectory';
import { looksBinary } from '../shell/output';
import { confinePath, describeFsError, openWorkspace, type FsResult } from '../workspace/fs';

/** The most of a file, a selection or a list of problems the model is given (characters). */
export const ATTACHMENT_CHARS = 20_000;
/** The most of a command's output the model is given (its end). */
export const TERMINAL_CHARS = 8_000;
/** The most of a file read to make an attachment (its start). */
const READ_BYTES = 256 * 1024;
/** Bytes looked at to tell a binary file. */
const SNIFF_BYTES = 8000;

const NONBLOCK = (constants as Record<string, number | undefined>).O_NONBLOCK ?? 0;
const NOFOLLOW = (constants as Record<string, number | undefined>).O_NOFOLLOW ?? 0;

/** The start of `text`, at most `max` characters. */
export function capStart(text: string, max: number): { content: string; truncated: boolean } {
  return text.length <= max ? { content: text, truncated: false } : { content: text.slice(0, max), truncated: true };
}

/** The end of `text`, at most `max` characters (a command's last lines matter most). */
export function capEnd(text: string, max: number): { content: string; truncated: boolean } {
  return text.length <= max ? { content: text, truncated: false } : { content: text.slice(-max), truncated: true };
}

function part(
  kind: AttachmentPart['kind'],
  label: string,
  source: string,
  cut: { content: string; truncated: boolean },
): AttachmentPart {
  return {
    type: 'attachment',
    kind,
    label,
    source,
    content: cut.content,
    ...(cut.truncated ? { truncated: true } : {}),
  };
}

/**
 * A file of the workspace, as the user named it: inside the workspace only (no `..`, no absolute path, no
 * symlink pointing out), a regular file, text (no NUL in its start), its start when it is long.
 */
export async function fileAttachment(workspace: string, path: string): Promise<FsResult<AttachmentPart>> {
  const ws = await openWorkspace(workspace);
  if (!ws.ok) return ws;
  const confined = await confinePath(ws.value, path);
  if (!confined.ok) return confined;
  const { absolute, relative, exists } = confined.value;
  // Git's metadata (its config, hooks, credentials) and the agent's own records are not the user's content.
  // Case folded: on a case-insensitive disk `.GIT/config` is the same file.
  if (relative.split(/[\\/]/).some((seg) => ['.git', '.lar'].includes(seg.toLowerCase())))
    return { ok: false, error: `"${relative}" is in .git or .lar, which are not attached` };
  if (!exists) return { ok: false, error: `"${relative}" does not exist` };
  let fh;
  try {
    // The real path, not followed again if it became a link since: what was confined is what is read.
    fh = await open(absolute, constants.O_RDONLY | NONBLOCK | NOFOLLOW);
  } catch (e) {
    return { ok: false, error: describeFsError(e, relative) };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { ok: false, error: `"${relative}" is not a regular file` };
    const buf = Buffer.alloc(Math.min(st.size, READ_BYTES));
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    const bytes = buf.subarray(0, got);
    if (bytes.subarray(0, SNIFF_BYTES).includes(0) || looksBinary(bytes, SNIFF_BYTES).binary)
      return { ok: false, error: `"${relative}" looks binary: only text files can be attached` };
    // A read cut inside a character leaves a replacement character at the end: drop it.
    const text = bytes.toString('utf8').replace(/\uFFFD$/, '');
    const cut = capStart(text, ATTACHMENT_CHARS);
    const ref = { kind: 'file' as const, path: relative };
    return {
      ok: true,
      value: part('file', chipLabel(ref), relative, { ...cut, truncated: cut.truncated || st.size > got }),
    };
  } catch (e) {
    return { ok: false, error: describeFsError(e, relative) };
  } finally {
    await fh.close();
  }
}

/** The editor's selection: its text, named by file and lines. */
export function selectionAttachment(sel: {
  path: string;
  startLine: number;
  endLine: number;
  text: string;
}): AttachmentPart {
  const lines = sel.startLine === sel.endLine ? `${sel.startLine}` : `${sel.startLine}-${sel.endLine}`;
  return part('selection', '@selection', `${sel.path}:${lines}`, capStart(sel.text, ATTACHMENT_CHARS));
}

export interface Problem {
  line: number;
  column: number;
  severity: 'error' | 'warning' | 'info' | 'hint';
  message: string;
  source?: string;
  code?: string;
}

/** The Problems of one file, one line each, as the Problems panel lists them. */
export function problemsAttachment(path: string, problems: readonly Problem[]): AttachmentPart {
  const text = problems.length
    ? problems
        .map((p) => {
          const from = p.source ? ` (${p.source}${p.code ? ` ${p.code}` : ''})` : '';
          return `${path}:${p.line}:${p.column} ${p.severity}: ${p.message.replace(/\s+/g, ' ')}${from}`;
        })
        .join('\n')
    : 'No problems are reported for this file.';
  return part('problems', '@problems', `problems of ${path}`, capStart(text, ATTACHMENT_CHARS));
}

/** A command the agent ran and what it printed, as its trajectory recorded it. */
export interface RecordedCommand {
  command: string;
  output: string;
  exitCode: number | null | undefined;
}

/** The last command a run's agent terminal ran (what "Terminal output" attaches). */
export function lastCommand(events: readonly TrajectoryEvent[]): RecordedCommand | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type !== 'tool_call' || e.tool !== 'run_command' || !e.result) continue;
    const args = e.args as { command?: unknown } | null;
    if (typeof args?.command !== 'string') continue;
    return { command: args.command, output: e.result.output ?? '', exitCode: e.result.exitCode };
  }
  return undefined;
}

/** A terminal's last command and the end of its output, secrets masked; `where` names the terminal. */
export function terminalAttachment(
  cmd: RecordedCommand,
  redact: (text: string) => string,
  where = 'agent terminal',
): AttachmentPart {
  const exit = cmd.exitCode === undefined ? '' : ` (exit ${cmd.exitCode ?? 'unknown'})`;
  const command = redact(cmd.command).replace(/\s+/g, ' ').slice(0, 200);
  // An empty block would read as "it printed nothing" when the terminal may only not have told us.
  const output = cmd.output.trim() ? redact(cmd.output) : '(no output was reported for this command)';
  return part('terminal', '@terminal', `${where}: $ ${command}${exit}`, capEnd(output, TERMINAL_CHARS));
}
