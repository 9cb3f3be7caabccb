/**
 * Pure: model text as DOM nodes, through markdown-it's token stream (HTML
 * off) and highlight.js for code. Nothing is ever parsed as HTML by the DOM:
 * every element comes from an allow-list of tags made with createElement and
 * every string goes in through createTextNode, so `<img onerror=…>` stays the
 * characters it is. Works against any small DOM (MiniDocument), so it is
 * tested in Node and runs unchanged in the webview.
 */
import MarkdownIt from 'markdown-it';
import { highlightCode, type HighlightSpan } from './highlight';

type Token = MarkdownIt.Token;
type Parser = InstanceType<typeof MarkdownIt>;

/** The little of the DOM the renderer needs (so it can be tested without one). */
export interface MiniNode {
  appendChild(child: MiniNode): unknown;
}
export interface MiniElement extends MiniNode {
  className: string;
  textContent: string | null;
  setAttribute(name: string, value: string): void;
}
export interface MiniDocument<E extends MiniElement = MiniElement> {
  createElement(tag: string): E;
  createTextNode(text: string): MiniNode;
}

/** What the view adds to rendered markdown: behaviour the pure renderer cannot own. */
export interface RenderHooks<E extends MiniElement = MiniElement> {
  /** A link was made (its href already checked by linkAllowed): wire its click. */
  link?(a: E, href: string): void;
  /** A code block was made: `head` is its title row, `code` the exact text (for a copy button). */
  codeBlock?(head: E, code: string): void;
}

/**
 * Links the chat may open: http(s), file, and workspace-relative paths. The
 * extension checks again before it opens anything (a relative path must stay
 * inside the workspace); everything else (javascript:, data:, command:,
 * vscode:, mailto:) stays text.
 */
export function linkAllowed(href: string): boolean {
  const s = href.trim();
  if (!s || /[\u0000-\u001f\u007f]/.test(s)) return false;
  if (/^[a-z][a-z0-9+.-]*:/i.test(s)) return /^(https?|file):/i.test(s);
  // Protocol-relative (//host) would resolve against the webview's own origin.
  return !s.startsWith('//') && !s.startsWith('\\\\');
}

let parser: Parser | undefined;
function md(): Parser {
  if (!parser) {
    parser = new MarkdownIt('default', { html: false, linkify: true, typographer: false, breaks: false });
    // Remote images would load from anywhere (and the CSP refuses them anyway): an image stays its text.
    parser.disable(['image']);
    parser.validateLink = linkAllowed;
  }
  return parser;
}

