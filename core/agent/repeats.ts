/** The loop breaker, apart from the loop so a resumed chat counts repeats the way the run did. */
import type { ToolCallEvent } from '../schema/trajectory';
import { changedFiles } from '../verifier/events';
import { callKey } from '../verifier/state';
import type { StepResult } from '../verifier/types';

/**
 * The loop breaker: the same failing call (as tool.not_repeated sees it)
 * made again with no file changed in between. The model is warned the time
 * before the last; the last ends the run.
 */
export class RepeatedFailures {
  private readonly counts = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** After a step: how often this call has now failed in a row of no changes, what the model is told, whether the run must stop. */
  observe(
    event: ToolCallEvent,
    step: StepResult,
    argsText?: string,
  ): { times: number; warning: string; stop: boolean } {
    if (changedFiles(event).length) this.counts.clear();
    if (!step.verdicts.some((v) => v.check === 'tool.succeeded' && !v.ok))
      return { times: 0, warning: '', stop: false };
    // Malformed arguments are all `null` to the verifier; here only the same text is the same call.
    const key =
      event.argsError !== undefined
        ? `${callKey(event.tool, null)}\u0000${argsText ?? event.argsError}`
        : callKey(event.tool, event.args);
    const times = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, times);
    if (times >= this.max) return { times, warning: '', stop: true };
    const warning =
      times !== this.max - 1
        ? ''
        : times > 1
          ? `\nThis exact call has now failed ${times} times with no file changed in between: you are looping. Making it again unchanged ends the run; change something first, or do something else.`
          : '\nMaking this exact call again with no file changed in between ends the run.';
    return { times, warning, stop: false };
  }
}
