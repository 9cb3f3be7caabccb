/**
 * The reviews of what runs changed, made at each run's end from its checkpoints (the run's first one and a
 * snapshot of its end) and kept in the workspace state, so a card and its Kept / Undone marks come back after a
 * reload. The chat names a review by its run's file and a file by the id given here, never by a path.
 */
import type * as vscode from 'vscode';
import { z } from 'zod';
import type { CheckpointStore } from '../../core/checkpoints/store';
import type { ToWebview } from '../../core/protocol/chat';
import {
  captureNote,
  MAX_REVIEW_FILES,
  reviewFiles,
  RunReview,
  type LaterFile,
  type ReviewFile,
} from '../../core/protocol/run-review';
import { CheckpointId } from '../../core/schema/trajectory';

/** A review and the two checkpoints it compares. */
const StoredReview = z.object({ review: RunReview, start: CheckpointId, end: CheckpointId }).strict();
export type StoredReview = z.infer<typeof StoredReview>;

const REVIEWS_KEY = 'lean4Agentic.reviews';
/** The reviews kept (the newest runs'): older cards come back without their buttons' state. */
const MAX_KEPT = 30;

export interface RunEnd {
  store: CheckpointStore;
  /** The run's trajectory file name: the review's name. */
  run: string;
  runId: string;
  /** The run's first checkpoint (before its first step that could change files). */
  start: string;
  /** The files that run later the sandbox found changed. */
  later: readonly LaterFile[];
}

export class RunReviews {
  constructor(private readonly state: vscode.Memento) {}

  private all(): StoredReview[] {
    const parsed = z.array(StoredReview).safeParse(this.state.get(REVIEWS_KEY));
    return parsed.success ? parsed.data : [];
  }

  private async put(r: StoredReview): Promise<void> {
    const rest = this.all().filter((x) => x.review.run !== r.review.run);
    await this.state.update(REVIEWS_KEY, [...rest, r].slice(-MAX_KEPT));
  }

  /** What a run changed, from its first checkpoint to now (a snapshot of its end is taken); undefined: nothing. */
  async finish(end: RunEnd): Promise<StoredReview | undefined> {
    const snap = await end.store.snapshot(`runs/${end.runId}/end`, `${end.runId}: end of the run`);
    const changed = await end.store.diffFiles(end.start, snap.commit);
    const files = reviewFiles(changed, end.later);
    if (!files.length) return undefined;
    const untracked = files.filter((f) => f.untracked).length;
    const note = captureNote(snap.skipped, snap.nested, untracked);
    const review: RunReview = {
      run: end.run,
      files: files.slice(0, MAX_REVIEW_FILES),
      more: Math.max(0, files.length - MAX_REVIEW_FILES),
      ...(note ? { note } : {}),
    };
    const stored = { review, start: end.start, end: snap.commit };
    await this.put(stored);
    return stored;
  }

  get(run: string): StoredReview | undefined {
    return this.all().find((r) => r.review.run === run);
  }

  /** The review with its files' new states, kept. */
  async update(stored: StoredReview, files: ReviewFile[]): Promise<StoredReview> {
    const next = { ...stored, review: { ...stored.review, files } };
    await this.put(next);
    return next;
  }

  /** The card of a run, for a chat read back from its trajectories. */
  messagesFor(run: string): ToWebview[] {
    const r = this.get(run);
    return r ? [{ type: 'runChanges', review: r.review }] : [];
  }
}
