import { z } from 'zod';

/** The schema version every workflow and trajectory carries as `"lar": 1`. */
export const LAR_VERSION = 1 as const;

/**
 * A pattern in the workflow's small glob language: `*` matches any run of
 * characters, `?` one character, everything else itself; the whole text must
 * match. Kept this small so the Lean checker decides it the same way.
 */
export const Pattern = z.string().min(1, 'a pattern must not be empty');

const Count = z.number().int().positive();

/**
 * Exit conditions: a small, decidable language evaluated over one stage visit.
 * A visit meets its stage's exit conditions when all of them hold at the moment
 * it ends. `afterLastChange` means: after the last step of the run that changed
 * a file (so an edit after the tests ran makes them stale again).
 */
export const ExitCondition = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('tool_succeeded'),
    tool: z.string().min(1),
    atLeast: Count.default(1),
  }),
  z.strictObject({
    kind: z.literal('command_succeeded'),
    pattern: Pattern,
    afterLastChange: z.boolean().default(false),
  }),
  z.strictObject({
    kind: z.literal('command_ran'),
    pattern: Pattern,
    afterLastChange: z.boolean().default(false),
  }),
  z.strictObject({
    kind: z.literal('file_changed'),
    pattern: Pattern.optional(),
  }),
  /**
   * The workflow's outcome command itself (the same command line, normalized)
   * ran to an observed end and ran tests: no cheaper command can meet it.
   */
  z.strictObject({
    kind: z.literal('outcome_ran'),
    afterLastChange: z.boolean().default(true),
  }),
]);
export type ExitCondition = z.infer<typeof ExitCondition>;
export type ExitConditionKind = ExitCondition['kind'];

export const StageId = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'a stage id is a letter followed by letters, digits, "_" or "-"');

export const Stage = z.strictObject({
  id: StageId,
  description: z.string().optional(),
  /** Tool names permitted in this stage; unknown names are a well-formedness error. */
  tools: z.array(z.string()),
  exit: z.array(ExitCondition).default([]),
  /** Maximum tool calls in one visit, the call that leaves the stage included. */
  budget: Count,
});
export type Stage = z.infer<typeof Stage>;

export const OutcomeCheck = z.strictObject({
  /** Run by the agent host in a fresh non-interactive shell after `submit`. */
  command: z.string().min(1),
  expectExitCode: z.number().int().default(0),
  timeoutMs: Count.default(600_000),
});
export type OutcomeCheck = z.infer<typeof OutcomeCheck>;

/**
 * An outcome judged outside the run, after it (Harbor's verifier runs a task's tests in the
 * container once the agent is done): `submit` ends the run and nothing runs, and the outcome
 * stays pending until the judge's value is joined to the rewards (core/verifier/external.ts).
 */
export const ExternalOutcome = z.strictObject({
  /** Who judges, for people: "Harbor's verifier". */
  external: z.string().regex(/[^ \t\n\r]/, 'say who judges the outcome (not only spaces)'),
});
export type ExternalOutcome = z.infer<typeof ExternalOutcome>;

/** A workflow's outcome: a command the host runs after `submit` (the usual form), or a judge outside the run. */
export const WorkflowOutcome = z.union([OutcomeCheck, ExternalOutcome]);
export type WorkflowOutcome = z.infer<typeof WorkflowOutcome>;

/** The outcome command of a workflow, or undefined when its outcome is judged outside the run. */
export function outcomeCommand(wf: Pick<Workflow, 'outcome'>): OutcomeCheck | undefined {
  return 'command' in wf.outcome ? wf.outcome : undefined;
}

/** Who judges a workflow's outcome outside the run, or undefined when its outcome command does. */
export function externalJudge(wf: Pick<Workflow, 'outcome'>): string | undefined {
  return 'external' in wf.outcome ? wf.outcome.external : undefined;
}

