/** A real ModelClient over HTTP against a scripted server, started and stopped around a test: shared by the model tests. */
import { ModelClient } from '../../core/model/client';
import type { ModelClientOptions } from '../../core/model/options';
import { ScriptedModelServer, type ScriptedServerOptions } from '../../testkit/scripted-server';

/** Runs `run` with a client (short backoff, then `client`'s options) talking to a server scripted by `server`. */
export async function withModelClient(
  server: ScriptedServerOptions,
  client: Partial<ModelClientOptions>,
  run: (c: ModelClient, s: ScriptedModelServer) => Promise<void>,
): Promise<void> {
  const s = new ScriptedModelServer(server);
  const endpoint = await s.start();
  try {
    await run(new ModelClient({ endpoint, backoffMs: 5, ...client }), s);
  } finally {
    await s.stop();
  }
}
