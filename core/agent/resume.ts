/**
 * A chat from its trajectories: the runs of one thread read back from
 * `.lar/runs` (following each header's `thread.previous`), and the model's
 * conversation rebuilt from them, so a chat survives a reload and an
 * interrupted run can be resumed. What the model read of a result is not in
 * a trajectory (only the tool's recorded output or error), so rebuilt results
 * are those records; everything else (the user's and the model's messages,
 * the calls and their arguments, compaction notes) is as it was.
 */
import { join } from 'node:path';
import { readBoundedText } from '../workspace/bounded-read';
import type {
  CompactionEvent,
  EndEvent,
  Header,
  MessageEvent,
  OutcomeEvent,
  RestoreEvent,
  ToolCallEvent,
  TrajectoryEvent,
} from '../schema/trajectory';
import type { ToolSpec } from '../model/formats';
import { verifyTrajectoryText, type TrajectoryReport, type WorkflowResolver } from '../verifier/verify';
import type { StepResult } from '../verifier/types';
import { Conversation, type Turn, type TurnCall, type TurnResult } from './conversation';
import { SAFETY_CHECKS } from './step';
import { enteredStage, newRunNote, outcomeLine, restoreNote, submittedText, verifierFeedback } from './prompts';
import { RepeatedFailures } from './repeats';
import { recordedUserText } from '../schema/user-message';
import { checkObservation, commandObservation } from '../tools/executor';
import type { Workflow } from '../schema/workflow';
import { RUN_FILE } from '../schema/trajectory';

/** One run of a thread as recorded: its header, its events in order (each with its line and verdicts), how it ended. */
export interface RecordedRun {
  file: string;
  header: Header;
  events: { line: number; event: TrajectoryEvent; step?: StepResult }[];
  end?: EndEvent;
  report: TrajectoryReport;
  bytes: number;
  /** A branch was made from this run before this step: only what came before it belongs to the chat. */
  cutAtStep?: number;
}

/** Where a branch from `step` cuts `run`: the index of the first event of the model's reply that made the step (its words included); undefined when there is no such step. */
function cutIndex(run: RecordedRun, step: number): number | undefined {
  const at = run.events.findIndex((e) => e.step?.step === step && e.event.type === 'tool_call');
  if (at < 0) return undefined;
  const reply = (run.events[at]!.event as ToolCallEvent).reply;
  // The first call of the same reply, then the model's words just before it (they came with the calls).
  let cut = at;
  while (cut > 0 && reply !== undefined) {
    const prev = run.events[cut - 1]!.event;
    if (prev.type === 'tool_call' && prev.reply === reply) cut--;
    else break;
  }
  const before = run.events[cut - 1]?.event;
  if (before?.type === 'message' && before.role === 'assistant') cut--;
  return cut;
}

/**
 * The events of `run` that belong to the chat: all, or for a run branched
 * from, those before the model's reply that made step `cutAtStep` (that
 * reply's words and calls included: the branch asks again from there). A
 * step the run does not have keeps nothing after the header's task.
 */
export function chatEvents(run: RecordedRun): RecordedRun['events'] {
  if (run.cutAtStep === undefined) return run.events;
  const cut = cutIndex(run, run.cutAtStep);
  return cut === undefined ? [] : run.events.slice(0, cut);
}

/**
 * The workspace a branch from `step` goes back to: the checkpoint of the
 * first call from the branch point on that may have changed files (a reply's
 * earlier calls, and read-only ones, took none), or why there is none.
 */
export function branchCheckpoint(run: RecordedRun, step: number): { commit: string } | { error: string } {
  const cut = cutIndex(run, step);
  if (cut === undefined) return { error: `${run.file} has no step ${step}` };
  for (const { event } of run.events.slice(cut)) {
    if (event.type === 'tool_call' && event.checkpoint) return { commit: event.checkpoint };
  }
  return {
    error: `no checkpoint was taken from step ${step} of ${run.file} on (checkpoints are taken before calls that may change files)`,
  };
}

