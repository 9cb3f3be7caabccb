/** The text of `lar --help`, kept apart from the code so the usage reads as one page. */
import { TOOL_FORMATS } from '../core/model/formats/types';

export const HELP = `lar — verify coding-agent trajectories against a formal workflow (Lean4 Agentic)

Usage:
  lar verify FILE.lar.jsonl [--workflow W] [--backend builtin|lean]
          [--json | --format table|jsonl|json]
      Per-step table (line, stage, tool, tool reward, failed checks), stage rewards,
      outcome and return, printed as each line is judged (the file is read a chunk at a time).
      --json (--format jsonl): JSON Lines, one object per line as it is judged: {"start": …},
      then {"step": …} per event with its failed checks only (every other check passed),
      {"visit": …} after the step that ended a stage visit, {"lineError": …} where a line
      is malformed, {"userContext": …}; the visit still open, then {"summary": …,
      "lineErrors": N, "integrity": …} last (docs/formats.md). In 0.1.0 --json printed
      the whole report as one document: that is now --format json (every verdict, passing
      ones included). Exit 0: well-formed; 1: a malformed line, an unusable
      workflow, or a file that changed after its run ended (the digest its run
      recorded outside the workspace, in $LAR_STATE_DIR or ~/.local/state/lean4-agentic,
      no longer matches); 2: usage error.
  lar advantages FILES... --out OUT.jsonl [--workflow W] [--backend builtin|lean]
      Stage-normalized GRPO advantages for a group of rollouts of one task, one
      output line per trajectory (docs/rewards.md).
  lar export FILE --format atif [--out OUT.json] [--workflow W] [--backend builtin|lean]
      The trajectory as ATIF-v1.7 with the verifier's results in extra.lar (and, recorded with
      --record-tokens, each turn's token ids and logprobs in its step's metrics).
  lar export GROUP_DIR|FILE… --format rllm|skyrl [--advantage step|token] [--skyrl-rows segment|step]
          [--out OUT] [--workflow W] [--backend builtin|lean]
      A group of rollouts of one task for a trainer (docs/training.md): rllm, one rLLM Episode per
      line with each turn's stage-normalized advantage in Step.advantage (a scalar, or one per
      response token); skyrl, one SkyRL GeneratorOutput: one segment per rollout, tool results
      masked out (or --skyrl-rows step: one row per turn).
  lar harbor JOB_FOLDER [--workflow W] [--backend builtin|lean] [--json]
      The rewards of a Harbor job (harbor run -a lar_harbor:LarAgent …): Harbor's verifier
      reward joins each trial's lar trajectory as its outcome, verified against the workflow
      the job gave the agent. Writes lar-rewards.json beside each trial's result.json and
      each task's group advantages (-k 2 or more) to lar-advantages/; prints pass@1, pass@k,
      the mean return and the mean of each level per task and overall.
  lar workflow check FILE.larflow.json|builtin:ID
      Well-formedness of a workflow. Exit 0: usable (warnings allowed); 1: not.
  lar run --task TEXT|- [--endpoint URL] [--model M] [--workflow W] [--workspace DIR]
          [--out FILE] [--enforcement block|warn] [--yes] [--max-steps N] [--tool-format F]
          [--context-length N] [--thinking auto|on|off] [--rules FILE,…]
          [--rollouts N [--concurrency C] [--keep]] [--seed S] [--temperature T]
          [--max-time SECONDS] [--max-repeated-failures N] [--record-tokens]
          [--sandbox auto|required|off|container] [--break-hard-links] [--mcp-config FILE]
      The verified agent in the terminal: every tool call is gated by the workflow,
      each step is written to the trajectory (default .lar/runs/ in the workspace).
      The endpoint defaults to SGLang's http://127.0.0.1:30000/v1; the API key is
      read from $LAR_API_KEY. Calls that need approval are rejected unless --yes.
      Exit 0 when the run submitted, 1 otherwise, 3 when the model's context window could not hold it.
      --task -: the task is read from standard input to its end (UTF-8, at most 1 MiB,
      byte for byte), for text no shell should quote: printf '%s' "$TASK" | lar run --task -
      --rollouts N (2–64): N rollouts, each in a fresh copy of the workspace (left
      untouched), written as a group to .lar/runs/group-*/ (or --out DIR) with their GRPO
      advantages in advantages.jsonl. Exit 0 when all N ran and joined the group.
      --concurrency C (1–16, default 1): C rollouts at the same time, each in its own copy
      and sandbox; one that crashed or ended on an error is left out, and said so.
      --keep: keep each rollout's copy of the workspace (its path is printed).
      --max-time SECONDS (default 3600): the run ends (reason limit) at the first turn after it.
      --seed S, --temperature T (0–2): the sampling sent with every request and recorded in
      the header; rollout k of a group samples with seed S + k − 1 (S random when not given).
      --record-tokens: record each turn's prompt and completion token ids and logprobs as the
      server returns them (vLLM streamed, SGLang one unstreamed request per turn), as tokens
      lines for a trainer; the conversation is then never compacted, and a run that fills the
      window ends (exit 3). A turn without ids is said and the run goes on.
      --tool-format (default auto): how tool calls travel: auto (native, calls a server
      left as text still read, a text format when the server has no parser), native,
      or a text format: ${TOOL_FORMATS.filter((f) => f !== 'auto' && f !== 'native').join(', ')}.
      --context-length N: the model's window in tokens (default 0: ask the server).
      --thinking on|off: ask the chat template for reasoning or not (default auto: send nothing).
      --rules FILE,…: the workspace's rule files for the system prompt (default AGENTS.md; "" for none).
      --sandbox (default auto): commands run in a bubblewrap sandbox (no network, private
      home, read-only system and protected paths); auto runs them unconfined, and says
      so on every step, when it cannot start; required refuses to run commands then;
      container: the run is inside a container that is its sandbox (Harbor, Docker), so
      commands run without bubblewrap and the trajectory says the container held them.
      --mcp-config FILE: MCP servers from a .mcp.json, a .vscode/mcp.json or Cline's settings
      file. A stage offers and permits their tools only by name or pattern (mcp__SERVER__TOOL,
      mcp__github__get_*); stdio servers run each in a sandbox like the commands' (no network
      unless the workflow's mcp.network names the server). \${input:ID} comes from
      $LAR_MCP_INPUT_ID. A tool that does not say it only reads needs approval (--yes).
      --break-hard-links: make each workspace file with more than one link (a pnpm
      store's, a local clone's objects) its own copy before the first step, instead of
      mounting each read-only in the sandbox (or refusing the run past 3 000 of them).
  lar lsp --stdio
      The language server over standard input/output, for any LSP editor
      (Neovim, Helix, Emacs …; docs/protocol.md).
  lar schema workflow|header|event
      JSON Schema of a workflow file, a trajectory header line or an event line
      (for editors: completion and validation of *.larflow.json).

  W is a path to a *.larflow.json file or builtin:ID (builtin:default-coding).
  --no-color (or NO_COLOR) turns colours off.
`;
