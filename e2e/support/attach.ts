// What the @ attachment scenarios share: a workspace on a scripted model that answers once, and the
// user's message as the model received it.
import { DEMO_MODEL } from '../../devtools/demo-model';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import { textOf } from '../../testkit/text';
import type { Suite, Workbench } from './workbench';

/** Opens a copy of the demo workspace on a model that answers `answer`, runs `body`, and closes both. */
export async function withAnsweringModel(
  suite: Suite,
  name: string,
  answer: string,
  body: (wb: Workbench, ws: string, server: ScriptedModelServer) => Promise<void>,
): Promise<void> {
  const server = new ScriptedModelServer({ models: [DEMO_MODEL], script: [{ content: answer }] });
  const endpoint = await server.start();
  const ws = suite.workspace(name, {
    'lean4Agentic.endpoint': endpoint,
    'lean4Agentic.model': DEMO_MODEL,
    'lean4Agentic.workflow': 'demo.larflow.json',
  });
  const wb = await suite.open(ws);
  try {
    await body(wb, ws, server);
  } finally {
    await wb.close();
    await server.stop();
  }
}

/** The first user message of the first chat request the model received. */
export function firstUserMessage(server: ScriptedModelServer): string {
  const request = server.requests.find((q) => q.path === '/v1/chat/completions')!;
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
  return textOf(messages.find((m) => m.role === 'user')!.content);
}