export const CommandPolicy = z.strictObject({
  /** A command with a part matching one of these is a violation and never runs. */
  deny: z.array(Pattern).default([]),
  /** A command with a part matching one of these runs only after the user approves. */
  ask: z.array(Pattern).default([]),
});

export const PathPolicy = z.strictObject({
  /** Paths must be relative and stay inside the workspace. Always true in version 1. */
  workspaceOnly: z.literal(true).default(true),
  /** Workspace-relative paths (normalized, `/`-separated) matching these are off limits. */
  deny: z.array(Pattern).default([]),
});

/** A workspace-relative path, `/`-separated, naming one file or folder (no globs: the sandbox mounts it). */
export const WorkspacePath = z.string().min(1, 'a path must not be empty');

/** A path on the host: absolute, or under the user's home as `~/…`. */
export const HostPath = z
  .string()
  .regex(/^(\/|~(\/|$))/, 'a host path is absolute ("/…") or in the home folder ("~/…")');

/** A size: a whole number of bytes, or of K, M, G or T (powers of 1024), as a string: "512M", "8G". */
export const Size = z
  .string()
  .regex(
    /^[1-9][0-9]*[KMGT]?$/,
    'a size is a whole number followed by K, M, G or T (powers of 1024), e.g. "512M" or "8G"',
  );

/** Bytes of a Size; NaN for what is not one. */
export const sizeBytes = (s: string): number => {
  const m = /^([1-9][0-9]*)([KMGT]?)$/.exec(s);
  return m ? Number(m[1]) * 2 ** { '': 0, K: 10, M: 20, G: 30, T: 40 }[m[2] as '' | 'K' | 'M' | 'G' | 'T'] : NaN;
};
const sizeAtLeast = (least: number, text: string) =>
  Size.refine((s) => !(sizeBytes(s) < least), `must be at least ${text}`);

/**
 * Bounds on the sandbox (core/sandbox/limits.ts); what is left out gets the
 * default. memory: what its processes use together (default: half the RAM,
 * at most 8G); tasks: processes and threads (default 4096); tmp: what /tmp
 * holds (default 1G; /var/tmp and the home half of it, /run and /dev/shm a
 * quarter).
 */
export const SandboxLimitsSection = z.strictObject({
  memory: sizeAtLeast(64 * 2 ** 20, '64M').optional(),
  tasks: z.number().int().min(32).optional(),
  tmp: sizeAtLeast(2 ** 20, '1M').optional(),
});
export type SandboxLimitsSection = z.infer<typeof SandboxLimitsSection>;

/** How the sandbox reaches the network: not at all, the host's network, or only the listed hosts. */
export const NetworkMode = z.enum(['none', 'host', 'allowlist']);
export type NetworkMode = z.infer<typeof NetworkMode>;

/**
 * The name that, listed in `sandbox.hosts` (with its port), means the host's own loopback: inside
 * the sandbox `localhost` is the sandbox's (and bypasses the proxy, NO_PROXY), so the host's
 * services (a local registry) have a name of their own, as Docker's `host.docker.internal`.
 */
export const HOST_GATEWAY = 'host.lar.internal';

