"""LarAgent: Lean4 Agentic's verified agent as a Harbor installed agent (`-a lar_harbor:LarAgent`).

install() puts the `lar` CLI into the task's environment from its npm tarball
(no registry needed), run() pipes the instruction to `lar run --task -`, and the
run leaves its trajectory and an ATIF-v1.7 export in /logs/agent for Harbor.
The task's MCP servers reach the run as a `.mcp.json` file (`lar run --mcp-config`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shlex
import tempfile
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Literal

from harbor.agents.agent_auth_resolution import ModelConnectionSpec, ProviderAccess, ResolvedModelConnection
from harbor.agents.capabilities import AgentCapabilities
from harbor.agents.installed.base import (
    BaseInstalledAgent,
    ContextWindowExceededError,
    NonZeroAgentExitCodeError,
    with_prompt_template,
)
from harbor.agents.options import InstalledAgentOptions
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.models.agent.rollout_detail import RolloutDetail
from harbor.models.model_api_format import ModelApiFormat
from harbor.models.task.config import MCPServerConfig
from pydantic import Field

from lar_harbor.cli_tarball import find_tarball
from lar_harbor.environment import LocalSandboxEnvironment

logger = logging.getLogger(__name__)

PREFIX = PurePosixPath("/opt/lar")
LAR = PREFIX / "bin" / "lar"
TRAJECTORY_NAME = "lar.lar.jsonl"
# The task's MCP servers as `.mcp.json` for `lar run --mcp-config`: out of the workspace (lar reads a workspace
# .mcp.json of its own accord, and the verifier would see the file) and out of /logs (downloaded to the host).
MCP_CONFIG = PurePosixPath("/installed-agent/lar-mcp.json")
# `lar run` exits 3 when the model's context window could not hold the run.
EXIT_CONTEXT_FULL = 3
# Provider prefixes Harbor's -m may carry; the rest is the model's name as the server knows it.
_PROVIDERS = ("hosted_vllm/", "openai/", "vllm/", "sglang/")
_NODE_MAJOR_MIN = 20
_TASK_IN_ENV_MAX = 100 * 1024
_TASK_FILE = "/tmp/lar-task.txt"
_EXPORT_TIMEOUT_SEC = 60
# Node from nvm when install() had to put it there (its folder is not on a plain shell's PATH).
_NODE_PATH = 'if [ -s "$HOME/.nvm/nvm.sh" ]; then . "$HOME/.nvm/nvm.sh" >/dev/null; fi; '


class LarAgentOptions(InstalledAgentOptions):
    workflow: str = Field(default="builtin:terminal-task", description="The workflow every step is checked against.")
    enforcement: Literal["block", "warn"] = Field(default="block", description="Block or only flag violations.")
    api_base: str | None = Field(default=None, description="The OpenAI-compatible endpoint (as terminus-2's api_base).")
    max_steps: int | None = Field(default=None, ge=1, description="At most this many tool calls.")
    context_length: int | None = Field(default=None, ge=1, description="The model's window in tokens.")
    tool_format: str | None = Field(default=None, description="How tool calls travel (lar run --tool-format).")
    thinking: Literal["auto", "on", "off"] | None = Field(default=None, description="Ask for reasoning or not.")
    cli_tarball: str | None = Field(default=None, description="The lar CLI's npm tarball (npm run package).")
    collect_rollout_details: bool = Field(
        default=False,
        description="Record each turn's token ids and logprobs (lar run --record-tokens) as rollout_details.",
    )


def model_id(name: str | None) -> str:
    """The model as the server serves it: Harbor's provider prefix dropped (`hosted_vllm/LAR-27B` → `LAR-27B`)."""
    if not name:
        raise ValueError("LarAgent needs a model: -m hosted_vllm/NAME (the name the server serves)")
    for prefix in _PROVIDERS:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


