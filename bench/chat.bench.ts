/**
 * `npm run bench`: the chat's own costs. (1) Rendering a streamed answer: a
 * 20 KB answer in 200 deltas drawn incrementally (MarkdownStream: settled
 * blocks once, the open tail per delta) against drawing the whole text again
 * per delta, both with markdown-it into a small DOM; reported as totals and
 * their ratio, measured in one run. (2) Checkpoints: the shadow git store on
 * a 2,000-file workspace: the first snapshot, a snapshot after a 1-file
 * change (what each agent step costs), a preview and restore of 20 files.
 * Figures go to docs/performance.md between the BENCH:chat markers.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CheckpointStore } from '../core/checkpoints/store';
import { MarkdownStream, renderMarkdown, type MiniDocument, type MiniElement } from '../webview/markdown';
import { machineLine, writeSection } from './report';
import { loadNote, summarize } from './stats';

class El implements MiniElement {
  className = '';
  textContent: string | null = null;
  children: unknown[] = [];
  appendChild(c: unknown) {
    this.children.push(c);
  }
  setAttribute() {}
}
const doc: MiniDocument = { createElement: () => new El(), createTextNode: (t) => ({ t, appendChild() {} }) as never };

function answer(): string {
  const parts: string[] = [];
  for (let i = 0; parts.join('\n\n').length < 20_000; i++) {
    parts.push(
      i % 4 === 0
        ? `## Step ${i}\n\nThe function **sum** in \`src/sum.js\` returns \`a - b\`; see [the test](test/sum.test.js).`
        : i % 4 === 1
          ? `- read the file\n- change line ${i}\n- run \`npm test\``
          : i % 4 === 2
            ? '```js\nfunction sum(a, b) {\n  return a + b;\n}\nmodule.exports = { sum };\n```'
            : `| call | result |\n|--|--|\n| sum(${i}, 1) | ${i + 1} |`,
    );
  }
  return parts.join('\n\n');
}

function renderBench() {
  const text = answer();
  const n = 200;
  const cuts = Array.from({ length: n }, (_, i) => Math.round(((i + 1) * text.length) / n));
  const t0 = performance.now();
  const s = new MarkdownStream(doc);
  for (const c of cuts) s.update(text.slice(0, c));
  renderMarkdown(doc, text);
  const incremental = performance.now() - t0;
  const t1 = performance.now();
  for (const c of cuts) renderMarkdown(doc, text.slice(0, c));
  const whole = performance.now() - t1;
  return { chars: text.length, deltas: n, incremental, whole };
}

async function checkpointBench() {
  const root = mkdtempSync(join(tmpdir(), 'lar-bench-ckpt-'));
  const ws = join(root, 'ws');
  try {
    for (let d = 0; d < 40; d++) {
      mkdirSync(join(ws, 'src', `m${d}`), { recursive: true });
      for (let f = 0; f < 50; f++)
        writeFileSync(join(ws, 'src', `m${d}`, `f${f}.ts`), `export const v${d}_${f} = ${d * f};\n`.repeat(20));
    }
    const store = await CheckpointStore.open({ storage: join(root, 'storage'), workspace: ws });
    if (!(store instanceof CheckpointStore)) throw new Error(store.unavailable);
    let t = performance.now();
    const first = await store.snapshot('runs/b/steps/0', 'first');
    const firstMs = performance.now() - t;
    const step: number[] = [];
    for (let i = 1; i <= 20; i++) {
      writeFileSync(join(ws, 'src', `m${i}`, 'f0.ts'), `export const changed = ${i};\n`);
      t = performance.now();
      await store.snapshot(`runs/b/steps/${i}`, `step ${i}`);
      step.push(performance.now() - t);
    }
    t = performance.now();
    const p = await store.preview(first.commit);
    await store.restore(first.commit, p.pre.commit);
    const restoreMs = performance.now() - t;
    return { files: 2000, firstMs, step: summarize(step), restoreMs, restored: p.changes.length };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function main() {
  const load = loadNote();
  const r = renderBench();
  const c = await checkpointBench();
  const body = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${load}.`,
    '',
    `- Streaming render of a ${(r.chars / 1000).toFixed(1)} KB answer in ${r.deltas} deltas: incremental ${r.incremental.toFixed(0)} ms in all (with the final full render) vs the whole text again per delta ${r.whole.toFixed(0)} ms: **${(r.whole / r.incremental).toFixed(1)}× less work**.`,
    `- Checkpoints on a ${c.files}-file workspace: first snapshot ${c.firstMs.toFixed(0)} ms; a snapshot after a 1-file change (each agent step) p50 ${c.step.p50.toFixed(0)} ms, p95 ${c.step.p95.toFixed(0)} ms (${(c.firstMs / c.step.p50).toFixed(0)}× cheaper than the first, the index is the stat cache); preview + restore of ${c.restored} files ${c.restoreMs.toFixed(0)} ms.`,
  ].join('\n');
  process.stdout.write(`${body}\n`);
  writeSection(resolve(__dirname, '../../docs/performance.md'), 'chat', body);
}

void main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
