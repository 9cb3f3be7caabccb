import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ChatRequestBody, ScriptedToolCall, ScriptedTurn } from './scripted-turns';
import type { TextFormatId } from '../core/model/formats';
import { textOf } from './text';

/**
 * Stand-ins for a model, for the scripted server's `respond`: they act on
 * what the request carries, as a model does (not on a fixed list of turns).
 */

const root = resolve(__dirname, '../..');

/** A workspace whose `node test.js` fails until sum.js adds, with a 60 KB build log to read, and a workflow checking that command. */
export function logWorkspace(prefix: string): { ws: string; workflow: string } {
  const ws = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(ws, 'sum.js'), 'module.exports = (a, b) => a - b;\n');
  writeFileSync(join(ws, 'test.js'), "if (require('./sum')(2, 3) !== 5) process.exit(1);\nconsole.log('PASS');\n");
  const lines: string[] = [];
  for (let i = 0; lines.join('\n').length < 60_000; i++)
    lines.push(
      `[build ${String(i).padStart(5, '0')}] compiling module_${i % 97}.ts … ok (${(i * 7) % 1000} ms), cache ${i % 3 ? 'hit' : 'miss'} for src/feature_${i % 31}/index.ts`,
    );
  writeFileSync(join(ws, 'build.log'), `${lines.join('\n')}\n`);
  const wf = JSON.parse(readFileSync(resolve(root, 'core/workflow/default-coding.larflow.json'), 'utf8')) as {
    outcome: { command: string };
  };
  wf.outcome.command = 'node test.js';
  const workflow = join(ws, 'fix.larflow.json');
  writeFileSync(workflow, JSON.stringify(wf));
  return { ws, workflow };
}

const SUMMARY = [
  '## Task',
  '- make `node test.js` pass',
  '## Plan',
  '- read the build log, fix sum.js, run the test, submit',
  '## What was tried',
  '- read build.log several times: no error in it',
  '## Files changed',
  '- none yet',
  '## Current stage',
  '- explore',
  '## What failed',
  '- nothing so far',
].join('\n');

/** Whether a request is the agent asking for a compaction note (it carries no tools and asks for the notes). */
export function isSummaryRequest(body: ChatRequestBody): boolean {
  return textOf(body.messages?.[0]?.content).startsWith('You write the working notes');
}

export interface LongTask {
  respond: (body: ChatRequestBody) => ScriptedTurn;
  /** Prompt sizes of the task's requests as sent (characters of the rendered messages), and how many notes were asked. */
  stats: { requests: number; summaries: number };
}

/**
 * A model working a long task: it reads the 60 KB log `reads` times (the
 * window fills), then fixes sum.js, runs the test and submits; asked for a
 * compaction note, it writes one under the asked headings.
 */
export function longTaskModel(reads: number, format: 'native' | TextFormatId = 'native'): LongTask {
  const plan: ScriptedToolCall[] = [];
  for (let i = 0; i < reads; i++)
    plan.push(
      i % 3 === 2
        ? { name: 'search', arguments: { pattern: `module_${i}`, path: 'build.log' } }
        : { name: 'read_file', arguments: { path: 'build.log' } },
    );
  plan.push(
    { name: 'read_file', arguments: { path: 'sum.js' } },
    { name: 'enter_stage', arguments: { stage: 'edit' } },
    { name: 'edit_file', arguments: { path: 'sum.js', search: 'a - b', replace: 'a + b' } },
    { name: 'enter_stage', arguments: { stage: 'verify' } },
    { name: 'run_command', arguments: { command: 'node test.js' } },
    { name: 'submit', arguments: { summary: 'sum adds' } },
  );
  const stats = { requests: 0, summaries: 0 };
  let step = 0;
  return {
    stats,
    respond: (body) => {
      if (isSummaryRequest(body)) {
        stats.summaries++;
        return { content: SUMMARY };
      }
      stats.requests++;
      const call = plan[Math.min(step++, plan.length - 1)]!;
      return format === 'native' ? { toolCalls: [call] } : { toolCalls: [call], toolCallsAsText: format };
    },
  };
}

/**
 * A model that knows the tools only from its system prompt, as a model served
 * without a tool parser does: it finds each tool's parameter names in the
 * Qwen3.5 tools list (`{"type": "function", "function": {"name": …,
 * "parameters": {"properties": {…}}}}`) and writes its calls in the XML form
 * with those names, in their order. A prompt that did not list them would
 * leave it unable to edit anything.
 */
export function promptReadingModel(): {
  respond: (body: ChatRequestBody) => ScriptedTurn;
  found: Record<string, string[]>;
} {
  const found: Record<string, string[]> = {};
  let step = 0;
  const paramsOf = (system: string, tool: string): string[] => {
    for (const line of system.split('\n')) {
      if (!line.startsWith('{"type": "function"')) continue;
      const t = JSON.parse(line) as {
        function: { name: string; parameters?: { properties?: Record<string, unknown> } };
      };
      if (t.function.name === tool) return Object.keys(t.function.parameters?.properties ?? {});
    }
    return [];
  };
  const call = (name: string, values: string[], system: string): string => {
    const names = paramsOf(system, name);
    found[name] = names;
    const params = values.map((v, i) => `<parameter=${names[i] ?? `arg${i}`}>\n${v}\n</parameter>\n`).join('');
    return `<tool_call>\n<function=${name}>\n${params}</function>\n</tool_call>`;
  };
  return {
    found,
    respond: (body) => {
      const system = textOf(body.messages?.[0]?.content);
      const steps: [string, string[]][] = [
        ['read_file', ['sum.js']],
        ['enter_stage', ['edit']],
        ['edit_file', ['sum.js', 'a - b', 'a + b']],
        ['enter_stage', ['verify']],
        ['run_command', ['node test.js']],
        ['submit', []],
      ];
      const [name, values] = steps[Math.min(step++, steps.length - 1)]!;
      return { content: `Step ${step}.\n\n${call(name, values, system)}` };
    },
  };
}
