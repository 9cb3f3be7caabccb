// The chat's markdown (webview/markdown.ts, highlight.ts) against a
// fake DOM that throws on any HTML-parsing path: what a user sees of model
// text, and what model text can never become.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from '../support/fc';
import {
  linkAllowed,
  MarkdownStream,
  renderMarkdown,
  type MiniDocument,
  type MiniElement,
  type MiniNode,
} from '../../webview/markdown';
import { highlightCode, readHighlighted } from '../../webview/highlight';

class FakeEl implements MiniElement {
  className = '';
  children: (FakeEl | FakeText)[] = [];
  attrs = new Map<string, string>();
  private own: string | null = null;
  constructor(readonly tag: string) {}
  get textContent(): string | null {
    return this.own ?? this.children.map((c) => (c instanceof FakeEl ? c.textContent : c.data)).join('');
  }
  set textContent(v: string | null) {
    this.own = v;
    this.children = [];
  }
  appendChild(child: MiniNode): unknown {
    this.children.push(child as FakeEl | FakeText);
    return child;
  }
  setAttribute(name: string, value: string): void {
    this.attrs.set(name, value);
  }
  set innerHTML(_v: string) {
    throw new Error('innerHTML used');
  }
  all(): FakeEl[] {
    return [this, ...this.children.flatMap((c) => (c instanceof FakeEl ? c.all() : []))];
  }
  find(tag: string): FakeEl[] {
    return this.all().filter((e) => e.tag === tag);
  }
}
class FakeText {
  constructor(readonly data: string) {}
  appendChild(): unknown {
    throw new Error('text nodes have no children');
  }
}
const doc: MiniDocument = { createElement: (t) => new FakeEl(t), createTextNode: (t) => new FakeText(t) };
const render = (text: string, hooks = {}) => renderMarkdown(doc, text, hooks) as FakeEl;

/** Every tag the renderer may make; anything else would have come from model text. */
const ALLOWED = new Set([
  'div',
  'span',
  'p',
  'em',
  'strong',
  's',
  'code',
  'pre',
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
  'hr',
  'br',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'a',
]);
const ATTRS = new Set(['href', 'title', 'start']);

test('model text with HTML stays text: no element or attribute comes from it', () => {
  const evil = [
    'Look: <img src=x onerror=alert(1)> and `<script>alert(2)</script>`',
    '<iframe src="javascript:alert(3)"></iframe>',
    '<div style="position:fixed">x</div>',
    '```html\n<b onclick=alert(4)>x</b>\n```',
    '![pixel](https://tracker.example/p.gif)',
  ].join('\n\n');
  const root = render(evil);
  for (const e of root.all()) {
    assert.ok(ALLOWED.has(e.tag), e.tag);
    for (const k of e.attrs.keys()) assert.ok(ATTRS.has(k), k);
  }
  assert.equal(root.find('img').length, 0, 'images are not loaded');
  assert.match(root.textContent!, /<img src=x onerror=alert\(1\)>/);
  assert.match(root.textContent!, /<script>alert\(2\)<\/script>/);
  assert.match(root.textContent!, /<iframe src="javascript:alert\(3\)"><\/iframe>/);
  assert.match(root.textContent!, /<b onclick=alert\(4\)>x<\/b>/);
  assert.match(root.textContent!, /pixel/, "an image's text stays");
});

test('real markdown: headings, emphasis, lists, tables, quotes, rules', () => {
  const root = render(
    '# Plan\n\nSome **bold**, *em* and ~~old~~ words.\n\n1. first\n2. second\n\n- a\n- b\n\n> quoted\n\n---\n\n| name | n |\n|:-----|--:|\n| x | 1 |',
  );
  assert.deepEqual(
    root.find('h1').map((e) => e.textContent),
    ['Plan'],
  );
  assert.deepEqual(
    root.find('strong').map((e) => e.textContent),
    ['bold'],
  );
  assert.deepEqual(
    root.find('em').map((e) => e.textContent),
    ['em'],
  );
  assert.deepEqual(
    root.find('s').map((e) => e.textContent),
    ['old'],
  );
  assert.deepEqual(
    root
      .find('ol')[0]!
      .find('li')
      .map((e) => e.textContent),
    ['first', 'second'],
  );
  assert.deepEqual(
    root
      .find('ul')[0]!
      .find('li')
      .map((e) => e.textContent),
    ['a', 'b'],
  );
  assert.equal(root.find('li')[0]!.find('p').length, 0, 'a tight list has no paragraphs');
  assert.equal(root.find('blockquote')[0]!.textContent, 'quoted');
  assert.equal(root.find('hr').length, 1);
  assert.deepEqual(
    root.find('th').map((e) => [e.textContent, e.className]),
    [
      ['name', 'align-left'],
      ['n', 'align-right'],
    ],
  );
  assert.deepEqual(
    root.find('td').map((e) => e.textContent),
    ['x', '1'],
  );
  assert.equal(render('3. three\n4. four').find('ol')[0]!.attrs.get('start'), '3');
});