/** The most runs a restored chat reaches back, the largest trajectory it reads, and the most it reads in all. */
export const MAX_THREAD_RUNS = 50;
export const MAX_RUN_BYTES = 8 * 1024 * 1024;
export const MAX_THREAD_BYTES = 16 * 1024 * 1024;

/** Reads one trajectory (bounded), parses and verifies it; undefined when it has no header. */
export function readRun(runsDir: string, file: string, resolve?: WorkflowResolver): RecordedRun | undefined {
  if (!RUN_FILE.test(file)) return undefined;
  const text = readBoundedText(join(runsDir, file), MAX_RUN_BYTES, file);
  const report = verifyTrajectoryText(text, resolve ? { resolve } : {});
  if (!report.header) return undefined;
  const byLine = new Map(report.steps.map((s) => [s.line, s]));
  const bad = new Set(report.lineErrors.map((e) => e.line));
  const events: RecordedRun['events'] = [];
  let end: EndEvent | undefined;
  text.split('\n').forEach((raw, i) => {
    if (i === 0 || !raw.trim()) return;
    let event: TrajectoryEvent;
    try {
      event = JSON.parse(raw) as TrajectoryEvent;
    } catch {
      return;
    }
    if (!event || typeof event !== 'object' || typeof event.type !== 'string') return;
    const line = i + 1;
    // Only lines the verifier read as events (malformed ones are skipped by it too).
    if (bad.has(line)) return;
    events.push({ line, event, ...(byLine.has(line) ? { step: byLine.get(line)! } : {}) });
    if (event.type === 'end') end = event;
  });
  return { file, header: report.header, events, ...(end ? { end } : {}), report, bytes: Buffer.byteLength(text) };
}

/**
 * The runs of the thread that `newest` ends, oldest first: `newest`, then the
 * run its header names as previous, and so on, while they belong to the same
 * thread (at most MAX_THREAD_RUNS; a loop or a missing file ends the chain).
 */
export function readThread(runsDir: string, newest: string, resolve?: WorkflowResolver): RecordedRun[] {
  const chain: RecordedRun[] = [];
  const seen = new Set<string>();
  let file: string | undefined = newest;
  let thread: string | undefined;
  let bytes = 0;
  while (file && !seen.has(file) && chain.length < MAX_THREAD_RUNS) {
    seen.add(file);
    let run: RecordedRun | undefined;
    try {
      run = readRun(runsDir, file, resolve);
    } catch {
      break;
    }
    if (!run) break;
    const id = run.header.thread?.id;
    if (thread !== undefined && id !== thread) break;
    // A long chat comes back from its latest runs: the oldest that do not fit are left out.
    bytes += run.bytes;
    if (chain.length > 0 && bytes > MAX_THREAD_BYTES) break;
    thread = id;
    const next = chain[0];
    if (next?.header.thread?.step !== undefined) run.cutAtStep = next.header.thread.step;
    chain.unshift(run);
    if (id === undefined) break;
    file = run.header.thread?.previous;
  }
  return chain;
}

/** A rebuilt result whose text the trajectory does not keep (file tools record what they did, not what they read). */
export const NOT_RECORDED =
  '[This result is not kept in the trajectory the chat was restored from: the call succeeded; make it again if you need what it returned.]';

/**
 * What the model read back for a recorded call, as the loop wrote it where
 * the file allows: the tool's recorded output or error (the loop may have
 * shown a capped form), why a call did not run, then the verifier's feedback.
 * A warning about a repeated failing call is not recorded, so not rebuilt.
 */
