/**
 * What the language server's handlers share: the open documents, one verified run per trajectory, the backend
 * and the client's options, kept in one object so each handler can live in its own file.
 */
import { fileURLToPath } from 'node:url';
import {
  TextDocuments,
  type Connection,
  type Diagnostic,
  type WorkspaceDocumentDiagnosticReport,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { ServerOptions, BackendMethod, type BackendLabel } from '../core/protocol/lsp';
import type { LeanBackend } from '../core/lean';
import { MAX_TRAJECTORY_BYTES, readBoundedText } from '../core/workspace/bounded-read';
import { fileResolver } from '../core/workflow/resolve';
import type { DiagnosticSource } from './diagnostics';
import { Partitions, type PartitionIndex } from './partitions';
import { TrajectoryModel } from './trajectory-model';
import { harborRewardFor } from '../core/harbor/job-folder';

export interface Run {
  model: TrajectoryModel;
  /** For push: every line's diagnostics, in line order, rebuilt from the first changed line on (pull builds them when asked). */
  lineDiags: Diagnostic[];
  /** lineStart[i]: where line i's diagnostics begin in lineDiags. */
  lineStart: number[];
  version: number | undefined;
  /** For pull: the parts a client keeps apart, and their result ids. */
  partitions: Partitions;
  /** The outcome was +1 at the last publication (errors then show as warnings: a change of it changes every part). */
  passed: boolean;
}

/**
 * How diagnostics reach the client: `push` (publishDiagnostics, every one each time), `pull` (the client
 * asks, one identifier, after its edits and when told to refresh), `partitioned` (pull under three
 * identifiers registered at run time, and a held workspace request for runs without an editor).
 */
export type DiagnosticsMode = 'push' | 'pull' | 'partitioned';

/** A held workspace/diagnostic request: reports go out as partial results until the client cancels it. */
export interface WorkspaceWaiter {
  report(items: WorkspaceDocumentDiagnosticReport[]): void;
  /** Answers the request (empty: what it reported stands). */
  end(): void;
}

export class ServerState {
  readonly documents = new TextDocuments(TextDocument);
  readonly runs = new Map<string, Run>();
  label: BackendLabel = { backend: 'builtin', reason: 'starting' };
  lean: LeanBackend | undefined;
  readonly leanPending = new Map<string, NodeJS.Timeout>();
  options = ServerOptions.parse({});
  diagnosticsMode: DiagnosticsMode = 'push';
  /** Held workspace requests, by part (partitioned mode). */
  readonly waiters = new Map<number, WorkspaceWaiter>();
  /** Documents whose diagnostics were pushed and not yet cleared: pull takes them over once the client asks. */
  readonly pushed = new Set<string>();
  /** Whole rewards waiting for a document's pull, by document (server/handlers/rewards.ts). */
  readonly rewardsAfterPull = new Map<string, NodeJS.Timeout>();
  /** Parts changed by the client's own edits of open documents, waiting to see whether it pulls them (pull-reports.ts). */
  readonly unpulled = new Map<string, { parts: Set<PartitionIndex>; timer: NodeJS.Timeout }>();
  /** A workspace/diagnostic/refresh is on its way (many changes in one turn make one). */
  refreshQueued = false;

  constructor(readonly connection: Connection) {}

  source(): DiagnosticSource {
    return `lar (${this.label.backend})`;
  }

  runFor(uri: string): Run {
    let run = this.runs.get(uri);
    if (!run) {
      const path = pathOf(uri);
      run = {
        model: new TrajectoryModel(
          path ? { resolve: fileResolver(path) } : {},
          path ? (header) => harborRewardFor(path, header?.workflow) : undefined,
        ),
        lineDiags: [],
        lineStart: [],
        version: undefined,
        partitions: new Partitions(),
        passed: false,
      };
      this.runs.set(uri, run);
    }
    return run;
  }

  setLabel(next: BackendLabel): void {
    this.label = next;
    this.connection.console.info(`lar: backend ${next.backend}: ${next.reason}`);
    void this.connection.sendNotification(BackendMethod, next);
  }
}

export function pathOf(uri: string): string | undefined {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : undefined;
  } catch {
    return undefined;
  }
}

/** A trajectory on disk, or undefined when it is missing or not a bounded regular file (a device, a FIFO). */
export function readIfFile(path: string): string | undefined {
  try {
    return readBoundedText(path, MAX_TRAJECTORY_BYTES, 'the trajectory');
  } catch {
    return undefined;
  }
}