/** One entry of `sandbox.hosts`, parsed: `host` lower-case (an address without brackets), `port` when one is given. */
export interface HostEntry {
  host: string;
  port?: number;
  /** `*.example.org`: the subdomains of `host`, not `host` itself. */
  wildcard: boolean;
  /** An IPv4 or IPv6 address, not a name. */
  ip: boolean;
}

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`);

/**
 * An entry of `sandbox.hosts`: a host name (`registry.npmjs.org`), `*.` and a domain (its
 * subdomains: `*.pypi.org`), an IPv4 address or a bracketed IPv6 one, each with an optional
 * `:port` (without one: 443 and 80). A sentence saying what is wrong when it is none of these.
 */
export function parseHostEntry(s: string): HostEntry | string {
  const m = /^(\*\.)?(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::([0-9]{1,5}))?$/.exec(s);
  if (!m)
    return `"${s}" is not a host: write a name ("registry.npmjs.org"), "*." and a domain ("*.pypi.org") or an address ("10.0.0.5", "[fd00::5]"), with an optional ":port"`;
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && !(port >= 1 && port <= 65535)) return `"${s}": a port is 1 to 65535`;
  const raw = m[2]!;
  const ipv4 = /^[0-9]+(\.[0-9]+){3}$/.test(raw);
  if (ipv4 && raw.split('.').some((o) => Number(o) > 255 || (o.length > 1 && o.startsWith('0'))))
    return `"${s}": an IPv4 address is four numbers 0 to 255`;
  const ip = ipv4 || raw.startsWith('[');
  if (!ip && (!NAME.test(raw) || /^[0-9]+$/.test(raw.slice(raw.lastIndexOf('.') + 1))))
    return `"${s}": a host name is letters, digits and "-" in labels separated by ".", not ending in a number`;
  if (m[1] && ip) return `"${s}": a wildcard takes a domain, not an address`;
  if (m[1] && !raw.includes('.'))
    return `"${s}": a wildcard covers the subdomains of one domain ("*.example.org"), not a whole top-level domain`;
  let host: string;
  try {
    host = new URL(`http://${raw}`).hostname;
  } catch {
    return `"${s}" is not a host name or an address`;
  }
  return {
    host: host.replace(/^\[(.*)\]$/, '$1'),
    ...(port !== undefined ? { port } : {}),
    wildcard: m[1] !== undefined,
    ip,
  };
}

/** An entry of `sandbox.hosts` as written (parseHostEntry). */
export const HostPattern = z.string().superRefine((s, ctx) => {
  const e = parseHostEntry(s);
  if (typeof e === 'string') ctx.addIssue({ code: 'custom', message: e });
});

/**
 * How commands are confined (core/sandbox): every command the agent runs, and
 * everything it starts, runs in an OS sandbox with the file system read-only,
 * the workspace read-write, a private home, /tmp, /dev and /proc, no network,
 * and its own process namespace, bounded in memory, tasks and tmpfs sizes.
 */
export const SandboxSection = z.strictObject({
  /** No command runs unconfined: without a working sandbox, run_command is blocked. */
  required: z.boolean().default(false),
  /**
   * `none`: only loopback inside the sandbox; `host`: the host's network; `allowlist`: only
   * loopback, and the `hosts` through the run's proxy (core/sandbox/proxy.ts).
   */
  network: NetworkMode.default('none'),
  /** With `allowlist`: the hosts commands may reach (HTTP and HTTPS through the proxy). */
  hosts: z.array(HostPattern).default([]),
  /**
   * Workspace paths the agent may read but not change: read-only in the
   * sandbox, refused by the file tools, and restored from a snapshot taken
   * before the first step when the outcome check runs.
   */
  // Absent: the default protected set (a section that sets only limits or the network must not drop it); `[]` protects nothing more.
  protected: z.array(WorkspacePath).default(() => [...DEFAULT_PROTECTED]),
  /**
   * Host paths (outside the workspace) the sandbox may write, e.g. a build cache; or a
   * workspace path of what runs later (".husky", ".envrc", a hook's script) the run may change.
   */
  writable: z.array(z.union([HostPath, WorkspacePath])).default([]),
  /** Host paths in the private home the sandbox may read, e.g. "~/.gitconfig". */
  readable: z.array(HostPath).default([]),
  /** Host paths hidden from the sandbox (an empty folder or file in their place). */
  hidden: z.array(HostPath).default([]),
  /** Memory, tasks and /tmp's size; the defaults are for ordinary work. */
  limits: SandboxLimitsSection.prefault({}),
});
export type SandboxSection = z.infer<typeof SandboxSection>;

/**
 * What a run may not change when its workflow has no `sandbox` section: the
 * tests, the package manifests and lock files, and the test runners'
 * configuration the outcome check reads (the default workflow names the same).
 * A workflow that says nothing about the sandbox must not leave its own
 * outcome check to the run.
 */