export function recordedResult(e: ToolCallEvent, step: StepResult | undefined, wf: Workflow | undefined): string {
  const failing = step?.verdicts.filter((v) => !v.ok) ?? [];
  let base: string;
  switch (e.status) {
    case 'blocked': {
      const why =
        failing.find((v) => SAFETY_CHECKS.has(v.check)) ??
        failing.find((v) => v.check !== 'tool.not_repeated') ??
        failing[0];
      base = `Blocked by the workflow verifier, not run${why ? `: ${why.reason}` : ''}`;
      break;
    }
    case 'denied':
      base = 'The user rejected this call at the approval prompt. Do something else.';
      break;
    default: {
      const stage = (e.args as { stage?: unknown } | null)?.stage;
      const command = (e.args as { command?: unknown } | null)?.command;
      const error = e.result?.error || undefined;
      if (e.tool === 'enter_stage' && e.status === 'ok' && typeof stage === 'string' && wf)
        base = enteredStage(wf, stage);
      else if (e.tool === 'submit' && e.status === 'ok') base = submittedText(wf);
      else if (error !== undefined) base = e.tool === 'run_command' ? `Not run: ${error}` : `Error: ${error}`;
      else if (e.tool === 'run_command' && typeof command === 'string') {
        // As the loop showed it: the command, its output as recorded, how it ended, what it changed.
        base = e.result?.ranAsCheck
          ? checkObservation(
              command,
              e.result.output ?? '',
              e.result.completion,
              e.result.exitCode,
              e.result.filesChanged ?? [],
            )
          : commandObservation(
              command,
              e.result?.output ?? '',
              {
                completion: e.result?.completion,
                exitCode: e.result?.exitCode,
                waitingForInput: e.result?.waitingForInput,
                shellRestarted: e.result?.shellRestarted,
                killed: e.result?.killed,
              },
              e.result?.filesChanged ?? [],
            );
      } else base = e.result?.output || (e.status === 'ok' ? NOT_RECORDED : `The call ended with status ${e.status}.`);
    }
  }
  if (!step) return base;
  const stage = (e.args as { stage?: unknown } | null)?.stage;
  const stayed = e.tool === 'enter_stage' && stage === step.stage;
  return `${base}${verifierFeedback(step, step.stageVisit !== undefined && !stayed)}`;
}

/**
 * The model's conversation after `runs` (oldest first), under today's system
 * prompt: the first run's task, then every user message, every answer and
 * every call with its recorded result; a compaction's note stands for the
 * turns it replaced, as it did in the run. Calls the model made together
 * without a word between them are one turn.
 */
export function rebuildConversation(
  runs: readonly RecordedRun[],
  system: string,
  tools: readonly ToolSpec[],
): Conversation {
  const first = runs[0];
  if (!first) throw new Error('rebuildConversation: no runs');
  const rebuild = new Rebuild(system, tools, recordedUserText(first.header.task, first.header.parts));
  runs.forEach((run, r) => rebuild.replay(run, r));
  return rebuild.conv;
}

/** A conversation being rebuilt, its latest model turn open to the calls recorded after it. */
class Rebuild {
  conv: Conversation;
  private open: (Turn & { kind: 'assistant' }) | undefined;
  /** The reply number of the open turn's calls (files from before `reply` was recorded have none: their calls group). */
  private openReply: number | undefined;
  private results: TurnResult[] = [];
  /** Of the run being replayed: whether its task came, its repeated failing calls, the restore before it. */
  private sawTask = false;
  private repeats = new RepeatedFailures(3);
  private restored: RestoreEvent | undefined;

  constructor(
    private readonly system: string,
    private readonly tools: readonly ToolSpec[],
    task: string,
  ) {
    this.conv = new Conversation(system, task, tools);
  }

  /** Adds the `r`-th run of the thread. */
  replay(run: RecordedRun, r: number): void {
    this.sawTask = false;
    // The warnings the loop added for a failing call made again: replayed with the run's own limit.
    this.repeats = new RepeatedFailures(run.header.limits?.maxRepeatedFailures ?? 3);
    this.restored = undefined;
    for (const { line, event, step } of chatEvents(run)) {
      switch (event.type) {
        case 'message':
          if (event.role === 'user') this.user(recordedUserText(event.content, event.parts), run, r);
          else if (event.role === 'assistant') this.answer(event);
          break;
        case 'tool_call':
          // A call recorded without an id gets one unique in the conversation.
          this.call(event, step, run, event.id ?? `call_r${r}_l${line}`);
          break;
        case 'compaction':
          this.compaction(event);
          break;
        case 'restore':
          this.restored = event;
          break;
        case 'outcome':
          this.outcome(event, run);
          break;
        case 'end':
          break;
      }
    }
    this.close();
  }

