/**
 * What the user's own tools run later outside any sandbox (git hooks, hook managers, agents,
 * direnv, CI, editors) and what the outcome check runs, found by following what their files name.
 */
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { outcomeCommand, type Workflow } from '../schema/workflow';
import { entryKind } from '../workspace/path-kind';
import { isInside } from '../workspace/fs';
import {
  filesBelow,
  followBudget,
  type FollowBudget,
  LIFECYCLE,
  packageJson,
  readFollowed,
  referencedScripts,
  scriptTexts,
} from './script-refs';

/** A workspace path found here (a Protection to protections.ts), with what named it. */
export interface Found {
  /** Workspace-relative, `/`-separated. */
  path: string;
  why: 'runs_later' | 'outcome';
  note?: string;
}

/**
 * Run on their own by the user's tools, later, outside the sandbox: hook
 * managers (husky, lefthook, pre-commit, simple-git-hooks, lint-staged),
 * agents' hooks and MCP servers, direnv, mise, dev containers, CI workflows,
 * editors' run configurations and exrc files, submodule settings. `.vscode`
 * and git's own metadata are protected apart. In the order the follower
 * reads them (runsLater): what runs at the user's next commit or prompt
 * first, editors last.
 */
export const RUNS_LATER: readonly string[] = [
  '.husky',
  '.lefthook',
  '.githooks',
  '.git-hooks',
  'lefthook.yml',
  '.lefthook.yml',
  'lefthook.yaml',
  '.lefthook.yaml',
  'lefthook.json',
  '.lefthook.json',
  'lefthook.toml',
  '.lefthook.toml',
  'lefthook-local.yml',
  '.lefthook-local.yml',
  'lefthook-local.yaml',
  '.lefthook-local.yaml',
  '.pre-commit-config.yaml',
  '.pre-commit-config.yml',
  '.pre-commit-hooks.yaml',
  '.simple-git-hooks.json',
  '.simple-git-hooks.js',
  '.simple-git-hooks.cjs',
  '.simple-git-hooks.mjs',
  'simple-git-hooks.json',
  'simple-git-hooks.js',
  'simple-git-hooks.cjs',
  'simple-git-hooks.mjs',
  '.lintstagedrc',
  '.lintstagedrc.json',
  '.lintstagedrc.yaml',
  '.lintstagedrc.yml',
  '.lintstagedrc.js',
  '.lintstagedrc.cjs',
  '.lintstagedrc.mjs',
  'lint-staged.config.js',
  'lint-staged.config.cjs',
  'lint-staged.config.mjs',
  // Agents that run hooks and start MCP servers from the workspace's configuration as the user works.
  '.mcp.json',
  '.claude',
  '.cursor',
  '.continue',
  '.gemini',
  '.kilocode',
  '.opencode',
  'opencode.json',
  // direnv: .envrc and what its source_env loads (a .env it loads with dotenv: see runsLater).
  '.envrc',
  '.envrc.local',
  'mise.toml',
  '.mise.toml',
  'mise.local.toml',
  '.mise.local.toml',
  '.mise',
  '.config/mise',
  '.config/mise.toml',
  '.devcontainer',
  '.devcontainer.json',
  // CI services, which run these with the project's secrets.
  '.github/workflows',
  '.github/actions',
  '.gitlab-ci.yml',
  '.gitlab',
  '.circleci',
  'Jenkinsfile',
  '.travis.yml',
  'azure-pipelines.yml',
  '.azure-pipelines',
  '.buildkite',
  'bitbucket-pipelines.yml',
  '.drone.yml',
  '.woodpecker',
  '.woodpecker.yml',
  // Editors that start programs from the workspace's configuration (run configurations, language servers, exrc), submodules.
  '.idea',
  '.gitmodules',
  '.zed',
  '.helix',
  '.nvim.lua',
  '.nvimrc',
  '.exrc',
  '.dir-locals.el',
  '.dir-locals-2.el',
];

/**
 * Code the editor's linter and formatter extensions load on their own when a
 * file is opened or saved, and hooks run through lint-staged and commitlint:
 * read-only where they exist, but not kept absent (a task may be to set one
 * up; a new one is listed with the changed files that run later).
 */
const LOADED_CONFIGS: readonly string[] = [
  ...[
    'eslint.config',
    'prettier.config',
    '.prettierrc',
    'stylelint.config',
    '.stylelintrc',
    'commitlint.config',
    '.commitlintrc',
  ].flatMap((b) => ['js', 'cjs', 'mjs', 'ts', 'cts', 'mts'].map((e) => `${b}.${e}`)),
  '.eslintrc.js',
  '.eslintrc.cjs',
];

const LOADED = new Set(LOADED_CONFIGS);