test('links: http(s), file and relative paths become links; every other scheme stays text', () => {
  const seen: string[] = [];
  const root = render(
    '[web](https://example.com/a) [plain](http://x.org) [f](file:///tmp/a.lean) [rel](src/sum.js#L3) https://auto.example/x\n\n' +
      '[js](javascript:alert(1)) [js2](JaVaScRiPt&#58;alert(1)) [d](data:text/html,<b>x</b>) [c](command:workbench.action.terminal.new) [v](vscode://file/etc/passwd) [m](mailto:a@b.c) [p](//evil.example/x)',
    { link: (_a: MiniElement, href: string) => seen.push(href) },
  );
  const links = root.find('a');
  assert.deepEqual(
    links.map((a) => a.attrs.get('href')),
    ['https://example.com/a', 'http://x.org', 'file:///tmp/a.lean', 'src/sum.js#L3', 'https://auto.example/x'],
  );
  assert.deepEqual(
    seen,
    links.map((a) => a.attrs.get('href')),
    'every link is handed to the view to open through the extension',
  );
  assert.ok(
    links.every((a) => a.attrs.get('title') === a.attrs.get('href')),
    'a link says where it goes',
  );
  for (const word of ['js', 'js2', 'd', 'c', 'v', 'm', 'p'])
    assert.match(root.textContent!, new RegExp(`\\b${word}\\b`), `${word} keeps its text`);
  for (const bad of [
    'javascript:x',
    ' JAVASCRIPT:x',
    'data:x',
    'vbscript:x',
    'command:x',
    'vscode:x',
    'mailto:x',
    '//h/x',
    '\\\\h\\x',
    'http://a\nb',
    '',
  ])
    assert.equal(linkAllowed(bad), false, bad);
});

test('code blocks: highlighted in the theme classes, the exact text kept for Copy, unknown languages plain', () => {
  const copied: string[] = [];
  const code = 'function add(a: number, b: number): number {\n  return a + b; // sum\n}';
  const root = render(
    `Here:\n\n\`\`\`ts\n${code}\n\`\`\`\n\n\`\`\`nosuchlang\n<b>x</b> & y\n\`\`\`\n\n    indented\n`,
    {
      codeBlock: (head: MiniElement, text: string) => {
        copied.push(text);
        const b = doc.createElement('button');
        b.textContent = 'Copy';
        head.appendChild(b);
      },
    },
  );
  const blocks = root.all().filter((e) => e.className === 'code-block');
  assert.equal(blocks.length, 3);
  assert.deepEqual(copied, [code, '<b>x</b> & y', 'indented']);
  const ts = blocks[0]!.find('code')[0]!;
  assert.equal(ts.className, 'hljs');
  assert.equal(ts.textContent, code, 'highlighting changes no character');
  const classes = new Set(ts.find('span').map((s) => s.className));
  for (const c of ['hljs-keyword', 'hljs-comment']) assert.ok(classes.has(c), `${c} in ${[...classes].join(' ')}`);
  assert.equal(blocks[0]!.find('span')[0]!.textContent, 'ts', 'the language is named');
  assert.equal(blocks[1]!.find('code')[0]!.children.length, 0, 'an unknown language stays one plain text');
  assert.equal(blocks[1]!.find('code')[0]!.textContent, '<b>x</b> & y');
  assert.ok(
    blocks.every((b) => b.find('button').length === 1),
    'every code block has its Copy button',
  );
});

test('Lean 4 code is highlighted (highlight.js has no Lean grammar of its own)', () => {
  const spans = highlightCode(
    '/- doc /- nested -/ -/\ntheorem add_zero (n : Nat) : n + 0 = n := by\n  simp -- done\n',
    'lean4',
  );
  assert.ok(spans);
  const flat = JSON.stringify(spans);
  for (const c of ['hljs-keyword', 'hljs-comment', 'hljs-type']) assert.match(flat, new RegExp(c));
});

test("highlight.js's output is read strictly: any tag, attribute or entity outside its shape gives plain text", () => {
  assert.deepEqual(readHighlighted('<span class="hljs-keyword">let</span> a &lt; b &amp;&amp; c'), [
    { cls: 'hljs-keyword', children: ['let'] },
    ' a < b && c',
  ]);
  assert.deepEqual(readHighlighted('<span class="hljs-title function_">f</span>'), [
    { cls: 'hljs-title function_', children: ['f'] },
  ]);
  for (const bad of [
    '<b>x</b>',
    '<span class="hljs-x" onclick="y">a</span>',
    '<span class="evil">a</span>',
    '<span class="hljs-a">open',
    'a</span>',
    '&nbsp;',
    '<img src=x>',
    'a < b',
  ]) {
    assert.equal(readHighlighted(bad), undefined, bad);
  }
  assert.equal(highlightCode('x'.repeat(100_001), 'ts'), undefined, 'huge blocks stay plain');
});

