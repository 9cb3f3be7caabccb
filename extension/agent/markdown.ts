/**
 * Pure: the tiny markdown subset the chat renders from model text —
 * paragraphs, `inline code` and ``` fenced blocks — as a tree of plain
 * strings, then DOM nodes built with createElement/createTextNode only. Model
 * text is never parsed as HTML: `<img onerror=…>` stays the characters it is.
 */
export type Inline = { kind: 'text'; text: string } | { kind: 'code'; text: string };
export type Block = { kind: 'p'; inlines: Inline[] } | { kind: 'pre'; lang: string; text: string };

function inlines(text: string): Inline[] {
  const out: Inline[] = [];
  const re = /`([^`\n]+)`/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push({ kind: 'text', text: text.slice(last, m.index) });
    out.push({ kind: 'code', text: m[1]! });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push({ kind: 'text', text: text.slice(last) });
  return out;
}

export function parseMarkdown(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let para: string[] = [];
  const flush = () => {
    const t = para.join('\n').trim();
    if (t) blocks.push({ kind: 'p', inlines: inlines(t) });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      i++;
      while (i < lines.length && !/^\s*```\s*$/.test(lines[i]!)) body.push(lines[i++]!);
      blocks.push({ kind: 'pre', lang: fence[1] ?? '', text: body.join('\n') });
      continue;
    }
    if (line.trim() === '') flush();
    else para.push(line);
  }
  flush();
  return blocks;
}

/** The little of the DOM the renderer needs (so it can be tested without one). */
export interface MiniNode {
  appendChild(child: MiniNode): unknown;
}
export interface MiniElement extends MiniNode {
  className: string;
  textContent: string | null;
}
export interface MiniDocument {
  createElement(tag: string): MiniElement;
  createTextNode(text: string): MiniNode;
}

export function renderMarkdown(doc: MiniDocument, text: string): MiniElement {
  const root = doc.createElement('div');
  root.className = 'md';
  for (const b of parseMarkdown(text)) {
    if (b.kind === 'pre') {
      const pre = doc.createElement('pre');
      const code = doc.createElement('code');
      code.textContent = b.text;
      pre.appendChild(code);
      root.appendChild(pre);
    } else {
      const p = doc.createElement('p');
      for (const i of b.inlines) {
        if (i.kind === 'code') {
          const c = doc.createElement('code');
          c.textContent = i.text;
          p.appendChild(c);
        } else p.appendChild(doc.createTextNode(i.text));
      }
      root.appendChild(p);
    }
  }
  return root;
}
