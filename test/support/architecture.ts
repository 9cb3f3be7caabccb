/**
 * The rules that keep the layout (docs/architecture.md, "Layers"), as pure
 * functions over an import graph and a file list, so test/architecture.test.ts
 * can run each on the real tree and on a planted violation.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import: from a file to a file (both repository-relative) or to a package, and whether only types cross. */
export interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
  /** A relative import: `to` is the repository-relative file it resolves to (or the unresolved specifier, starting with `.`). */
  local?: boolean;
}

/** The TypeScript files below `dirs` (repository-relative, `/`-separated). */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(join(root, d), { withFileTypes: true })) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) out.push(p);
    }
  };
  for (const d of dirs) if (existsSync(join(root, d))) walk(d);
  return out.sort();
}

/** Every import, export-from, `import()` and `require()` of `files`; relative ones resolved to files, others kept as package names. */
export function importGraph(root: string, files: readonly string[]): Edge[] {
  const edges: Edge[] = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const add = (spec: string, typeOnly: boolean): void => {
      edges.push({
        from: file,
        to: spec.startsWith('.') ? (resolveRelative(root, file, spec) ?? spec) : spec,
        typeOnly,
        local: spec.startsWith('.'),
      });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const clause = node.importClause;
        const onlyTypes =
          !!clause &&
          (clause.isTypeOnly ||
            (!clause.name &&
              !!clause.namedBindings &&
              ts.isNamedImports(clause.namedBindings) &&
              clause.namedBindings.elements.length > 0 &&
              clause.namedBindings.elements.every((e) => e.isTypeOnly)));
        add(node.moduleSpecifier.text, onlyTypes);
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, node.isTypeOnly);
      } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0]!)) {
        const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
        const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
        if (isImport || isRequire) add(node.arguments[0].text, false);
      } else if (
        ts.isImportTypeNode(node) &&
        ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal)
      ) {
        add(node.argument.literal.text, true);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return edges;
}

function resolveRelative(root: string, from: string, spec: string): string | undefined {
  const base = resolve(root, dirname(from), spec);
  for (const c of [`${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts'), base]) {
    if (existsSync(c) && statSync(c).isFile()) return relative(root, c).split(sep).join('/');
  }
  return undefined;
}

/**
 * The layers, lowest first: a file may import its own folder and folders of
 * lower layers, never a folder of its own layer or a higher one. A folder is
 * `core/<name>` or a top-level folder.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['core/json'],
  ['core/schema', 'core/policy'],
  ['core/workspace', 'core/secrets'],
  ['core/workflow'],
  ['core/verifier', 'core/shell'],
  ['core/outcome', 'core/model', 'core/checkpoints', 'core/lean', 'core/export', 'core/rewards', 'core/protocol'],
  ['core/harbor', 'core/training'],
  ['core/sandbox'],
  ['core/tools'],
  ['core/mcp'],
  ['core/agent'],
  ['cli', 'server', 'extension', 'testkit'],
  ['webview'],
];

/** Imports between these folders that the layers allow although they are in one layer: `lar lsp` serves from the CLI. */
export const ALLOWED_ACROSS: readonly [string, string][] = [['cli', 'server']];

/** Packages only applications may import: the editor and the language server protocol's two ends. */
export const APPLICATION_PACKAGES = [
  'vscode',
  'vscode-languageclient',
  'vscode-languageserver',
  'vscode-languageserver-textdocument',
];

export const folderOf = (file: string): string => {
  const parts = file.split('/');
  return parts[0] === 'core' ? `core/${parts[1]}` : parts[0]!;
};

/** Imports that break the layer order, each as a sentence. */
export function layerViolations(edges: readonly Edge[], layers: readonly (readonly string[])[] = LAYERS): string[] {
  const rank = (folder: string): number => layers.findIndex((l) => l.includes(folder));
  const out: string[] = [];
  for (const e of edges) {
    const from = folderOf(e.from);
    // The repository's own manifest (the CLI reads its version from package.json).
    if (e.local && !e.to.includes('/') && !e.to.endsWith('.ts')) continue;
    if (e.local && e.to.startsWith('.')) {
      out.push(`${e.from} imports ${e.to}, which resolves to no file`);
      continue;
    }
    if (!(e.local ?? (e.to.includes('/') && /\.ts$/.test(e.to)))) {
      // A package: the core and the webview stay free of the editor and the protocol's servers.
      const pkg = e.to.split('/')[0]!;
      if ((from.startsWith('core/') || from === 'webview') && APPLICATION_PACKAGES.includes(pkg))
        out.push(`${e.from} imports ${e.to}, which only an application may import`);
      continue;
    }
    const to = folderOf(e.to);
    if (from === to) continue;
    const rf = rank(from);
    const rt = rank(to);
    if (rf < 0 || rt < 0) {
      out.push(`${e.from} imports ${e.to}: ${rf < 0 ? from : to} is in no layer`);
      continue;
    }
    if (from === 'webview' && to !== 'core/protocol')
      out.push(`${e.from} imports ${e.to}: the webview imports only core/protocol and its own files`);
    else if (rt > rf || (rt === rf && !ALLOWED_ACROSS.some(([a, b]) => a === from && b === to)))
      out.push(
        `${e.from} imports ${e.to}: ${from} may not import ${to} (${rt > rf ? 'a higher layer' : 'the same layer'})`,
      );
  }
  return out;
}

/** Import cycles among files (type-only imports included), each as the files in it. */
export function importCycles(edges: readonly Edge[]): string[][] {
  const adj = new Map<string, string[]>();
  for (const e of edges) if (e.to.endsWith('.ts')) adj.set(e.from, [...(adj.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of adj.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (adj.get(v) ?? []).includes(v)) cycles.push(scc.sort());
    }
  };
  for (const v of [...adj.keys()].sort()) if (!index.has(v)) connect(v);
  return cycles;
}

/**
 * Extension modules that import `vscode` are its glue; the rest run under
 * `node --test`. A module free of `vscode` that imports glue would stop
 * being testable: purity must be closed under imports.
 */
export function impureImports(edges: readonly Edge[], folder = 'extension'): string[] {
  const glue = new Set(edges.filter((e) => e.to === 'vscode').map((e) => e.from));
  return edges
    .filter((e) => e.from.startsWith(`${folder}/`) && !glue.has(e.from) && glue.has(e.to))
    .map((e) => `${e.from} imports ${e.to}, which imports vscode`);
}

/** File names that are not kebab-case (`lower-case-words`, then dotted suffixes such as `.test.ts`). */
export function casingViolations(files: readonly string[]): string[] {
  return files.filter(
    (f) =>
      !/^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+)*\.ts$/.test(f.split('/').pop()!) ||
      f
        .split('/')
        .slice(0, -1)
        .some((d) => !/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(d)),
  );
}

export interface SizeLimits {
  fileLines: number;
  functionLines: number;
}

/** Files over the line limit and functions (declarations, methods, arrows, by name where they have one) over theirs, as `path` and `path#name`. */
export function sizes(root: string, files: readonly string[], limits: SizeLimits): Map<string, number> {
  const over = new Map<string, number>();
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > limits.fileLines) over.set(file, lines);
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (node: ts.Node, owner: string): void => {
      let name = owner;
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        name = functionName(node, owner);
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        const n = end - start + 1;
        if (n > limits.functionLines) over.set(`${file}#${name}`, Math.max(n, over.get(`${file}#${name}`) ?? 0));
      } else if (ts.isClassDeclaration(node) && node.name) name = node.name.text;
      ts.forEachChild(node, (c) => visit(c, name));
    };
    visit(sf, '');
  }
  return over;
}

