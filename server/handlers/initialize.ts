/** The LSP handshake: the client's options, the server's capabilities, and the choice between Lean and builtin. */
import { TextDocumentSyncKind, type InitializeParams, type InitializeResult } from 'vscode-languageserver';
import { LeanBackend } from '../../core/lean';
import { detectLean } from '../../core/lean/detect';
import { ServerOptions } from '../../core/protocol/lsp';
import type { ServerState } from '../server-state';
import { publishAll } from './publish';
import { diagnosticsMode, staticDiagnosticProvider } from './pull';

const MODE_NOTE = {
  push: 'pushed (the client does not pull, or cannot be told to refresh)',
  pull: 'pulled whole under one identifier',
  partitioned: 'pulled by part (lar.settled, lar.recent, lar.live)',
} as const;

export function registerInitialize(state: ServerState): void {
  const { connection } = state;
  connection.onInitialize((params: InitializeParams): InitializeResult => {
    const given = ServerOptions.safeParse(params.initializationOptions ?? {});
    if (!given.success)
      connection.console.error(`lar: ignoring bad initialization options: ${given.error.issues[0]?.message}`);
    state.options = given.success ? given.data : state.options;
    state.diagnosticsMode = diagnosticsMode(params.capabilities);
    connection.console.info(`lar: diagnostics ${MODE_NOTE[state.diagnosticsMode]}`);
    const { options } = state;
    // An empty path is no path (settings default to "").
    if (options.leanPath !== undefined && options.leanPath.trim() === '') delete options.leanPath;
    void chooseBackend(state, options);
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        hoverProvider: true,
        codeLensProvider: { resolveProvider: false },
        documentSymbolProvider: true,
        ...staticDiagnosticProvider(state.diagnosticsMode),
      },
      serverInfo: { name: 'lar', version: '0.1.0' },
    };
  });
}

async function chooseBackend(state: ServerState, opts: ServerOptions): Promise<void> {
  const want = opts.backend ?? 'auto';
  if (want === 'builtin') {
    state.setLabel({ backend: 'builtin', reason: 'the builtin backend was chosen in the settings' });
  } else {
    const found = await detectLean(opts.leanPath !== undefined ? { leanPath: opts.leanPath } : {});
    if (found.available) {
      state.lean = new LeanBackend(opts.leanPath !== undefined ? { leanPath: opts.leanPath } : {});
      state.setLabel({ backend: 'lean', reason: `Lean ${found.version} at ${found.lake}` });
    } else {
      state.setLabel({ backend: 'builtin', reason: found.reason });
    }
  }
  publishAll(state);
}