  private close(): void {
    if (this.open && this.open.calls.length) this.conv.push({ kind: 'results', results: this.results });
    this.open = undefined;
    this.openReply = undefined;
    this.results = [];
  }

  private user(content: string, run: RecordedRun, r: number): void {
    this.close();
    if (this.sawTask) {
      this.conv.push({ kind: 'user', text: content });
      return;
    }
    // Each run's first user message is its task; the first run's is the conversation's task turn.
    this.sawTask = true;
    if (r === 0) return;
    // As the session does: messages the model never answered were asked again in this one, and
    // a chat the model never answered at all started afresh from it.
    this.conv.takeUnanswered();
    if (this.conv.turns.length <= 2) {
      this.conv = new Conversation(this.system, content, this.tools);
      return;
    }
    // As the run's model read it: a follow-up carries the notes of a restore before it and of a new run.
    const restored = this.restored;
    const notes = `${restored ? `${restoreNote(restored)}\n` : ''}${run.report.workflow ? newRunNote(run.report.workflow) : ''}`;
    this.conv.push({ kind: 'user', text: notes ? `${content}\n\n${notes}` : content });
  }

  private answer(event: MessageEvent): void {
    this.close();
    this.open = {
      kind: 'assistant',
      text: event.content,
      calls: [],
      ...(event.reasoning ? { reasoning: event.reasoning } : {}),
    };
    this.conv.push(this.open);
  }

  private call(event: ToolCallEvent, step: StepResult | undefined, run: RecordedRun, id: string): void {
    // A call of another reply than the open turn's: that reply had no words, and is a turn of its own.
    let open = this.open;
    if (!open || (open.calls.length > 0 && event.reply !== this.openReply)) {
      this.close();
      open = this.open = { kind: 'assistant', text: '', calls: [] };
      this.conv.push(open);
    }
    this.openReply = event.reply;
    const call: TurnCall = {
      id,
      name: event.tool,
      args: event.args,
      ...(event.argsError !== undefined ? { malformed: true } : {}),
    };
    open.calls.push(call);
    const repeat = step ? this.repeats.observe(event, step, event.argsText) : undefined;
    this.results.push({
      callId: id,
      name: event.tool || 'tool',
      content: `${recordedResult(event, step, run.report.workflow)}${repeat?.warning ?? ''}`,
    });
  }

  private compaction(event: CompactionEvent): void {
    this.close();
    if (event.summary && event.summarized > 0) {
      // The note replaced the oldest turns; it is followed by a model turn (a call and its result stay together).
      const turns = this.conv.turns;
      let k = Math.min(event.summarized, turns.length - 2);
      while (2 + k < turns.length && turns[2 + k]!.kind === 'results') k++;
      if (k > 0) this.conv.replace(2, k, { kind: 'summary', text: event.summary });
    }
  }

  private outcome(event: OutcomeEvent, run: RecordedRun): void {
    const results = this.results;
    const last = results[results.length - 1];
    if (last)
      results[results.length - 1] = {
        ...last,
        content: `${last.content}${outcomeLine(event, run.report.summary?.outcome.reward === 1)}`,
      };
  }
}

/** The thread a restored chat continues: its id, the number of its runs, and the last run's file. */
export function threadOf(runs: readonly RecordedRun[]): { id: string; turn: number; previous: string } | undefined {
  const last = runs[runs.length - 1];
  if (!last) return undefined;
  return {
    id: last.header.thread?.id ?? last.file.replace(/\.lar\.jsonl$/, ''),
    turn: last.header.thread?.turn ?? runs.length,
    previous: last.file,
  };
}

/** Whether a run stopped without finishing its work: the editor closed or crashed during it. */
export function wasInterrupted(run: RecordedRun): boolean {
  return !run.end || run.end.reason === 'interrupted';
}
