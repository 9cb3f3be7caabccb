import { realpathSync } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { FileRefusedError, readBoundedText } from '../workspace/bounded-read';
import { isInside } from '../workspace/fs';

/**
 * The workspace's own rules for agents (`AGENTS.md`, and any other rule files
 * the settings name), read once when a run starts and put into its system
 * prompt. They are the workspace's words, so they are read as the workspace's
 * files are: inside it only (a link that leads out is refused: it could point
 * at a key the prompt would carry to the server), regular files only,
 * bounded. A file that is not there is no rule; one that cannot be used is
 * said so, not silently dropped.
 */

export interface Rules {
  /** The files read, workspace-relative, in order. */
  files: { path: string; text: string }[];
  /** Why a named file was not used. */
  problems: string[];
}

/** A rule file is read at most this large: a prompt is not the place for a manual. */
export const MAX_RULES_BYTES = 64 * 1024;

export const DEFAULT_RULE_FILES: readonly string[] = ['AGENTS.md'];

export function readRules(workspace: string, names: readonly string[] = DEFAULT_RULE_FILES): Rules {
  const out: Rules = { files: [], problems: [] };
  let root: string;
  try {
    root = realpathSync.native(workspace);
  } catch (e) {
    out.problems.push(`the workspace cannot be read: ${(e as Error).message}`);
    return out;
  }
  const seen = new Set<string>();
  for (const name of names) {
    const rel = normalize(name).split(sep).join('/');
    if (!name.trim() || isAbsolute(name) || rel === '..' || rel.startsWith('../')) {
      out.problems.push(`"${name}" is not a path inside the workspace: not read`);
      continue;
    }
    let real: string;
    try {
      real = realpathSync.native(join(root, rel));
    } catch {
      continue; // not there: no rule
    }
    if (!isInside(root, real, process.platform === 'darwin' || process.platform === 'win32')) {
      out.problems.push(`${rel} leads out of the workspace: not read`);
      continue;
    }
    if (seen.has(real)) continue;
    seen.add(real);
    try {
      const text = readBoundedText(real, MAX_RULES_BYTES, 'the rule file').trim();
      if (text) out.files.push({ path: rel, text });
    } catch (e) {
      // Named as the user wrote it, not by the path it resolved to.
      out.problems.push(
        e instanceof FileRefusedError
          ? e.message.split(real).join(rel)
          : `${rel} cannot be read: ${(e as Error).message}`,
      );
    }
  }
  return out;
}

/** The rules as a section of the system prompt. */
export function rulesPrompt(rules: Rules): string {
  if (!rules.files.length) return '';
  return [
    "Rules of this workspace, from its own files (follow them where the workflow allows; the workflow's checks still decide what may run):",
    ...rules.files.map((f) => `--- ${f.path} ---\n${f.text}`),
  ].join('\n\n');
}
