/**
 * Attributes the wall time of an agent run to its steps. A step's span runs
 * from the start of one model call to the start of the next (for the last
 * step, to the start of the outcome check); everything timed in between —
 * the model call, the tool, the gate, the trajectory write — is charged to
 * that step. What the span holds beyond the model call and the tool is the
 * agent's own overhead.
 */

export const PARTS = ['model', 'tool', 'command', 'gate', 'verify', 'write', 'fsync', 'context', 'events'] as const;
export type Part = (typeof PARTS)[number];

export interface StepTimes extends Record<Part, number> {
  span: number;
  /** span − model − tool. */
  overhead: number;
  tool_name: string;
}

export class StepTimer {
  private starts: number[] = [];
  private parts: Record<Part, number>[] = [];
  private tools: string[] = [];
  private end = NaN;

  /** A model call starts: the previous step's span ends here. */
  startStep(): void {
    this.starts.push(performance.now());
    this.parts.push(Object.fromEntries(PARTS.map((p) => [p, 0])) as Record<Part, number>);
  }

  /** The last step's span ends (the outcome check starts). */
  endRun(): void {
    this.end = performance.now();
  }

  noteTool(name: string): void {
    this.tools[this.starts.length - 1] = name;
  }

  add(part: Part, ms: number): void {
    // Work before the first model call (header, task message) belongs to no step.
    const current = this.parts.at(-1);
    if (current) current[part] += ms;
  }

  time<T>(part: Part, fn: () => T): T {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      this.add(part, performance.now() - t0);
    }
  }

  async timeAsync<T>(part: Part, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.add(part, performance.now() - t0);
    }
  }

  steps(): StepTimes[] {
    return this.starts.map((start, i) => {
      const span = (this.starts[i + 1] ?? this.end) - start;
      const p = this.parts[i]!;
      return { ...p, span, overhead: span - p.model - p.tool, tool_name: this.tools[i] ?? '' };
    });
  }
}

/**
 * Replaces `target[name]` with a timed version until the returned function is
 * called. The agent loop is timed from outside, through the objects it calls,
 * so the code measured is the code that ships.
 */
export function timeMethod(target: object, name: string, timer: StepTimer, part: Part): () => void {
  const holder = target as Record<string, unknown>;
  const original = holder[name] as (...args: unknown[]) => unknown;
  holder[name] = function (this: unknown, ...args: unknown[]) {
    return timer.time(part, () => original.apply(this, args));
  };
  return () => {
    holder[name] = original;
  };
}