/**
 * What the follower does not read for the scripts it names, though it is protected itself:
 * JetBrains' `.idea` (its XML names the files the user has open, the project's folders) and
 * XML anywhere, the linter and formatter configs (a `project: './tsconfig.json'` is not code
 * that runs), and what direnv loads as variables.
 */
const NOT_FOLLOWED = (p: string): boolean =>
  p === '.idea' ||
  p.startsWith('.idea/') ||
  p.endsWith('.xml') ||
  LOADED.has(basename(p)) ||
  /(?:^|\/)\.env(?:\.[\w-]+)?$/.test(p);

/** Names git runs as hooks: a folder holding files so named is a hooks folder. */
const HOOK_NAMES = new Set([
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'pre-receive',
  'update',
  'post-receive',
  'post-update',
  'push-to-checkout',
  'pre-auto-gc',
  'post-rewrite',
  'sendemail-validate',
  'fsmonitor-watchman',
  'reference-transaction',
]);

/** package.json keys whose values hook managers run (simple-git-hooks, husky 4, lint-staged). */
const PACKAGE_HOOK_KEYS = ['simple-git-hooks', 'husky', 'lint-staged', 'pre-commit', 'gitHooks'];

const MAX_REFERENCED = 200;

const rel = (root: string, abs: string): string => relative(root, abs).split(sep).join('/');

/** Most scripts one source (a hooks folder, package.json, each of RUNS_LATER) adds, so that none crowds out the rest. */
const MAX_REFERENCED_PER_SOURCE = 50;

/**
 * What runs later: the fixed names that exist, the hooks folder git uses and
 * — for husky's `_` dispatcher, or any hooks folder inside a folder of hook
 * files — the folder above it, and every script the hooks, the hook
 * managers', agents', CI's and editors' configuration name (followed two
 * levels down). The sources are read in order — the hooks git runs,
 * package.json's hook managers and lifecycle scripts, then RUNS_LATER's order
 * (hook managers, agents, direnv and dev containers, CI, editors) — each
 * adding at most 50 scripts, 200 in all; not what NOT_FOLLOWED names.
 */
export function runsLater(root: string, hooksPath: string | undefined, bounded?: string[]): Found[] {
  const budget = followBudget();
  const found = new Map<string, Found>();
  const add: AddFound = (path, note) => {
    if (!found.has(path)) found.set(path, { path, why: 'runs_later', ...(note ? { note } : {}) });
  };
  for (const p of [...RUNS_LATER, ...LOADED_CONFIGS]) if (entryKind(join(root, p)) !== undefined) add(p);
  // direnv loads these into the user's shell (dotenv, dotenv_if_exists): a variable such as LD_PRELOAD or NODE_OPTIONS there is code.
  if (found.has('.envrc'))
    for (const p of ['.env', '.env.local'])
      if (entryKind(join(root, p)) !== undefined) add(p, 'loaded by .envrc (direnv)');
  const hookFolders = hookFoldersOf(root, hooksPath, add);
  const crowded = followSources(root, sourcesOf(root, hookFolders, found), budget, add);
  if (crowded.size)
    bounded?.push(
      `${[...crowded].join(', ')} name${crowded.size === 1 ? 's' : ''} more scripts than are followed (${MAX_REFERENCED_PER_SOURCE} a source, ${MAX_REFERENCED} in all): the first ones found are protected`,
    );
  if (budget.spent)
    bounded?.push(
      'the texts that name what runs later are too many or too large to read whole in time: scripts they name may not be protected',
    );
  return [...found.values()];
}

/** Records a path that runs later (the first note found for it stays). */
type AddFound = (path: string, note?: string) => void;

/** Where the follower starts: a source's files, read first, or its text (package.json's hook settings and scripts). */
interface Source {
  name: string;
  files: string[];
  text?: string;
}

/** The hooks git runs (protected as git metadata): .git/hooks, or the folder core.hooksPath names, and husky's folder above it. */
function hookFoldersOf(root: string, hooksPath: string | undefined, add: AddFound): string[] {
  const hookFolders = ['.git/hooks'];
  const hooksAbs = hooksPath === undefined ? undefined : isAbsolute(hooksPath) ? hooksPath : join(root, hooksPath);
  if (hooksAbs && isInside(root, hooksAbs, false) && hooksAbs !== root) {
    const abs = hooksAbs;
    const parent = dirname(abs);
    hookFolders.push(rel(root, abs));
    // husky ≥ 9: core.hooksPath is .husky/_, whose stubs run the hook files one folder up.
    const upward =
      basename(abs) === '_' ||
      filesBelow(root, parent, 200).some((f) => dirname(join(root, f)) === parent && HOOK_NAMES.has(basename(f)));
    if (upward && parent !== root && isInside(root, parent, false)) {
      add(rel(root, parent), `the folder of the hooks git runs (core.hooksPath ${hooksPath})`);
      hookFolders.push(rel(root, parent));
    }
  }
  return hookFolders;
}

