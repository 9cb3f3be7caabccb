/**
 * The scripted demo model: what the demo and the end-to-end tests run when no
 * inference server is given. It replays one run on the demo repository
 * (test-fixtures/demo-workspace) over the real OpenAI wire format, says in its
 * first words that it is a script, and starts over for every new task; to a
 * follow-up it reads the code, runs the tests and answers from what it saw.
 * The run shows the parts that matter: the gate blocking a premature edit, a
 * stage timeline, a fix, the tests in the terminal, and the outcome check.
 */
import { ScriptedModelServer } from '../testkit/scripted-server';
import type { ChatRequestBody, ScriptedTurn } from '../testkit/scripted-turns';

export const DEMO_MODEL = 'scripted-demo-model';

export const DEMO_SCRIPT: ScriptedTurn[] = [
  {
    content:
      '(Scripted demo model: no inference server is connected, so this replays a recorded run. Set `lean4Agentic.endpoint` to use a real model.)\n\nFirst I will read the failing test.',
    reasoning:
      'The task is a failing test. Read the test first, then the code it calls; edits wait for the edit stage.',
    toolCalls: [{ name: 'read_file', arguments: { path: 'test/sum.test.js' } }],
  },
  {
    content: 'The test expects `sum(2, 3)` to be 5. Now the code it calls.',
    toolCalls: [{ name: 'read_file', arguments: { path: 'src/sum.js' } }],
  },
  {
    content: '`sum` subtracts. I will fix it straight away.',
    toolCalls: [
      { name: 'edit_file', arguments: { path: 'src/sum.js', search: 'return a - b;', replace: 'return a + b;' } },
    ],
  },
  {
    content: 'The verifier blocked that: edits belong to the edit stage. Entering it.',
    toolCalls: [{ name: 'enter_stage', arguments: { stage: 'edit', reason: 'found the bug: sum subtracts' } }],
  },
  {
    content: 'Fixing the operator.',
    toolCalls: [{ name: 'edit_file', arguments: { path: 'src/sum.js', search: 'a - b', replace: 'a + b' } }],
  },
  {
    content: 'Now I will prove it with the tests.',
    toolCalls: [{ name: 'enter_stage', arguments: { stage: 'verify' } }],
  },
  { content: 'Running the tests.', toolCalls: [{ name: 'run_command', arguments: { command: 'npm test' } }] },
  {
    content: 'Both tests pass. Submitting.',
    toolCalls: [{ name: 'submit', arguments: { summary: 'sum now adds its arguments; npm test passes' } }],
  },
  { content: 'Done: `sum` adds, and `npm test` passes.' },
];

type Message = NonNullable<ChatRequestBody['messages']>[number];

const textOf = (m: Message | undefined): string => (typeof m?.content === 'string' ? m.content : '');

/**
 * What the demo says to a follow-up: it looks before it answers (reads src/sum.js, runs npm test) and
 * answers from what it saw, so after a Restore puts the bug back it says the tests fail.
 */
function followUp(since: Message[]): ScriptedTurn {
  const calls = since.filter((m) => m.role === 'assistant').length;
  if (calls === 0)
    return {
      content: '(Scripted demo model.) Let me look at the workspace as it is now.',
      toolCalls: [{ name: 'read_file', arguments: { path: 'src/sum.js' } }],
    };
  if (calls === 1)
    return { content: 'And run the tests.', toolCalls: [{ name: 'run_command', arguments: { command: 'npm test' } }] };
  const results = since.filter((m) => m.role === 'tool').map(textOf);
  const source = results[0] ?? '';
  const tests = results[1] ?? '';
  const passes = /exit code 0\b/.test(tests);
  const op = /return a \+ b;/.test(source)
    ? 'adds'
    : /return a - b;/.test(source)
      ? 'subtracts'
      : 'does something I do not recognise';
  return {
    content: passes
      ? `\`npm test\` passes right now, and \`sum\` in src/sum.js ${op}. I am a scripted model: I cannot do more than replay my one run (start a New chat and ask me to make npm test pass).`
      : `\`npm test\` fails right now (${/exit code (\d+)/.exec(tests)?.[0] ?? 'no exit code'}), and \`sum\` in src/sum.js ${op}. I am a scripted model: start a New chat and ask me to make npm test pass, and I replay the fix.`,
  };
}

/** The demo's answer to a request: its recorded run for a conversation's first task, then answers from the workspace. */
export function demoTurn(chat: ChatRequestBody): ScriptedTurn {
  const messages = chat.messages ?? [];
  const users = messages.flatMap((m, i) => (m.role === 'user' ? [i] : []));
  const since = messages.slice((users.at(-1) ?? -1) + 1);
  if (users.length <= 1) {
    const turn = DEMO_SCRIPT[since.filter((m) => m.role === 'assistant').length];
    if (turn) return turn;
  }
  return followUp(since);
}

export function startDemoModel(port = 0): Promise<{ server: ScriptedModelServer; endpoint: string }> {
  // Served like a real one: its window reported at /v1/models, its reasoning apart from the answer (SGLang's
  // field), and Test Connection's probe answered with the call it asks for, as a tool-calling model does.
  const server = new ScriptedModelServer({
    script: DEMO_SCRIPT,
    models: [DEMO_MODEL],
    contextLength: 32_768,
    respond: demoTurn,
    answerProbe: true,
  });
  return server.start(port).then((endpoint) => ({ server, endpoint }));
}
