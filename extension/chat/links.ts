/**
 * Pure: what a link in model text may open. The webview only proposes; this
 * decides. Web pages (http, https) open in the browser; files open in the
 * editor only when they are inside the workspace (by their real path, so a
 * symlink cannot lead out), with an optional line (`#L12`, `#L12-L20`,
 * `:12`). Every other scheme is refused.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isInside } from '../../core/workspace/fs';

export type LinkTarget =
  { kind: 'web'; url: string } | { kind: 'file'; path: string; line?: number } | { kind: 'refused'; reason: string };

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Splits a line suffix off a path: `a.ts#L12`, `a.ts#L12-L20`, `a.ts:12`, `a.ts:12:3`. */
function withLine(spec: string): { path: string; line?: number } {
  const m = /^(.*?)(?:#L(\d{1,7})(?:-L?\d{1,7})?|:(\d{1,7})(?::\d{1,7})?)$/.exec(spec);
  if (!m || !m[1]) return { path: spec };
  const n = Number(m[2] ?? m[3]);
  return n > 0 ? { path: m[1], line: n } : { path: m[1] };
}

export function linkTarget(href: string, workspace: string): LinkTarget {
  const s = href.trim();
  if (!s || /[\u0000-\u001f\u007f]/.test(s)) return { kind: 'refused', reason: 'an empty or malformed link' };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(s)?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') {
    try {
      const u = new URL(s);
      if (!u.hostname) return { kind: 'refused', reason: 'a web link without a host' };
      return { kind: 'web', url: u.toString() };
    } catch {
      return { kind: 'refused', reason: 'a malformed web link' };
    }
  }
  let spec: string;
  if (scheme === 'file') {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      return { kind: 'refused', reason: 'a malformed file link' };
    }
    const line = /^#L(\d{1,7})/.exec(url.hash)?.[1];
    url.hash = '';
    let path: string;
    try {
      path = fileURLToPath(url);
    } catch {
      return { kind: 'refused', reason: 'a file link that names no local file' };
    }
    spec = line ? `${path}#L${line}` : path;
  } else if (scheme !== undefined && !/^[a-z]:[\\/]/i.test(s)) {
    return { kind: 'refused', reason: `links of the ${scheme}: scheme are not opened from the chat` };
  } else {
    if (s.startsWith('//') || s.startsWith('\\\\')) return { kind: 'refused', reason: 'a network path' };
    try {
      spec = decodeURI(s.replace(/\?.*$/, ''));
    } catch {
      spec = s;
    }
  }
  const { path, line } = withLine(spec);
  const root = real(resolve(workspace));
  const target = resolve(root, path);
  if (!isInside(root, target, false) || (existsSync(target) && !isInside(root, real(target), false))) {
    return { kind: 'refused', reason: `${path} is outside the workspace` };
  }
  if (!existsSync(target)) return { kind: 'refused', reason: `${relative(root, target) || path} does not exist` };
  // The file itself, by its real path (what was checked is what opens); not a folder, a pipe or a device.
  const file = real(target);
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) return { kind: 'refused', reason: `${relative(root, target) || path} is not a file` };
  return { kind: 'file', path: file, ...(line ? { line } : {}) };
}
