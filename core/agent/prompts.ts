/**
 * The words the agent is given: the system prompt, the notes added to the user's messages, and what
 * the model reads after a step; apart from the loop so a resumed chat rebuilds them the same way.
 */
import type { ModelToolCall } from '../model/reply';
import type { ToolSpec } from '../model/formats';
import { toolDefinitions } from '../schema/tool-definitions';
import type { OutcomeEvent, RestoreEvent } from '../schema/trajectory';
import { externalJudge, outcomeCommand, transitionsFrom, type Workflow } from '../schema/workflow';
import { CHECKS } from '../verifier/checks';
import type { VerifierState } from '../verifier/state';
import type { StepResult } from '../verifier/types';
import { rulesPrompt, type Rules } from './rules';

function systemPrompt(wf: Workflow): string {
  const stages = wf.stages.map((s) => {
    const exits = s.exit.map((c) => {
      switch (c.kind) {
        case 'tool_succeeded':
          return `${c.tool} succeeded at least ${c.atLeast} time(s)`;
        case 'file_changed':
          return c.pattern ? `a file matching ${c.pattern} changed` : 'a file changed';
        case 'command_succeeded':
        case 'command_ran':
          return `a command matching "${c.pattern}" ${c.kind === 'command_succeeded' ? 'succeeded' : 'ran'}${c.afterLastChange ? ' after the last file change' : ''}`;
        case 'outcome_ran':
          return `the check itself (${outcomeCommand(wf)?.command ?? 'none: the outcome is judged after the run'}, exactly as written, with no cwd) ran its tests${c.afterLastChange ? ' after the last file change' : ''}, pass or fail`;
      }
    });
    const next = transitionsFrom(wf, s.id);
    return `- ${s.id}${wf.terminal.includes(s.id) ? ' (terminal: submit from here)' : ''}: tools ${s.tools.join(', ')}; at most ${s.budget} calls per visit${exits.length ? `; done when ${exits.join(' and ')}` : ''}${next.length ? `; may move to ${next.join(', ')}` : ''}${s.description ? `. ${s.description}` : ''}`;
  });
  return [
    'You are a coding agent working in a workspace through tools. Every tool call is checked against a formal workflow before it runs; a call the workflow does not allow is blocked and you are told why.',
    `Workflow "${wf.id}"${wf.description ? `: ${wf.description}` : ''}. You start in stage "${wf.start}".`,
    'Stages:',
    ...stages,
    ...outcomeLines(wf),
    'Call tools; do not only describe what you would do.',
  ].join('\n');
}

/** How a run ends: submit, then the workflow's own check or a judge outside the run. */
function outcomeLines(wf: Workflow): string[] {
  const moves =
    'Move between stages with enter_stage; use only the tools of the current stage; finish with submit from a terminal stage.';
  const check = outcomeCommand(wf);
  return check
    ? [
        `${moves} After submit the workflow runs its own check:`,
        `  ${check.command} (must exit ${check.expectExitCode}).`,
      ]
    : [`${moves} After submit the run ends and ${externalJudge(wf)} judges the outcome: leave the task done first.`];
}

/** What the model reads of submit (a chat rebuilt from the file reads the same). */
export function submittedText(wf: Workflow | undefined): string {
  const judge = wf && externalJudge(wf);
  return judge === undefined
    ? 'Submitted. The workflow outcome check runs now.'
    : `Submitted. The run ends here; ${judge} judges the outcome after it.`;
}

/** The system prompt of a run: the workflow's, then the workspace's rules. */
export function systemFor(wf: Workflow, rules?: Rules): string {
  const r = rules ? rulesPrompt(rules) : '';
  return r ? `${systemPrompt(wf)}\n\n${r}` : systemPrompt(wf);
}

/** The tools as a text format describes them to the model. */
export function toolSpecs(): ToolSpec[] {
  return toolDefinitions().map((t) => t.function);
}

/** Told to the model with a follow-up: the verifier's stage is the start stage again. */
export function newRunNote(wf: Workflow): string {
  return `[Lean4 Agentic: this message starts a new run of the workflow; its verifier starts again in stage "${wf.start}".]`;
}

