/**
 * `npm run bench`: a 200-step run against a 32k window. runAgent runs for
 * real against the scripted server (HTTP + SSE, the real `openai` client),
 * which enforces the window the way vLLM does and counts tokens with its own
 * stand-in tokenizer; the tools are stubbed with outputs of realistic sizes
 * (a few hundred bytes to 30 KB), since what is measured is the context, not
 * the tools. Reported: prompt tokens per step (and that prompt + max_tokens
 * stayed under the window every step), the compactions and what they cost,
 * and the byte-identical prefix consecutive requests share (the server's
 * prefix cache), between compactions and across them. Figures go to
 * docs/performance.md between the BENCH:context markers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runAgent, type AgentEvent, type ToolExecutor } from '../core/agent/loop';
import { ModelClient } from '../core/model/client';
import type { TextFormatId } from '../core/model/formats';
import { ScriptedModelServer } from '../testkit/scripted-server';
import { countPromptTokens } from '../testkit/prompt-tokens';
import type { ChatRequestBody, ScriptedToolCall } from '../testkit/scripted-turns';
import { textOf } from '../testkit/text';
import type { CompactionEvent } from '../core/schema/trajectory';
import { defaultWorkflow } from '../core/workflow/load';
import { machineLine, writeSection } from './report';
import { loadNote, summarize } from './stats';

const WINDOW = 32_768;
const STEPS = 200;

/** Deterministic text that looks like what tools return: code and log lines. */
function output(bytes: number, seed: number): string {
  const words = [
    'const',
    'value',
    'return',
    'import',
    'export',
    'function',
    'if',
    'else',
    'await',
    'error',
    'test',
    'src/lib/util.ts',
    '=>',
    '{',
    '}',
    '(',
    ')',
    ';',
    '42',
    'ok',
  ];
  let x = seed * 2654435761;
  const out: string[] = [];
  let n = 0;
  while (n < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    const w = words[x % words.length]!;
    out.push(w);
    n += w.length + 1;
    if (x % 9 === 0) {
      out.push('\n');
      n++;
    }
  }
  return out.join(' ');
}

/** The sizes a coding run's results come in: mostly small, now and then a big file or log. */
const SIZES = [400, 1200, 300, 2500, 600, 8000, 900, 30_000, 500, 1500];

interface Seen {
  prompt: string;
  tokens: number;
  max: number;
}

/** The prompt as a Qwen-style template lays it out, for measuring the shared prefix. */
function rendered(body: ChatRequestBody): string {
  const head = body.tools?.length ? `<tools>${JSON.stringify(body.tools)}</tools>` : '';
  return (
    head +
    (body.messages ?? [])
      .map(
        (m) =>
          `<|im_start|>${m.role}\n${typeof m.content === 'string' ? m.content : ''}${m.tool_calls ? JSON.stringify(m.tool_calls) : ''}<|im_end|>\n`,
      )
      .join('')
  );
}

function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

