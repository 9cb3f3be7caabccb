/**
 * The language server process. Started by the extension over IPC
 * (`--node-ipc`), or by any LSP client with `--stdio` (see docs/protocol.md);
 * `createConnection` picks the transport from the command line.
 */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startServer } from './server';

startServer(createConnection(ProposedFeatures.all));
