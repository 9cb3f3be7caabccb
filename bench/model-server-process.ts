/**
 * Runs a ScriptedModelServer in its own process for the agent benchmark, so
 * the fixture's work (building and streaming the answer) does not run on the
 * agent's event loop or garbage-collected heap. Started with `fork`: receives
 * `{ script }`, answers `{ url }`, stops and exits on `'stop'` or when the
 * parent goes away.
 */
import { ScriptedModelServer } from '../testkit/scripted-server';
import type { ScriptedTurn } from '../testkit/scripted-turns';

let server: ScriptedModelServer | undefined;

process.on('message', (msg: { script: ScriptedTurn[] } | 'stop') => {
  if (msg === 'stop') return void stop();
  server = new ScriptedModelServer({ script: msg.script });
  server.start().then(
    (url) => process.send?.({ url }),
    (e: Error) => process.send?.({ error: e.message }),
  );
});
process.on('disconnect', () => void stop());

async function stop(): Promise<void> {
  await server?.stop();
  process.exit(0);
}
