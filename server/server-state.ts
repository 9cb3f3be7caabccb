/**
 * What the language server's handlers share: the open documents, one verified run per trajectory, the backend
 * and the client's options, kept in one object so each handler can live in its own file.
 */
import { fileURLToPath } from 'node:url';
import { TextDocuments, type Connection, type Diagnostic } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { ServerOptions, BackendMethod, type BackendLabel } from '../core/protocol/lsp';
import type { LeanBackend } from '../core/lean';
import { MAX_TRAJECTORY_BYTES, readBoundedText } from '../core/workspace/bounded-read';
import { fileResolver } from '../core/workflow/resolve';
import type { DiagnosticSource } from './diagnostics';
import { TrajectoryModel } from './trajectory-model';
import { harborRewardFor } from '../core/harbor/job-folder';

export interface Run {
  model: TrajectoryModel;
  /** Every line's diagnostics, in line order; rebuilt from the first changed line on. */
  lineDiags: Diagnostic[];
  /** lineStart[i]: where line i's diagnostics begin in lineDiags. */
  lineStart: number[];
  version: number | undefined;
}

export class ServerState {
  readonly documents = new TextDocuments(TextDocument);
  readonly runs = new Map<string, Run>();
  label: BackendLabel = { backend: 'builtin', reason: 'starting' };
  lean: LeanBackend | undefined;
  readonly leanPending = new Map<string, NodeJS.Timeout>();
  options = ServerOptions.parse({});

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
