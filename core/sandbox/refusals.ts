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

// Name lookups and connections a sandbox without network refuses, as libc, Node, Python, curl, git and pip say it.
const OFFLINE =
  /\b(EAI_AGAIN|ENOTFOUND|ENETUNREACH|Temporary failure in name resolution|Could not resolve host|Name or service not known|Network is unreachable|getaddrinfo failed|No address associated with hostname|nodename nor servname)\b/i;
const READ_ONLY = /read-only file system|\bEROFS\b/i;

/** The path a read-only refusal names: `'x'` or `"x"` on its line, else `prefix: x: Read-only file system`. */
function refusedPath(line: string): string | undefined {
  const quoted = /['"‘`]([^'"’`\n]{1,1000})['"’`]/.exec(line);
  if (quoted) return quoted[1];
  const bare = /(?:^|:\s)([^:\s][^:\n]{0,1000}):\s*read-only file system/i.exec(line);
  return bare?.[1]?.trim();
}

/** The protection a refused path falls under (paths are workspace-relative; the command may have said it absolute). */
function protectionOf(path: string, sandbox: SandboxRecord): { path: string; why: string } | undefined {
  const p = path.replace(/\\/g, '/').replace(/\/+$/, '');
  let best: { path: string; why: string } | undefined;
  for (const x of sandbox.protections ?? []) {
    const hit = p === x.path || p.endsWith(`/${x.path}`) || p.startsWith(`${x.path}/`) || p.includes(`/${x.path}/`);
    if (hit && (!best || x.path.length > best.path.length)) best = { path: x.path, why: PROTECTION_WHY[x.why] };
  }
  return best;
}

/** The sandbox's refusal in the output of a command it confined, or undefined when the output shows none. */
export function refusalNote(output: string, sandbox: SandboxRecord | undefined): string | undefined {
  if (!sandbox?.confined) return undefined;
  const lines = output.split('\n');
  const ro = lines.find((l) => READ_ONLY.test(l));
  if (ro) {
    const path = refusedPath(ro);
    const hit = path ? protectionOf(path, sandbox) : undefined;
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