class LarAgent(BaseInstalledAgent):
    options_model: ClassVar[type[InstalledAgentOptions] | None] = LarAgentOptions
    # base_url: Harbor's --base-url is applied (it is lar run's --endpoint).
    # mcp_http_headers: headers go into the file as ${VAR} references to Harbor's MCP_AUTH_* variables,
    # which run() passes in lar run's environment; lar run expands them when it loads the file.
    capabilities: ClassVar[AgentCapabilities] = AgentCapabilities(
        atif=True, base_url=True, mcp_servers=True, mcp_http_headers=True
    )
    MODEL_CONNECTION = ModelConnectionSpec(
        default_provider="hosted_vllm",
        agent_provider_access=ProviderAccess(
            api_key_candidate_names=["LAR_API_KEY", "HOSTED_VLLM_API_KEY", "OPENAI_API_KEY"],
            base_url_candidate_names=["HOSTED_VLLM_API_BASE", "OPENAI_BASE_URL", "LAR_ENDPOINT"],
        ),
        api_key_destination_names={"default": "LAR_API_KEY"},
        base_url_destination_names={"default": "LAR_ENDPOINT"},
        supported_api_formats=[ModelApiFormat.OPENAI_CHAT_COMPLETIONS],
        default_api_format_by_provider={"default": ModelApiFormat.OPENAI_CHAT_COMPLETIONS},
    )

    @staticmethod
    def name() -> str:
        return "lar"

    @property
    def _options(self) -> LarAgentOptions:
        options = self.options
        return options if isinstance(options, LarAgentOptions) else LarAgentOptions()

    async def configure(self, environment: BaseEnvironment) -> None:
        # After install(), also with skip_install: the file is per trial, not part of an image.
        if self.mcp_servers:
            document = mcp_json(self.mcp_servers, self.mcp_header_env.refs)
            await self._upload_config_text(
                environment, content=json.dumps(document, indent=2), remote_path=str(MCP_CONFIG), filename="mcp.json"
            )

    def get_version_command(self) -> str | None:
        return f"{_NODE_PATH}{LAR} --version"

    async def install(self, environment: BaseEnvironment) -> None:
        tarball = find_tarball(self._options.cli_tarball)
        await self._ensure_node(environment)
        remote = f"/tmp/{tarball.name}"
        await environment.upload_file(tarball, remote)
        # --offline: the tarball carries everything it needs, so a task without network installs it too.
        await self.exec_as_root(
            environment,
            command=(
                f"{_NODE_PATH}npm install --global --offline --no-audit --no-fund --prefix {PREFIX}"
                f" {shlex.quote(remote)} > /tmp/lar-install.log 2>&1"
                " || { tail -n 30 /tmp/lar-install.log >&2; exit 1; }; "
                f"rm -f {shlex.quote(remote)}; {LAR} --version"
            ),
            env={"npm_config_cache": "/tmp/lar-npm-cache", "npm_config_update_notifier": "false"},
        )

    async def _ensure_node(self, environment: BaseEnvironment) -> None:
        probe = await environment.exec(
            f"{_NODE_PATH}node -e 'process.stdout.write(process.versions.node)' 2>/dev/null", user="root"
        )
        version = (probe.stdout or "").strip()
        major = version.split(".")[0]
        if probe.return_code == 0 and major.isdigit() and int(major) >= _NODE_MAJOR_MIN:
            return
        # No Node (or too old): Harbor's own way, nvm from the network, as its Codex adapter does.
        await self.ensure_system_dependencies(environment, ("curl", "bash"))
        await self.exec_as_root(
            environment,
            command=(
                "curl -fsSL -o- https://raw.githubusercontent.com/nvm-sh/nvm/v0.40.2/install.sh"
                " | env -u NODE_VERSION bash"
                ' && export NVM_DIR="$HOME/.nvm" && . "$NVM_DIR/nvm.sh"'
                " && nvm install 22 && nvm alias default 22"
                # Where /usr is writable, plain shells find it too; elsewhere _NODE_PATH does.
                ' && { ln -sf "$(command -v node)" /usr/local/bin/node 2>/dev/null || true; }'
            ),
        )

    @property
    def model_connection(self) -> ResolvedModelConnection:
        # Harbor allowlists the host of this URL for a task without network; --ak api_base must count too.
        connection = super().model_connection
        try:
            endpoint = self._endpoint(connection)
        except ValueError:
            return connection
        return replace(connection, resolved_base_url=endpoint)

    def _endpoint(self, connection: ResolvedModelConnection | None = None) -> str:
        options = self._options
        connection = connection or super().model_connection
        found = (
            self._base_url
            or options.base_url
            or options.api_base
            or connection.execution_base_url
            or self._get_env("HOSTED_VLLM_API_BASE", "OPENAI_BASE_URL", "LAR_ENDPOINT")
        )
        if not found:
            raise ValueError(
                "LarAgent needs the model's endpoint: --base-url URL, --ak api_base=URL, "
                "or HOSTED_VLLM_API_BASE in the environment (an OpenAI-compatible /v1 URL)"
            )
        return found

    def _api_key(self) -> str | None:
        return self.model_connection.api_key or self._get_env("LAR_API_KEY", "HOSTED_VLLM_API_KEY", "OPENAI_API_KEY")

    def _run_flags(self) -> list[str]:
        options = self._options
        flags = [
            "--task", "-",
            "--endpoint", self._endpoint(),
            "--model", model_id(self.model_name),
            "--workflow", options.workflow,
            "--enforcement", options.enforcement,
            "--sandbox", "container",
            "--yes",
            "--out", str(self.environment_logs_dir / TRAJECTORY_NAME),
        ]  # fmt: skip
        optional: list[tuple[str, Any]] = [
            ("--max-steps", options.max_steps),
            ("--context-length", options.context_length),
            ("--tool-format", options.tool_format),
            ("--thinking", options.thinking),
        ]
        for flag, value in optional:
            if value is not None:
                flags += [flag, str(value)]
        if options.collect_rollout_details:
            flags.append("--record-tokens")
        if self.mcp_servers:
            flags += ["--mcp-config", str(MCP_CONFIG)]
        return flags

    @with_prompt_template
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        logs = self.environment_logs_dir
        env = {"NO_COLOR": "1"}
        key = self._api_key()
        if key:
            env["LAR_API_KEY"] = key
        env.update(self.mcp_header_env.env)  # {} without HTTP headers
        flags = self._run_flags()
        if isinstance(environment, LocalSandboxEnvironment):
            # No network of its own: the endpoint is reached through the trial's forwarder.
            at = flags.index("--endpoint") + 1
            flags[at] = await environment.reach(flags[at])
        run = " ".join(shlex.quote(a) for a in [str(LAR), "run", *flags])
        if len(instruction.encode()) <= _TASK_IN_ENV_MAX:
            env["LAR_TASK"] = instruction
            task = 'printf "%s" "$LAR_TASK"'
        else:
            # One variable holds at most 128 KiB (Linux's MAX_ARG_STRLEN): a longer task goes as a file.
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
                f.write(instruction)
            try:
                await environment.upload_file(f.name, _TASK_FILE)
            finally:
                Path(f.name).unlink(missing_ok=True)
            task = f"cat {_TASK_FILE}"
        command = (
            f"{_NODE_PATH}mkdir -p {shlex.quote(str(logs))}; "
            # The task's working directory is the workspace; never the whole file system (a task without WORKDIR).
            'ws="$PWD"; [ "$ws" = / ] && ws="${HOME:-/root}"; '
            f'{task} | {run} --workspace "$ws" > {shlex.quote(str(logs / "lar-output.txt"))} 2>&1'
        )
        try:
            result = await environment.exec(command=command, env=env)
        finally:
            # Also after Harbor's timeout cancelled the run: the trajectory so far becomes trajectory.json.
            await self._export(environment)
        code = result.return_code
        if code == EXIT_CONTEXT_FULL:
            raise ContextWindowExceededError(
                f"lar run: the model's context window could not hold the run (exit {code})"
            )
        if code not in (0, 1):
            raise NonZeroAgentExitCodeError(
                f"lar run exited with {code}; see agent/lar-output.txt: {self._truncate_output(result.stdout)}"
            )

    async def _export(self, environment: BaseEnvironment) -> None:
        logs = self.environment_logs_dir
        trajectory = shlex.quote(str(logs / TRAJECTORY_NAME))
        command = (
            f"{_NODE_PATH}if [ -s {trajectory} ]; then {LAR} export {trajectory} --format atif"
            f" --out {shlex.quote(str(logs / 'trajectory.json'))}"
            f" > {shlex.quote(str(logs / 'lar-export.txt'))} 2>&1; fi"
        )
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_EXPORT_TIMEOUT_SEC):
                await environment.exec(command=command, timeout_sec=_EXPORT_TIMEOUT_SEC)

    def populate_context_post_run(self, context: AgentContext) -> None:
        atif = Path(self.logs_dir) / "trajectory.json"
        try:
            document = json.loads(atif.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(document, dict):
            return
        if self._options.collect_rollout_details:
            detail = rollout_detail(document)
            if detail is not None:
                context.rollout_details = [detail]
        metrics = document.get("final_metrics")
        if not isinstance(metrics, dict):
            return
        for field, key in (
            ("n_input_tokens", "total_prompt_tokens"),
            ("n_output_tokens", "total_completion_tokens"),
            ("n_cache_tokens", "total_cached_tokens"),
        ):
            value = metrics.get(key)
            if isinstance(value, int) and value >= 0:
                setattr(context, field, value)
        cost = metrics.get("total_cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            context.cost_usd = float(cost)


def mcp_json(servers: list[MCPServerConfig], header_refs: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Harbor's MCP servers as a portable `.mcp.json` (Claude Code's form); a header's value is `${VAR}`."""
    entries: dict[str, dict[str, Any]] = {}
    for server in servers:
        # lar run expands ${VAR} from its own environment, which holds the model's key and every header's
        # credential: a task's own text must not name them, so a server whose values hold "${" is left out.
        written = [server.command or "", *server.args, server.url or ""]
        if any("${" in value for value in written):
            logger.warning("MCP server %r left out: its command, args or url hold '${'", server.name)
            continue
        if server.transport == "stdio":
            # Harbor's model has no env and no cwd for a stdio server: command and args are all there is.
            entries[server.name] = {"command": server.command, "args": list(server.args)}
            continue
        entry: dict[str, Any] = {"type": "http" if server.transport == "streamable-http" else "sse", "url": server.url}
        refs = header_refs.get(server.name)
        if refs:
            entry["headers"] = {name: f"${{{variable}}}" for name, variable in refs.items()}
        entries[server.name] = entry
    return {"mcpServers": entries}


def _ints(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return value
    return None


def rollout_detail(document: dict[str, Any]) -> RolloutDetail | None:
    """The run's turns as one RolloutDetail (one segment: lar never compacts while recording ids), from the
    ATIF export's agent steps, whose metrics carry each turn's whole prompt, completion and logprobs."""
    prompts: list[list[int]] = []
    completions: list[list[int]] = []
    logprobs: list[list[float]] = []
    steps = document.get("steps")
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict) or step.get("source") != "agent":
            continue
        metrics = step.get("metrics")
        # A model turn without its ids breaks the segment: none is better than one with a gap.
        if not isinstance(metrics, dict):
            return None
        prompt = _ints(metrics.get("prompt_token_ids"))
        completion = _ints(metrics.get("completion_token_ids"))
        lps = metrics.get("logprobs")
        if prompt is None or completion is None or not isinstance(lps, list):
            return None
        if len(lps) != len(completion) or not all(isinstance(v, (int, float)) for v in lps):
            return None
        prompts.append(prompt)
        completions.append(completion)
        logprobs.append([float(v) for v in lps])
    if not prompts:
        return None
    return RolloutDetail(prompt_token_ids=prompts, completion_token_ids=completions, logprobs=logprobs)