/** Normalizes line ends as markdown-it does, so offsets into the text match its line map. */
function normalize(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

const BLOCK_TAGS = new Set([
  'p',
  'blockquote',
  'ul',
  'ol',
  'li',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
]);
const INLINE_TAGS: Record<string, string> = { strong_open: 'strong', em_open: 'em', s_open: 's' };

function alignClass(t: Token): string {
  const m = /text-align:\s*(left|center|right)/.exec(String(t.attrGet('style') ?? ''));
  return m ? `align-${m[1]}` : '';
}

function codeBlock<E extends MiniElement>(
  doc: MiniDocument<E>,
  text: string,
  lang: string,
  highlight: boolean,
  hooks: RenderHooks<E>,
): E {
  const wrap = doc.createElement('div');
  wrap.className = 'code-block';
  const head = doc.createElement('div');
  head.className = 'code-head';
  const label = doc.createElement('span');
  label.className = 'code-lang';
  label.textContent = lang || 'text';
  head.appendChild(label);
  hooks.codeBlock?.(head, text);
  wrap.appendChild(head);
  const pre = doc.createElement('pre');
  const code = doc.createElement('code');
  const spans = highlight ? highlightCode(text, lang) : undefined;
  if (spans) {
    code.className = 'hljs';
    appendSpans(doc, code, spans);
  } else code.textContent = text;
  pre.appendChild(code);
  wrap.appendChild(pre);
  return wrap;
}

type Span = HighlightSpan;
function appendSpans<E extends MiniElement>(doc: MiniDocument<E>, parent: E, spans: Span[]): void {
  for (const s of spans) {
    if (typeof s === 'string') parent.appendChild(doc.createTextNode(s));
    else {
      const el = doc.createElement('span');
      el.className = s.cls;
      appendSpans(doc, el, s.children);
      parent.appendChild(el);
    }
  }
}

/** Inline tokens (a paragraph's, a heading's, a cell's) into `parent`. */
function renderInline<E extends MiniElement>(
  doc: MiniDocument<E>,
  parent: E,
  tokens: Token[],
  hooks: RenderHooks<E>,
): void {
  const stack: E[] = [parent];
  const top = () => stack[stack.length - 1]!;
  for (const t of tokens) {
    switch (t.type) {
      case 'text':
        top().appendChild(doc.createTextNode(t.content));
        break;
      case 'code_inline': {
        const c = doc.createElement('code');
        c.textContent = t.content;
        top().appendChild(c);
        break;
      }
      case 'softbreak':
        top().appendChild(doc.createTextNode('\n'));
        break;
      case 'hardbreak':
        top().appendChild(doc.createElement('br'));
        break;
      case 'link_open': {
        const href = String(t.attrGet('href') ?? '');
        if (!linkAllowed(href)) {
          // Not a link we open: its text stays, inside a plain span.
          const span = doc.createElement('span');
          top().appendChild(span);
          stack.push(span);
          break;
        }
        const a = doc.createElement('a');
        a.setAttribute('href', href);
        a.setAttribute('title', href);
        hooks.link?.(a, href);
        top().appendChild(a);
        stack.push(a);
        break;
      }
      case 'strong_open':
      case 'em_open':
      case 's_open': {
        const e = doc.createElement(INLINE_TAGS[t.type]!);
        top().appendChild(e);
        stack.push(e);
        break;
      }
      case 'link_close':
      case 'strong_close':
      case 'em_close':
      case 's_close':
        if (stack.length > 1) stack.pop();
        break;
      default:
        // Anything else (an image's alt text with images off, a future token) shows as its source text.
        if (t.content) top().appendChild(doc.createTextNode(t.content));
    }
  }
}

/** Block tokens into `root`; `highlight` false leaves code plain (a block still streaming). */
function renderTokens<E extends MiniElement>(
  doc: MiniDocument<E>,
  root: E,
  tokens: Token[],
  highlight: boolean,
  hooks: RenderHooks<E>,
): void {
  const stack: E[] = [root];
  const top = () => stack[stack.length - 1]!;
  for (const t of tokens) {
    if (t.type === 'inline') {
      renderInline(doc, top(), t.children ?? [], hooks);
      continue;
    }
    if (t.type === 'fence' || t.type === 'code_block') {
      const lang = t.type === 'fence' ? (t.info.trim().split(/\s+/)[0] ?? '') : '';
      top().appendChild(codeBlock(doc, t.content.replace(/\n$/, ''), lang, highlight, hooks));
      continue;
    }
    if (t.type === 'hr') {
      top().appendChild(doc.createElement('hr'));
      continue;
    }
    // Paragraphs of a tight list are not drawn as paragraphs.
    if ((t.type === 'paragraph_open' || t.type === 'paragraph_close') && t.hidden) continue;
    if (t.nesting === 1 && BLOCK_TAGS.has(t.tag)) {
      const e = doc.createElement(t.tag);
      const align = t.tag === 'th' || t.tag === 'td' ? alignClass(t) : '';
      if (align) e.className = align;
      const start = t.tag === 'ol' ? t.attrGet('start') : null;
      if (start !== null && /^\d{1,9}$/.test(String(start))) e.setAttribute('start', String(start));
      top().appendChild(e);
      stack.push(e);
    } else if (t.nesting === -1 && BLOCK_TAGS.has(t.tag)) {
      if (stack.length > 1) stack.pop();
    } else if (t.nesting === 0 && t.content) {
      // A block token not on the list (html_block cannot occur with html off): its source as text.
      const p = doc.createElement('p');
      p.appendChild(doc.createTextNode(t.content));
      top().appendChild(p);
    }
  }
}

export function renderMarkdown<E extends MiniElement>(
  doc: MiniDocument<E>,
  text: string,
  hooks: RenderHooks<E> = {},
): E {
  const root = doc.createElement('div');
  root.className = 'md';
  renderTokens(doc, root, md().parse(normalize(text), {}), true, hooks);
  return root;
}

/**
 * Incremental rendering of an answer while it streams. Every top-level block
 * but the last is final once a later one has begun: it is rendered once
 * (highlighted) and never again; only the open tail is parsed again on each
 * update, so the cost per update stays flat however long the answer grows.
 * The finished answer is rendered whole once more (renderMarkdown): that
 * rendering is the authoritative one (reference links defined late, etc.).
 */
export class MarkdownStream<E extends MiniElement = MiniElement> {
  private committed = 0;

  constructor(
    private readonly doc: MiniDocument<E>,
    private readonly hooks: RenderHooks<E> = {},
  ) {}

  /** Given all text so far: the blocks that became final (to append once), and the tail (to replace). */
  update(all: string): { done: E[]; tail: E } {
    const text = normalize(all);
    const rest = text.slice(this.committed);
    const tokens = md().parse(rest, {});
    // Where each top-level block starts in the token list.
    const starts: number[] = [];
    tokens.forEach((t: Token, i: number) => {
      if (t.level === 0 && t.nesting >= 0 && t.map) starts.push(i);
    });
    const done: E[] = [];
    // The last block that begins after a blank line: what comes before it can no longer change (a
    // later line may still turn the block just above it into a heading, or continue it lazily).
    const lines = rest.split('\n');
    let cut = -1;
    for (let k = starts.length - 1; k >= 1; k--) {
      const first = tokens[starts[k]!]!.map![0];
      // A bare number may yet become the next item of the list above ("2" → "2.").
      if (first > 0 && lines[first - 1]!.trim() === '' && !/^\s{0,3}\d{1,9}$/.test(lines[first]!)) {
        cut = k;
        break;
      }
    }
    if (cut > 0) {
      const last = starts[cut]!;
      const finished = this.doc.createElement('div');
      finished.className = 'md';
      renderTokens(this.doc, finished, tokens.slice(0, last), true, this.hooks);
      done.push(finished);
      // Advance to the first line of the open block.
      let offset = 0;
      for (let n = 0; n < tokens[last]!.map![0]; n++) offset += lines[n]!.length + 1;
      const tail = this.doc.createElement('div');
      tail.className = 'md';
      renderTokens(this.doc, tail, tokens.slice(last), false, this.hooks);
      this.committed += offset;
      return { done, tail };
    }
    const tail = this.doc.createElement('div');
    tail.className = 'md';
    renderTokens(this.doc, tail, tokens, false, this.hooks);
    return { done, tail };
  }

  /** Characters rendered for good so far. */
  get settled(): number {
    return this.committed;
  }
}