async function oneRun(format: 'native' | TextFormatId) {
  const ws = mkdtempSync(join(tmpdir(), 'lar-bench-context-'));
  const agentRequests: Seen[] = [];
  const summaryRequests: Seen[] = [];
  let step = 0;
  const server = new ScriptedModelServer({
    flavor: 'vllm',
    contextLength: WINDOW,
    enforceWindow: true,
    script: [],
    respond: (body) => {
      const seen = { prompt: rendered(body), tokens: countPromptTokens(body), max: body.max_tokens ?? 0 };
      if (textOf(body.messages?.[0]?.content).startsWith('You write the working notes')) {
        summaryRequests.push(seen);
        return {
          content:
            '## Task\n- keep the tests passing\n## Plan\n- read, edit, test\n## What was tried\n- read the library files\n## Files changed\n- none\n## Current stage\n- explore\n## What failed\n- nothing',
        };
      }
      agentRequests.push(seen);
      const i = step++;
      const call: ScriptedToolCall =
        i % 5 === 4
          ? { name: 'run_command', arguments: { command: `npm test -- --grep case${i}` } }
          : i % 7 === 3
            ? { name: 'search', arguments: { pattern: `value${i}` } }
            : { name: 'read_file', arguments: { path: `src/file${i % 40}.ts` } };
      return format === 'native'
        ? { toolCalls: [call], ...(i % 4 === 0 ? { content: `Looking at step ${i}.` } : {}) }
        : { toolCalls: [call], toolCallsAsText: format };
    },
  });
  const endpoint = await server.start();
  const compactions: { event: CompactionEvent; beforeRequest: number }[] = [];
  let calls = 0;
  const execute: ToolExecutor = () => {
    const size = SIZES[calls % SIZES.length]!;
    return Promise.resolve({
      status: 'ok',
      result: { exitCode: 0, completion: 'marker' },
      observation: output(size, calls++),
    });
  };
  try {
    const wf = defaultWorkflow();
    const t0 = performance.now();
    const result = await runAgent({
      task: 'Keep the tests passing while reading through the library',
      workflow: wf,
      workflowRef: 'builtin:default-coding',
      model: new ModelClient({
        endpoint,
        model: 'LAR-9B',
        retries: 0,
        toolFormat: format === 'native' ? 'auto' : format,
      }),
      modelInfo: { name: 'LAR-9B', endpoint },
      workspace: ws,
      trajectoryPath: join(ws, 'bench.lar.jsonl'),
      execute,
      runOutcomeCheck: () => Promise.resolve({ type: 'outcome', command: 'true', exitCode: 0 }),
      toolFormat: format === 'native' ? 'auto' : format,
      onEvent: (e: AgentEvent) => {
        if (e.kind === 'compaction') compactions.push({ event: e.event, beforeRequest: agentRequests.length });
      },
      limits: { maxSteps: STEPS },
    });
    const wall = performance.now() - t0;
    if (result.summary.steps !== STEPS)
      throw new Error(
        `the run went wrong: ${result.endReason} ${result.detail ?? ''} after ${result.summary.steps} steps`,
      );
    const boundaries = new Set(compactions.map((c) => c.beforeRequest));
    const between: number[] = [];
    const across: number[] = [];
    /** Pairs between compactions where the earlier request is, byte for byte, the start of the later one. */
    let whole = 0;
    for (let i = 1; i < agentRequests.length; i++) {
      const shared = sharedPrefix(agentRequests[i - 1]!.prompt, agentRequests[i]!.prompt);
      (boundaries.has(i) ? across : between).push(shared / agentRequests[i]!.prompt.length);
      if (!boundaries.has(i) && shared === agentRequests[i - 1]!.prompt.length) whole++;
    }
    const fits = agentRequests.every((r) => r.tokens + r.max <= WINDOW);
    const refused =
      server.requests.filter((q) => q.path === '/v1/chat/completions').length -
      agentRequests.length -
      summaryRequests.length;
    return { format, agentRequests, summaryRequests, compactions, between, across, whole, fits, refused, wall };
  } finally {
    await server.stop();
    rmSync(ws, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const load = loadNote();
  const runs = [await oneRun('native'), await oneRun('qwen3_5')];
  const rows = runs.map((r) => {
    const tokens = summarize(r.agentRequests.map((x) => x.tokens));
    const peak = Math.max(...r.agentRequests.map((x) => x.tokens + x.max));
    const between = summarize(r.between.map((x) => x * 100));
    const all = summarize([...r.between, ...r.across].map((x) => x * 100));
    const cost = r.compactions.reduce((n, c) => n + (c.event.durationMs ?? 0), 0);
    const summarized = r.compactions.filter((c) => c.event.summarized > 0).length;
    const summaryTokens = summarize(r.summaryRequests.map((x) => x.tokens));
    return {
      r,
      line: `| ${r.format === 'native' ? 'native (auto)' : `text: ${r.format}`} | ${r.agentRequests.length} | ${Math.round(tokens.p50)} / ${Math.round(tokens.p95)} / ${Math.max(...r.agentRequests.map((x) => x.tokens))} | ${peak} ${r.fits ? '≤' : '>'} ${WINDOW} | ${r.refused} | ${r.compactions.length} (${summarized} with a note) | ${cost.toFixed(0)} ms, ${r.summaryRequests.length} note requests of p50 ${Math.round(summaryTokens.p50 || 0)} tokens | ${between.mean.toFixed(1)} % (min ${Math.min(...r.between.map((x) => x * 100)).toFixed(1)} %) | ${r.whole} of ${r.between.length} | ${all.mean.toFixed(1)} % |`,
    };
  });
  const met = runs.every((r) => r.fits) && rows.every(({ r }) => summarize(r.between.map((x) => x * 100)).mean >= 90);
  const body = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()} (${load}); one run of ${STEPS} steps per format against a ${WINDOW}-token window enforced as vLLM does (its refusal body and wording), tool outputs of ${Math.min(...SIZES)} B to ${Math.max(...SIZES) / 1000} KB.`,
    '',
    '| format | agent requests | prompt tokens p50 / p95 / max (server count) | peak prompt + max_tokens | refusals | compactions | their cost (time; note requests) | shared prefix between compactions, mean | earlier request wholly the prefix | shared prefix, all steps |',
    '|---|---:|---:|---:|---:|---:|---|---:|---:|---:|',
    ...rows.map((x) => x.line),
    '',
    `Target: the byte-identical prefix consecutive requests share between compactions ≥ 90 % — ${met ? 'met' : 'not met'}; prompt + max_tokens under the window at every step — ${runs.every((r) => r.fits) ? 'met' : 'not met'}.`,
  ].join('\n');
  writeSection(resolve(__dirname, '../../docs/performance.md'), 'context', body);
  console.log(body);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