/** A message without the note newRunNote added to it (a restored message asked again gets a fresh one). */
export function stripNewRunNote(text: string): string {
  // Only the new-run note: a restore's note stays with the message (the model must still learn of it).
  return text.replace(/(\n\n|\n)\[Lean4 Agentic: this message starts a new run of the workflow; [^\]]*\]$/, '');
}

/** Told to the model when the user put the workspace back before this message. */
export function restoreNote(r: RestoreEvent): string {
  if (r.undo)
    return '[Lean4 Agentic: before this message the user undid a restore: the workspace is back as it was before that restore.]';
  const what = [
    r.reverted.length ? `${r.reverted.length} changed back` : '',
    r.deleted.length ? `${r.deleted.length} deleted` : '',
    r.restored.length ? `${r.restored.length} brought back` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return `[Lean4 Agentic: before this message the user restored the workspace to how it was before step ${r.step ?? '?'}${r.run ? ` of ${r.run}` : ''}${what ? ` (files: ${what})` : ''}: what was done after that point is undone on disk.]`;
}

/** Added to submit's result once the outcome check ran (a follow-up's model knows how it went). */
export function outcomeLine(outcome: OutcomeEvent, passed: boolean): string {
  return `\nOutcome check \`${outcome.command}\`: ${outcome.exitCode === undefined || outcome.exitCode === null ? 'no exit code' : `exit ${outcome.exitCode}`}, ${passed ? 'passed' : 'failed'}.`;
}

/** What the model reads after enter_stage. */
export function enteredStage(wf: Workflow, target: string): string {
  const s = wf.stages.find((x) => x.id === target);
  return s ? `Now in stage "${target}". Tools: ${s.tools.join(', ')}.` : `There is no stage "${target}".`;
}

/** What the verifier made of a step, told to the model after the call's own result so it can correct course. */
export function verifierFeedback(step: StepResult, stageChanged: boolean): string {
  const failed = step.verdicts.filter((v) => !v.ok && v.check !== 'tool.succeeded');
  const notes = failed.length
    ? `\nVerifier: ${failed.map((v) => `${v.check} (${CHECKS[v.check].severity}): ${v.reason}`).join('; ')}`
    : '';
  const moved =
    step.stageVisit && stageChanged ? `\nStage "${step.stageVisit.stage}" scored ${step.stageVisit.reward}.` : '';
  return `${notes}${moved}`;
}

/** A call as a person reads it in a message: the tool and its arguments (as the model wrote them), shortened. */
export function describeCall(c: ModelToolCall): string {
  const args = c.argsError !== undefined ? (c.argsText ?? '') : JSON.stringify(c.args ?? {});
  return `${c.name || '(no tool name)'} ${args.length > 200 ? `${args.slice(0, 200)}…` : args}`;
}

/** A call that started, as the end line of an interrupted run names it: the command, else the tool and its path. */
export function callInFlight(tool: string, args: unknown): string {
  const a = (args && typeof args === 'object' ? args : {}) as Record<string, unknown>;
  const clip = (t: string) => (t.length > 200 ? `${t.slice(0, 200)}…` : t);
  if (tool === 'run_command' && typeof a.command === 'string') return `the command \`${clip(a.command)}\``;
  return typeof a.path === 'string' ? `${tool} ${clip(a.path)}` : tool;
}

/** What the host knows for certain about the run so far, for a compaction's note. */
export function hostFacts(
  state: VerifierState,
  wf: Workflow,
  touched: ReadonlySet<string>,
  failed: readonly string[],
): string {
  const s = state.summary();
  const files = [...touched].sort();
  const stage = state.currentStage;
  const tools = wf.stages.find((x) => x.id === stage)?.tools ?? [];
  return [
    'Recorded by Lean4 Agentic (exact, from the run itself):',
    `- current stage: ${stage}${tools.length ? ` (tools: ${tools.join(', ')})` : ''}`,
    `- tool calls so far: ${s.steps}`,
    `- files changed so far: ${files.length ? files.slice(0, 40).join(', ') + (files.length > 40 ? ` and ${files.length - 40} more` : '') : 'none'}`,
    ...failed.slice(-5).map((f) => `- failed: ${f}`),
  ].join('\n');
}