function functionName(node: ts.SignatureDeclaration, owner: string): string {
  const own =
    node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))
      ? node.name.text
      : ts.isConstructorDeclaration(node)
        ? 'constructor'
        : undefined;
  const parent = node.parent;
  const assigned =
    !own && parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)
      ? parent.name.text
      : !own && parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)
        ? parent.name.text
        : undefined;
  const base = own ?? assigned ?? '(anonymous)';
  return owner ? `${owner}.${base}` : base;
}

/**
 * Commands: every contributed id is in the table, every table id is
 * contributed, and each is registered by name from the table
 * (`registerCommand(COMMANDS.<name>`), never by a string of its own.
 */
export function commandProblems(
  contributed: readonly string[],
  table: Readonly<Record<string, string>>,
  sources: readonly string[],
): string[] {
  const out: string[] = [];
  const ids = new Set(Object.values(table));
  for (const c of contributed) if (!ids.has(c)) out.push(`${c} is contributed but not in the command table`);
  for (const [name, id] of Object.entries(table)) {
    if (!contributed.includes(id)) out.push(`${id} is in the command table but not contributed`);
    if (!sources.some((s) => s.includes(`registerCommand(COMMANDS.${name},`)))
      out.push(`${id} has no handler (registerCommand(COMMANDS.${name}, …))`);
  }
  for (const s of sources)
    for (const m of s.matchAll(/registerCommand\(\s*['"`]([^'"`]+)/g))
      out.push(`${m[1]} is registered by a string, not from the command table`);
  return out;
}

/** Settings: every contributed key is read in the extension's config module and named in the docs (`lean4Agentic.x.y`, the key whole). */
export function settingProblems(
  keys: readonly string[],
  configSource: string,
  docs: string,
  readElsewhere: readonly string[] = [],
): string[] {
  const out: string[] = [];
  for (const key of keys) {
    const short = key.replace(/^lean4Agentic\./, '');
    if (!readElsewhere.includes(key) && !configSource.includes(`'${short}'`))
      out.push(`${key} is never read in extension/config.ts`);
    if (!docs.includes(key)) out.push(`${key} is not documented`);
  }
  return out;
}

/**
 * Links in walkthrough text: each `command:` link names a command the extension contributes or one of
 * VS Code's, and none opens a machine-scoped setting with a plain `openSettings` (a remote window lists
 * those on its Remote tab, so the User tab says "No Settings Found").
 */
export function walkthroughLinkProblems(
  texts: readonly string[],
  contributed: readonly string[],
  scopes: Readonly<Record<string, string | undefined>>,
): string[] {
  const out: string[] = [];
  for (const t of texts)
    for (const m of t.matchAll(/\]\(command:([A-Za-z0-9_.]+)(?:\?([^)]*))?\)/g)) {
      const [, id = '', query] = m;
      if (id.startsWith('lean4Agentic.') && !contributed.includes(id)) out.push(`${id} is linked but not contributed`);
      if (id !== 'workbench.action.openSettings' || !query) continue;
      const args = JSON.parse(decodeURIComponent(query)) as unknown[];
      const key = typeof args[0] === 'string' ? args[0] : '';
      if (/^machine/.test(scopes[key] ?? ''))
        out.push(`${key} is opened on the User tab, where a remote window lacks it`);
    }
  return out;
}
