"""A task's MCP servers reach `lar run` as a .mcp.json file and --mcp-config; headers only as ${VAR}."""

import asyncio
import json
import shlex
import tempfile
import unittest
from pathlib import Path
from typing import Any

from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext
from harbor.models.task.config import MCPServerConfig, TaskConfig

from lar_harbor.agent import MCP_CONFIG, LarAgent, mcp_json

TASK_TOML = """
[environment]
[[environment.mcp_servers]]
name = "tools"
transport = "streamable-http"
url = "http://mcp-server:8000/mcp"
headers = { Authorization = "Bearer ${TOOLS_TOKEN}" }

[[environment.mcp_servers]]
name = "files"
transport = "stdio"
command = "/opt/mcp/files-server"
args = ["--root", "/app"]
"""


def servers(toml: str) -> list[MCPServerConfig]:
    """Parsed as Harbor parses task.toml, so its defaults and normalisation apply."""
    return TaskConfig.model_validate_toml(toml).environment.mcp_servers


class FakeEnvironment:
    """What LarAgent touches of a BaseEnvironment: uploads (read as they arrive) and commands (recorded)."""

    default_user = None

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.commands: list[tuple[str, dict[str, str]]] = []

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        # _upload_config_text deletes its temporary folder right after the upload.
        self.files[target_path] = Path(source_path).read_text()

    async def exec(self, command: str, env: dict[str, str] | None = None, **_: Any) -> ExecResult:
        self.commands.append((command, dict(env or {})))
        return ExecResult(stdout="", stderr="", return_code=0)


class McpTest(unittest.TestCase):
    def agent(self, toml: str) -> LarAgent:
        logs = Path(tempfile.mkdtemp(prefix="lar-harbor-mcp-"))
        return LarAgent(
            logs_dir=logs,
            model_name="hosted_vllm/LAR-27B",
            mcp_servers=servers(toml),
            base_url="http://127.0.0.1:30000/v1",
            extra_env={"TOOLS_TOKEN": "s3cret"},
        )

    def test_servers_become_a_file_and_a_flag(self) -> None:
        agent, env = self.agent(TASK_TOML), FakeEnvironment()
        asyncio.run(agent.configure(env))  # type: ignore[arg-type]
        asyncio.run(agent.run("do it", env, AgentContext()))  # type: ignore[arg-type]
        document = json.loads(env.files[str(MCP_CONFIG)])
        refs = agent.mcp_header_env.refs["tools"]
        self.assertEqual(
            document,
            {
                "mcpServers": {
                    "tools": {
                        "type": "http",
                        "url": "http://mcp-server:8000/mcp",
                        "headers": {"Authorization": f"${{{refs['Authorization']}}}"},
                    },
                    "files": {"command": "/opt/mcp/files-server", "args": ["--root", "/app"]},
                }
            },
        )
        # The credential travels only in the exec env: neither in the file nor on the command line.
        self.assertNotIn("s3cret", env.files[str(MCP_CONFIG)])
        command, run_env = next((c, e) for c, e in env.commands if " run " in c)
        self.assertNotIn("s3cret", command)
        argv = shlex.split(command.split("| ", 1)[1].split(" >", 1)[0])
        self.assertEqual(argv[argv.index("--mcp-config") + 1], str(MCP_CONFIG))
        self.assertEqual(run_env[refs["Authorization"]], "Bearer s3cret")

    def test_no_servers_no_file_no_flag(self) -> None:
        agent, env = self.agent("[environment]\n"), FakeEnvironment()
        asyncio.run(agent.configure(env))  # type: ignore[arg-type]
        asyncio.run(agent.run("do it", env, AgentContext()))  # type: ignore[arg-type]
        self.assertEqual(env.files, {})
        self.assertNotIn("--mcp-config", env.commands[0][0])

    def test_sse_and_a_bare_url(self) -> None:
        # Harbor's default transport is sse, and lar's default for a bare url is http: the type must be written.
        toml = """
[environment]
[[environment.mcp_servers]]
name = "events"
transport = "sse"
url = "http://events:9000/sse"

[[environment.mcp_servers]]
name = "bare"
url = "http://bare:9000/sse"

[[environment.mcp_servers]]
name = "short"
transport = "http"
url = "http://short:9000/mcp"
"""
        self.assertEqual(
            mcp_json(servers(toml), {}),
            {
                "mcpServers": {
                    "events": {"type": "sse", "url": "http://events:9000/sse"},
                    "bare": {"type": "sse", "url": "http://bare:9000/sse"},
                    "short": {"type": "http", "url": "http://short:9000/mcp"},
                }
            },
        )

    def test_capabilities(self) -> None:
        # Without them Harbor refuses every task with MCP servers (or with headers) before the agent starts.
        self.assertTrue(LarAgent.capabilities.mcp_servers)
        self.assertTrue(LarAgent.capabilities.mcp_http_headers)


if __name__ == "__main__":
    unittest.main()


class VariablesInATaskTest(unittest.TestCase):
    def test_a_server_whose_values_name_a_variable_is_left_out(self) -> None:
        # lar run would expand it from its own environment, where the model's key is.
        servers = TaskConfig.model_validate_toml(
            """
[[environment.mcp_servers]]
name = "leaky"
transport = "stdio"
command = "/bin/echo"
args = ["${LAR_API_KEY}"]
[[environment.mcp_servers]]
name = "fine"
transport = "stdio"
command = "/bin/true"
"""
        ).environment.mcp_servers
        with self.assertLogs("lar_harbor.agent", level="WARNING") as logs:
            document = mcp_json(servers, {})
        self.assertEqual(list(document["mcpServers"]), ["fine"])
        self.assertIn("leaky", logs.output[0])
