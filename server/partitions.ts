/**
 * A trajectory's diagnostics split in three parts the client keeps apart (one pull-diagnostics identifier
 * each), so that a live append re-sends the last few lines' diagnostics and not the whole run's: LSP
 * replaces a document's diagnostics wholesale per identifier, never by line.
 */

/** The identifiers, oldest lines first. The run-wide diagnostics (open visit, outcome) always ride with `live`. */
export const PARTITION_IDS = ['lar.settled', 'lar.recent', 'lar.live'] as const;
export type PartitionIndex = 0 | 1 | 2;
export const SETTLED = 0;
export const RECENT = 1;
export const LIVE = 2;

/** Lines `live` holds before they move to `recent`: an append re-sends at most this many lines' diagnostics. */
export const LIVE_MAX = 128;
/** Lines `recent` holds before they move to `settled`: re-sent once every LIVE_MAX appends. */
export const RECENT_MAX = 4096;

let serials = 0;

/**
 * Where each part begins and how often it changed. Result ids carry a serial of their own so an id from
 * another run of the same document (closed and opened again, verified from scratch) never matches.
 */
export class Partitions {
  /** settled = [0, recentFrom), recent = [recentFrom, liveFrom), live = [liveFrom, ∞). */
  private recentFrom = 0;
  private liveFrom = 0;
  private readonly versions = [0, 0, 0];
  /** Counts every change: the result id of a client that pulls the whole document under one identifier. */
  private whole = 0;
  private readonly serial = ++serials;

  /**
   * Lines from `from` on changed and the document now has `lines` lines; `all`: every diagnostic may have
   * changed (the backend, or the run's outcome, which turns errors into warnings). Returns the parts that
   * changed. A change in an older part moves everything after it into that part: it is re-sent anyway.
   */
  changed(from: number, lines: number, all = false): PartitionIndex[] {
    let touched: PartitionIndex[];
    if (all || from === 0 || from < this.recentFrom) {
      this.recentFrom = this.liveFrom = lines;
      touched = [SETTLED, RECENT, LIVE];
    } else if (from < this.liveFrom) {
      this.liveFrom = lines;
      touched = [RECENT, LIVE];
    } else if (lines - this.liveFrom > LIVE_MAX) {
      this.liveFrom = lines;
      touched = [RECENT, LIVE];
    } else {
      touched = [LIVE];
    }
    if (this.liveFrom - this.recentFrom > RECENT_MAX) {
      this.recentFrom = this.liveFrom;
      touched = [SETTLED, RECENT, LIVE];
    }
    for (const k of touched) this.versions[k]!++;
    this.whole++;
    return touched;
  }

  /** The 0-based lines part `k` holds: [start, end). */
  lines(k: PartitionIndex, lineCount: number): [number, number] {
    const bounds = [0, this.recentFrom, this.liveFrom, Infinity];
    return [Math.min(bounds[k]!, lineCount), Math.min(bounds[k + 1]!, lineCount)];
  }

  /** The result id of part `k`, or of the whole document (`undefined`). */
  resultId(k: PartitionIndex | undefined): string {
    return k === undefined ? `${this.serial}.all.${this.whole}` : `${this.serial}.${k}.${this.versions[k]}`;
  }
}

/** The part an identifier names, or undefined for an identifier that is not ours. */
export function partitionOf(identifier: string | undefined): PartitionIndex | undefined {
  const k = PARTITION_IDS.indexOf(identifier as (typeof PARTITION_IDS)[number]);
  return k < 0 ? undefined : (k as PartitionIndex);
}
