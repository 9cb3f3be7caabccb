/**
 * The scripted model for Harbor runs of our task set (test-fixtures/harbor): the
 * stand-in for a LAR model behind SGLang when `lar_harbor:LarAgent` runs a job in
 * the tests and the benchmark. Trials run at the same time, so nothing is kept
 * per conversation: each answer is chosen from the request alone (which task its
 * instruction is, how many answers the conversation already has). A task it has
 * no script for gets a look around and a submit, and fails on Harbor's verifier.
 */
import { ScriptedModelServer } from '../testkit/scripted-server';
import type { ChatRequestBody, ScriptedToolCall, ScriptedTurn } from '../testkit/scripted-turns';

export const HARBOR_MODEL = 'lar-scripted-terminal';

const cmd = (command: string): ScriptedToolCall => ({ name: 'run_command', arguments: { command } });
const stage = (to: string, reason: string): ScriptedToolCall => ({
  name: 'enter_stage',
  arguments: { stage: to, reason },
});
const submit = (summary: string): ScriptedToolCall => ({ name: 'submit', arguments: { summary } });

/** A terminal task done the way the builtin:terminal-task workflow wants: look, work, check, submit. */
function plan(look: string, work: ScriptedToolCall[], check: string, summary: string): ScriptedTurn[] {
  return [
    { content: 'Looking at the environment first.', toolCalls: [cmd(look)] },
    { content: 'I know what to change.', toolCalls: [stage('work', 'the cause is clear')] },
    ...work.map((call) => ({ content: 'Making the change.', toolCalls: [call] })),
    { content: 'Checking the result.', toolCalls: [stage('verify', 'the change is made')] },
    { content: 'Running it.', toolCalls: [cmd(check)] },
    { content: 'It works.', toolCalls: [submit(summary)] },
  ];
}

/** Scripts by a phrase only that task's instruction has. */
export const HARBOR_SCRIPTS: { phrase: string; task: string; turns: ScriptedTurn[] }[] = [
  {
    phrase: '/app/sales.csv',
    task: 'csv-report',
    turns: plan(
      'head -n 5 /app/sales.csv',
      [
        cmd(
          `cd /app && { echo region,revenue; awk -F, 'NR > 1 && NF >= 6 && $2 >= "2026-01-01" && $2 <= "2026-03-31" { r = tolower($3); gsub(/^[ \\t]+|[ \\t]+$/, "", r); t[r] += $5 * $6 } END { for (r in t) printf "%s,%.2f\\n", r, t[r] }' sales.csv | sort -t, -k2,2nr -k1,1; } > report.csv`,
        ),
      ],
      'cat /app/report.csv',
      'report.csv has the first quarter revenue per region',
    ),
  },
  {
    phrase: 'inventory-report.sh',
    task: 'script-wont-run',
    turns: plan(
      'cat -A /app/bin/inventory-report.sh | head -n 5; ls -l /app/bin',
      [
        cmd(
          `sed -i 's/\\r$//' /app/bin/inventory-report.sh && sed -i 's|^source report-lib.sh$|source "$(dirname "$0")/report-lib.sh"|' /app/bin/inventory-report.sh && chmod +x /app/bin/inventory-report.sh`,
        ),
      ],
      'cd / && /app/bin/inventory-report.sh /app/services.txt',
      'line endings, the execute bit and the library path are fixed',
    ),
  },
  {
    phrase: 'prune-backups.sh',
    task: 'bash-prune-backups',
    turns: plan(
      'cat /app/prune-backups.sh; ls /app/backups',
      [
        cmd(
          `sed -i 's/tail -n +\\$keep | xargs -r rm -f --/tail -n +$((keep + 1)) | xargs -r -d '"'"'\\\\n'"'"' rm -f --/' /app/prune-backups.sh`,
        ),
      ],
      'tail -n 3 /app/prune-backups.sh',
      'the off-by-one and the split names are fixed',
    ),
  },
];

const UNSCRIPTED: ScriptedTurn[] = [
  { content: 'I have no script for this task; looking around.', toolCalls: [cmd('ls -la')] },
  { content: 'Moving on.', toolCalls: [stage('work', 'nothing to change that I know of')] },
  { content: 'Nothing to do.', toolCalls: [cmd('true')] },
  { content: 'Checking.', toolCalls: [stage('verify', 'done')] },
  { content: 'Checking.', toolCalls: [cmd('true')] },
  { content: 'Submitting.', toolCalls: [submit('no change')] },
];

function firstUserText(body: ChatRequestBody): string {
  const user = body.messages?.find((m) => m.role === 'user');
  const content = user?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as unknown[]).map((p) => (p && typeof p === 'object' && 'text' in p ? String(p.text) : '')).join('');
}

/** The turn for this request: the task's script at the conversation's answer count. */
export function harborTurn(body: ChatRequestBody): ScriptedTurn {
  const text = firstUserText(body);
  const turns = HARBOR_SCRIPTS.find((s) => text.includes(s.phrase))?.turns ?? UNSCRIPTED;
  const answered = (body.messages ?? []).filter((m) => m.role === 'assistant').length;
  return turns[Math.min(answered, turns.length - 1)]!;
}

/** The server (start() puts it on a free port of 127.0.0.1); a small `contextLength` makes every run overflow it. */
export function harborModelServer(contextLength = 32768): ScriptedModelServer {
  return new ScriptedModelServer({
    models: [HARBOR_MODEL],
    contextLength,
    enforceWindow: true,
    script: [],
    respond: (body) => harborTurn(body),
  });
}