export const DEFAULT_PROTECTED: readonly string[] = [
  'test',
  'tests',
  '__tests__',
  'spec',
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  '.npmrc',
  'node_modules',
  'jest.config.js',
  'jest.config.cjs',
  'jest.config.mjs',
  'jest.config.ts',
  'jest.config.json',
  'vitest.config.js',
  'vitest.config.mjs',
  'vitest.config.ts',
  'vite.config.js',
  'vite.config.mjs',
  'vite.config.ts',
  '.mocharc.js',
  '.mocharc.cjs',
  '.mocharc.json',
  '.mocharc.yml',
  '.mocharc.yaml',
  'babel.config.js',
  '.babelrc',
];

/**
 * Read-only for every run whatever the workflow says, in the sandbox and for
 * the file tools: the run's own records, and what runs later outside any
 * sandbox (git's hooks and config, the editor's tasks and settings).
 */
export const ALWAYS_READ_ONLY: readonly string[] = ['.lar', '.git/config', '.git/hooks', '.vscode'];

/** Every workspace-relative path the agent may read but not change. */
export function readOnlyPaths(wf: Workflow): string[] {
  return [...ALWAYS_READ_ONLY, ...wf.sandbox.protected];
}

/** The read-only path `normalized` (workspace-relative) is, or lies below; undefined when it is writable. */
export function readOnlyPathOf(wf: Workflow, normalized: string): string | undefined {
  for (const p of readOnlyPaths(wf)) {
    const q = p.replace(/\/+$/, '');
    if (normalized === q || normalized.startsWith(`${q}/`)) return q;
  }
  return undefined;
}

/**
 * MCP servers under the workflow (core/mcp/): which servers' sandboxes get the host's network.
 * A stage permits their tools by name or pattern in its `tools` (`mcp__github__get_*`).
 */
export const McpSection = z.strictObject({
  /** Server names (as configured) whose stdio server may reach the network; every other has none. */
  network: z.array(z.string().min(1)).default([]),
});
export type McpSection = z.infer<typeof McpSection>;

export const RewardWeights = z.strictObject({
  alpha: z.number().nonnegative().default(0.5),
  beta: z.number().nonnegative().default(0.25),
});

export const Workflow = z.strictObject({
  lar: z.literal(LAR_VERSION),
  id: z.string().min(1),
  description: z.string().optional(),
  stages: z.array(Stage).min(1, 'a workflow needs at least one stage'),
  /** Legal transitions: stage id → the stage ids it may move to. */
  transitions: z.record(z.string(), z.array(z.string())),
  start: z.string().min(1),
  /** Stages from which `submit` ends the run. */
  terminal: z.array(z.string()).min(1, 'a workflow needs at least one terminal stage'),
  outcome: WorkflowOutcome,
  policy: z
    .strictObject({
      commands: CommandPolicy.default({ deny: [], ask: [] }),
      paths: PathPolicy.default({ workspaceOnly: true, deny: [] }),
    })
    .default({ commands: { deny: [], ask: [] }, paths: { workspaceOnly: true, deny: [] } }),
  // prefault: an absent section is parsed as `{}`, whose absent `protected` is the default protected set.
  sandbox: SandboxSection.prefault(() => ({})),
  mcp: McpSection.optional(),
  rewards: RewardWeights.default({ alpha: 0.5, beta: 0.25 }),
});
export type Workflow = z.infer<typeof Workflow>;
export type WorkflowInput = z.input<typeof Workflow>;

/**
 * The stages a stage may move to. Stage ids are user text, so the lookup must
 * not reach Object.prototype (a stage may well be called "constructor").
 */
export function transitionsFrom(wf: Workflow, stage: string): readonly string[] {
  return Object.hasOwn(wf.transitions, stage) ? wf.transitions[stage]! : [];
}