test('property: highlighting never changes the text of code, in any language', () => {
  const langs = fc.constantFrom(
    'ts',
    'js',
    'python',
    'bash',
    'json',
    'lean',
    'rust',
    'go',
    'yaml',
    'diff',
    'xml',
    'cpp',
    'sql',
    'markdown',
  );
  fc.assert(
    fc.property(
      langs,
      fc.string({
        unit: fc.constantFrom(
          'a',
          'b',
          ' ',
          '\n',
          '"',
          "'",
          '<',
          '>',
          '&',
          '/',
          '*',
          '-',
          '{',
          '}',
          '(',
          ')',
          '#',
          '1',
          '`',
          '\\',
          'é',
          '«',
          '»',
          '\t',
          'let ',
          'def ',
          'fn ',
        ),
      }),
      (lang, code) => {
        const spans = highlightCode(code, lang);
        if (!spans) return;
        const text = (s: typeof spans): string => s.map((x) => (typeof x === 'string' ? x : text(x.children))).join('');
        assert.equal(text(spans), code);
      },
    ),
  );
});

/** An element's structure: tags, classes and attributes, and text, as a string to compare. */
function shape(e: FakeEl | FakeText): string {
  if (e instanceof FakeText) return JSON.stringify(e.data);
  const attrs = [...e.attrs].map(([k, v]) => `${k}=${v}`).join(',');
  const inner = e.children.length ? e.children.map(shape).join('') : JSON.stringify(e.textContent ?? '');
  return `<${e.tag}${e.className ? `.${e.className}` : ''}${attrs ? `[${attrs}]` : ''}>${inner}</>`;
}

/** The text a reader sees of streamed rendering: the settled blocks, then the tail. */
function streamed(chunks: string[]): { text: string; settled: number; shape: string } {
  const s = new MarkdownStream(doc);
  const done: FakeEl[] = [];
  let tail: FakeEl | undefined;
  let all = '';
  for (const c of chunks) {
    all += c;
    const u = s.update(all);
    done.push(...(u.done as FakeEl[]));
    tail = u.tail as FakeEl;
  }
  const parts = [...done, ...(tail ? [tail] : [])];
  return {
    text: parts.map((e) => e.textContent).join(''),
    settled: s.settled,
    shape: parts
      .flatMap((p) => p.children)
      .map(shape)
      .join(''),
  };
}

test('streaming renders settled blocks once and only the open tail again', () => {
  const answer = '# Title\n\nFirst paragraph with `code`.\n\n```js\nlet a = 1;\n```\n\n- one\n- two\n\nLast words';
  const chunks = answer.match(/[\s\S]{1,3}/g)!;
  const r = streamed(chunks);
  assert.equal(r.text, render(answer).textContent);
  assert.ok(
    r.settled > answer.indexOf('Last words') - 1,
    `settled ${r.settled}: everything before the last block is final`,
  );
  // An unclosed fence shows as code while it streams.
  const open = new MarkdownStream(doc).update('Run this:\n\n```bash\nnpm test\n');
  assert.equal((open.tail as FakeEl).find('code')[0]?.textContent, 'npm test');
});

test('property: streamed in any chunks, what shows is what the whole text renders to', () => {
  // Markdown-ish text without link reference definitions (defined late, they change earlier text; the final render fixes that).
  const unit = fc.constantFrom(
    'a',
    'b',
    ' ',
    '\n',
    '\n\n',
    '# ',
    '- ',
    '1. ',
    '2.',
    '+ ',
    '1)',
    '> ',
    '```',
    '~~~',
    '===',
    '\t',
    '[l]',
    '`',
    '*',
    '**',
    '_',
    '|',
    '---',
    '    ',
    'x|y\n-|-\n',
    '[l](https://e.x)',
    '\\',
    '<b>',
    '&amp;',
    '~~',
  );
  fc.assert(
    fc.property(
      fc.array(unit, { maxLength: 40 }),
      fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }),
      (parts, sizes) => {
        const text = parts.join('');
        const chunks: string[] = [];
        for (let i = 0, k = 0; i < text.length; k++) {
          const n = sizes[k % sizes.length]!;
          chunks.push(text.slice(i, i + n));
          i += n;
        }
        const got = streamed(chunks);
        assert.equal(got.text, render(text).textContent, JSON.stringify(chunks));
        // The same structure too (lists not split in two, headings not paragraphs) — highlighting aside, which waits for a block to settle.
        const whole = (renderMarkdown(doc, text) as FakeEl).children.map(shape).join('');
        const plain = (x: string) =>
          x.replace(/<span\.hljs[^>]*>|<span\.language[^>]*>/g, '').replace(/<code\.hljs>/g, '<code>');
        assert.equal(plain(got.shape), plain(whole), JSON.stringify(chunks));
      },
    ),
  );
});