/** Where the follower starts, in order: the hooks folders, package.json, then what of RUNS_LATER was found. */
function sourcesOf(root: string, hookFolders: readonly string[], found: ReadonlyMap<string, Found>): Source[] {
  // Each source's files are read, then what they name, two levels down.
  const filesOf = (p: string): string[] =>
    (entryKind(join(root, p)) === 'dir' ? filesBelow(root, join(root, p), 200) : [p]).filter(
      (f) => !NOT_FOLLOWED(f) && !f.endsWith('.sample'),
    );
  const pkg = packageJson(root);
  // Hook managers' settings, and the lifecycle scripts npm runs by itself on install.
  let pkgRefs = pkg
    ? PACKAGE_HOOK_KEYS.filter((k) => pkg[k] !== undefined)
        .map((k) => JSON.stringify(pkg[k]))
        .join('\n')
    : '';
  for (const name of LIFECYCLE) pkgRefs += `\n${scriptTexts(pkg, name).join('\n')}`;
  return [
    ...[...new Set(hookFolders)].map((name) => ({ name, files: filesOf(name) })),
    { name: 'package.json', files: [], text: pkgRefs },
    ...RUNS_LATER.filter((p) => found.has(p) && !NOT_FOLLOWED(p) && !hookFolders.includes(p)).map((name) => ({
      name,
      files: filesOf(name),
    })),
  ];
}

/** Follows what each source names, two levels down, within the bounds: the sources that named more than was followed. */
function followSources(root: string, sources: readonly Source[], budget: FollowBudget, add: AddFound): Set<string> {
  const seen = new Set<string>(sources.flatMap((s) => s.files));
  let referenced = 0;
  const crowded = new Set<string>();
  for (const source of sources) {
    let added = 0;
    const follow = (from: string, text: string): string[] => {
      const next: string[] = [];
      for (const s of referencedScripts(root, from, text, budget)) {
        if (seen.has(s)) continue;
        if (added >= MAX_REFERENCED_PER_SOURCE || referenced >= MAX_REFERENCED) {
          crowded.add(source.name);
          break;
        }
        seen.add(s);
        add(s, `named by ${from}`);
        added++;
        referenced++;
        if (!NOT_FOLLOWED(s)) next.push(s);
      }
      return next;
    };
    let next = source.text ? follow(source.name, source.text) : [];
    let files = source.files;
    for (let level = 0; level < 3; level++) {
      for (const f of files) {
        const text = readFollowed(budget, join(root, f));
        if (text !== undefined) next.push(...follow(f, text));
      }
      files = next;
      next = [];
    }
  }
  return crowded;
}

/**
 * What the outcome check runs that the run could otherwise rewrite: the files its command names
 * (`node test.js`, `./run-tests.sh`) and, for `npm test` and the like, the files the package.json
 * scripts it runs name (`"test": "node scripts/run-tests.js"`), followed two levels into them.
 */
export function outcomeReach(root: string, wf: Workflow): Found[] {
  const found = new Map<string, Found>();
  const check = outcomeCommand(wf);
  if (!check) return [];
  const words = check.command.split(/[\s;&|()`]+/).filter(Boolean);
  let i = 0;
  while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) || words[i] === 'env' || words[i] === 'exec'))
    i++;
  const runner = words[i];
  // `at`: the file a text is in (its references are read from its folder too); the workspace's top for the command and package.json.
  let texts: { from: string; at: string; text: string }[] = [
    { from: 'the outcome command', at: 'package.json', text: check.command },
  ];
  if (runner === 'npm' || runner === 'yarn' || runner === 'pnpm' || runner === 'bun') {
    const verb = words[i + 1];
    const name =
      verb === 'run' || verb === 'run-script' ? words[i + 2] : verb === 't' || verb === 'tst' ? 'test' : verb;
    if (name)
      texts = [
        ...texts,
        ...scriptTexts(packageJson(root), name).map((text) => ({
          from: `package.json's ${name} script`,
          at: 'package.json',
          text,
        })),
      ];
  }
  const budget = followBudget();
  for (let level = 0; level < 3 && texts.length; level++) {
    const next: { from: string; at: string; text: string }[] = [];
    for (const { from, at, text } of texts) {
      for (const s of referencedScripts(root, at, text, budget)) {
        if (found.has(s) || found.size >= MAX_REFERENCED) continue;
        found.set(s, { path: s, why: 'outcome', note: `run by ${from}` });
        const body = readFollowed(budget, join(root, s));
        if (body !== undefined) next.push({ from: s, at: s, text: body });
      }
    }
    texts = next;
  }
  return [...found.values()];
}
