/**
 * Pure: what a sandboxed command's output says the sandbox refused it, in a sentence for the step's card,
 * so "EAI_AGAIN" or "Read-only file system" is not left to read as the command's own failure.
 */
import type { SandboxRecord } from '../schema/trajectory';

/** How each kind of protection is named to the user. */
export const PROTECTION_WHY: Record<NonNullable<SandboxRecord['protections']>[number]['why'], string> = {
  always: 'always read-only',
  workflow: 'protected by the workflow',
  outcome: 'the outcome check runs it',
  path_deny: "the workflow's path policy denies writing it",
  git: "git's metadata",
  runs_later: 'your tools run it later, outside the sandbox',
  hard_link: 'linked to a file outside the workspace',
};

// Name lookups and connections a sandbox without network refuses, as libc, Node, Python, curl, git and pip say
// it: the error's own wording, not a bare code a test log may print.
const OFFLINE =
  /(getaddrinfo (?:EAI_AGAIN|ENOTFOUND)|\bconnect ENETUNREACH|Temporary failure in name resolution|Could not resolve host|Name or service not known|Network is unreachable|getaddrinfo failed|No address associated with hostname|nodename nor servname)/i;
// The error as tools print it: after a colon (`touch: …: Read-only file system`, `Error: EROFS: …`) or errno 30.
const READ_ONLY = /(?:^|:\s*|\[Errno 30\]\s*)(?:read-only file system|EROFS\b)/i;

/** The path a read-only refusal names: `'x'` or `"x"` on its line, else `prefix: x: Read-only file system`. */
function refusedPath(line: string): string | undefined {
  const quoted = /['"‘`]([^'"’`\n]{1,1000})['"’`]/.exec(line);
  if (quoted) return quoted[1];
  const bare = /(?:^|:\s)([^:\s][^:\n]{0,1000}):\s*read-only file system/i.exec(line);
  return bare?.[1]?.trim();
}

/** The protection a refused path falls under (protections are workspace-relative; the command may name it absolute). */
function protectionOf(
  path: string,
  sandbox: SandboxRecord,
  workspace?: string,
): { path: string; why: string } | undefined {
  let p = path.replace(/\\/g, '/').replace(/\/+$/, '');
  if (p.startsWith('/')) {
    // Outside the workspace the sandbox's whole system is read-only: no protection of the workspace applies.
    const root = workspace?.replace(/\\/g, '/').replace(/\/+$/, '');
    if (!root || !p.startsWith(`${root}/`)) return undefined;
    p = p.slice(root.length + 1);
  }
  p = p.replace(/^(\.\/)+/, '');
  let best: { path: string; why: string } | undefined;
  for (const x of sandbox.protections ?? []) {
    const hit = p === x.path || p.startsWith(`${x.path}/`);
    if (hit && (!best || x.path.length > best.path.length)) best = { path: x.path, why: PROTECTION_WHY[x.why] };
  }
  return best;
}

/**
 * The sandbox's refusal in the output of a command it confined that failed, or undefined when the output shows
 * none (a command that exited 0 was not refused, whatever its output mentions).
 */
export function refusalNote(
  output: string,
  sandbox: SandboxRecord | undefined,
  opts: { exitCode?: number | null; workspace?: string } = {},
): string | undefined {
  if (!sandbox?.confined || opts.exitCode === 0) return undefined;
  const lines = output.split('\n');
  const ro = lines.find((l) => READ_ONLY.test(l));
  if (ro) {
    const path = refusedPath(ro);
    const hit = path ? protectionOf(path, sandbox, opts.workspace) : undefined;
    if (hit) return `The sandbox refused a write: ${hit.path} is read-only (${hit.why}).`;
    return `The sandbox refused a write${path ? ` to ${path}` : ''}: only the workspace (less its protected paths) and temporary folders are writable.`;
  }
  if (sandbox.network !== 'host') {
    const off = lines.find((l) => OFFLINE.test(l));
    if (off)
      return sandbox.network === 'allowlist'
        ? `The sandbox refused a connection: only ${sandbox.hosts?.length ?? 0} allowed host${sandbox.hosts?.length === 1 ? '' : 's'} can be reached (${OFFLINE.exec(off)![1]}).`
        : `The sandbox refused a connection: the network is off for the agent's commands (${OFFLINE.exec(off)![1]}).`;
  }
  return undefined;
}
