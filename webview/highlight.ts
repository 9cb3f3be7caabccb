/**
 * Syntax highlighting for the chat's code blocks: highlight.js core with the
 * languages agents write most, plus Lean 4 (which highlight.js lacks). The
 * result is a tree of class names and plain strings, never HTML for the DOM:
 * highlight.js's own output (spans with hljs-* classes around escaped text)
 * is read by a strict reader, and anything outside that shape gives up and
 * leaves the code plain.
 */
import hljs from 'highlight.js/lib/core';
import type { HLJSApi, Language } from 'highlight.js';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

/** Lean 4 keywords: declarations, terms, `do` notation, sections and commands. */
const LEAN_KEYWORDS = [
  'def',
  'theorem',
  'lemma',
  'example',
  'abbrev',
  'instance',
  'structure',
  'class',
  'inductive',
  'where',
  'extends',
  'deriving',
  'match',
  'with',
  'fun',
  'if',
  'then',
  'else',
  'let',
  'have',
  'show',
  'from',
  'by',
  'do',
  'return',
  'for',
  'in',
  'unless',
  'mut',
  'namespace',
  'section',
  'end',
  'open',
  'import',
  'variable',
  'universe',
  'mutual',
  'partial',
  'unsafe',
  'private',
  'protected',
  'noncomputable',
  'at',
  'calc',
  'termination_by',
  'decreasing_by',
  'macro',
  'syntax',
  'macro_rules',
  'elab',
  'attribute',
  'set_option',
  'axiom',
  'opaque',
];

/** The sorts and the core types a reader meets first. */
const LEAN_TYPES = [
  'Type',
  'Prop',
  'Sort',
  'Nat',
  'Int',
  'String',
  'Bool',
  'List',
  'Array',
  'Option',
  'Float',
  'Char',
  'Unit',
  'IO',
];

/** Common tactics and `sorry`, shown as built-ins. */
const LEAN_TACTICS = [
  'sorry',
  'rfl',
  'simp',
  'omega',
  'decide',
  'exact',
  'intro',
  'intros',
  'apply',
  'cases',
  'induction',
  'rw',
  'constructor',
  'assumption',
  'trivial',
];

/** Lean 4, enough to read: keywords, sorts, comments (nested block comments), strings, numbers, attributes. */
function lean(h: HLJSApi): Language {
  const blockComment = h.COMMENT(/\/-/, /-\//, { contains: ['self'] });
  return {
    name: 'Lean 4',
    aliases: ['lean', 'lean4'],
    keywords: {
      keyword: LEAN_KEYWORDS,
      type: LEAN_TYPES,
      literal: ['true', 'false', 'none', 'some'],
      built_in: LEAN_TACTICS,
    },
    contains: [
      h.COMMENT(/--/, /$/),
      blockComment,
      h.QUOTE_STRING_MODE,
      { scope: 'string', begin: /'(\\.|[^'\\])'/ },
      { scope: 'number', begin: /\b(0x[0-9a-fA-F]+|0b[01]+|\d+(\.\d+)?)\b/ },
      { scope: 'meta', begin: /@\[/, end: /\]/ },
      { scope: 'title', begin: /«/, end: /»/ },
    ],
  };
}

const LANGUAGES: Record<string, (h: HLJSApi) => Language> = {
  bash,
  c,
  cpp,
  csharp,
  css,
  diff,
  dockerfile,
  go,
  ini,
  java,
  javascript,
  json,
  makefile,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
  lean,
};

let instance: HLJSApi | undefined;
function hl(): HLJSApi {
  if (!instance) {
    instance = hljs.newInstance();
    for (const [name, def] of Object.entries(LANGUAGES)) instance.registerLanguage(name, def);
    // Common names models write after the fence.
    instance.registerAliases(['sh', 'zsh', 'console', 'shellsession'], { languageName: 'bash' });
    instance.registerAliases(['ts', 'tsx', 'mts', 'cts'], { languageName: 'typescript' });
    instance.registerAliases(['js', 'jsx', 'mjs', 'cjs'], { languageName: 'javascript' });
    instance.registerAliases(['py'], { languageName: 'python' });
    instance.registerAliases(['toml'], { languageName: 'ini' });
    instance.registerAliases(['html', 'svg'], { languageName: 'xml' });
    instance.registerAliases(['jsonc', 'json5', 'jsonl'], { languageName: 'json' });
  }
  return instance;
}

export type HighlightSpan = string | { cls: string; children: HighlightSpan[] };

/** The highlight classes a span may carry, as highlight.js writes them ("hljs-title function_"). */
const CLASS = /^(hljs-[a-z_-]+( [a-z_-]+)*|language-[a-z0-9_-]+)$/;
const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#x27;': "'",
  '&#39;': "'",
};

/**
 * Reads highlight.js's output: `<span class="hljs-…">`, `</span>` and text
 * with its five escapes. Anything else (another tag, an attribute, an
 * unknown entity, unbalanced spans) is not trusted: undefined.
 */
export function readHighlighted(html: string): HighlightSpan[] | undefined {
  const root: HighlightSpan[] = [];
  const stack: HighlightSpan[][] = [root];
  const re = /<span class="([^"]*)">|<\/span>|&[#a-z0-9]+;|[^<&]+|[<&]/gi;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    const tok = m[0];
    const here = stack[stack.length - 1]!;
    if (m[1] !== undefined) {
      if (!CLASS.test(m[1])) return undefined;
      const node = { cls: m[1], children: [] as HighlightSpan[] };
      here.push(node);
      stack.push(node.children);
    } else if (tok === '</span>') {
      if (stack.length === 1) return undefined;
      stack.pop();
    } else if (tok.startsWith('&')) {
      const ch = ENTITIES[tok];
      if (ch === undefined) return undefined;
      push(here, ch);
    } else if (tok === '<' || tok === '&') return undefined;
    else push(here, tok);
  }
  return stack.length === 1 ? root : undefined;
}

function push(list: HighlightSpan[], text: string): void {
  const last = list[list.length - 1];
  if (typeof last === 'string') list[list.length - 1] = last + text;
  else list.push(text);
}

/** Larger blocks stay plain: highlighting them would hold up the view for little gain. */
const MAX_HIGHLIGHT = 100_000;

/** The code's highlight tree, or undefined when the language is unknown, the code too big, or the output not as expected. */
export function highlightCode(code: string, lang: string): HighlightSpan[] | undefined {
  const name = lang.toLowerCase();
  if (!name || code.length > MAX_HIGHLIGHT) return undefined;
  const h = hl();
  if (!h.getLanguage(name)) return undefined;
  try {
    return readHighlighted(h.highlight(code, { language: name, ignoreIllegals: true }).value);
  } catch {
    return undefined;
  }
}
