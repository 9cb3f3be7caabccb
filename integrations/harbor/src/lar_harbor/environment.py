"""LocalSandboxEnvironment: a Harbor environment for machines without Docker (`-e lar_harbor:LocalSandboxEnvironment`).

Each trial gets a fresh copy of the task's environment, built from its
Dockerfile on the host (lar_harbor.image), and every command runs in bubblewrap
with the host's tools read-only. What the Dockerfile asks that the host cannot
reproduce refuses the task before the agent starts.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from harbor.environments.base import BaseEnvironment, ExecResult, SandboxBuildFailedError
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.options import EnvironmentOptions
from harbor.models.task.config import NetworkMode
from pydantic import Field

from lar_harbor import image, sandbox, transfer
from lar_harbor.dockerfile import BuildPlan, DockerfileRefused, parse_file
from lar_harbor.forward import INSIDE_DIR, INSIDE_SCRIPT, PRELUDE, EndpointNotAllowed, Forwards

_ROOT_USERS: tuple[object, ...] = (None, "root", 0, "0")
_LOG_DIRS = ("/logs/agent", "/logs/verifier", "/logs/artifacts")


def cache_dir() -> Path:
    """Where built environments are kept: $LAR_CACHE_DIR, else ~/.cache/lean4-agentic (as the rest of lar)."""
    own = os.environ.get("LAR_CACHE_DIR")
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "lean4-agentic"


class LocalSandboxOptions(EnvironmentOptions):
    keep_root: bool = Field(default=False, description="Keep each trial's root folder after the trial, for debugging.")


class LocalSandboxEnvironment(BaseEnvironment):
    options_model: ClassVar[type[EnvironmentOptions] | None] = LocalSandboxOptions

    _plan: BuildPlan

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        options = self.options
        self._keep_root = isinstance(options, LocalSandboxOptions) and options.keep_root
        # A folder of our own (mkdtemp: unique, 0700), so no other user of a shared /tmp can lay a link in its place.
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", self.session_id)[:60]
        self._root = Path(tempfile.mkdtemp(prefix=f"lar-harbor-{name}-")) / "root"
        self._forwards = Forwards()

    @staticmethod
    def type() -> str:
        return "lar-sandbox"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        # No network is a network namespace of its own; an allowlist is what Harbor adds for the
        # model's endpoint, which reach() forwards (a task's own allowlist is refused).
        return EnvironmentCapabilities(
            disable_internet=True,
            network_allowlist=True,
            network_allowlist_hostnames=True,
            network_allowlist_ipv4_addresses=True,
            network_allowlist_ipv6_addresses=True,
        )

    def _validate_definition(self) -> None:
        # A task this environment cannot reproduce is refused in start(), so the refusal is that
        # trial's result (Harbor records it and grades nothing) instead of stopping the whole job.
        self._refusal: str | None = None
        try:
            self._plan = self._read_definition()
        except DockerfileRefused as exc:
            self._refusal = str(exc)

    def _read_definition(self) -> BuildPlan:
        name = self.environment_name
        if self.task_env_config.docker_image:
            raise DockerfileRefused(
                f"{name}: the task names the image {self.task_env_config.docker_image!r}; LocalSandboxEnvironment "
                "builds from environment/Dockerfile with the host's tools and cannot run an image (use -e docker)"
            )
        if self.task_env_config.network_mode == NetworkMode.ALLOWLIST:
            raise DockerfileRefused(
                f"{name}: the task's network allowlist cannot be enforced by LocalSandboxEnvironment "
                "(it forwards only the model's endpoint); use -e docker"
            )
        dockerfile = self.environment_dir / "Dockerfile"
        if not dockerfile.is_file():
            compose = [p.name for p in self.environment_dir.glob("docker-compose*.y*ml")]
            what = f"a compose file ({compose[0]})" if compose else "no environment/Dockerfile"
            raise DockerfileRefused(f"{name}: {what}; LocalSandboxEnvironment needs a Dockerfile")
        if self._host_mounts:  # the user's --mounts (auto_mounting, which would add ours, is refused by Harbor)
            raise DockerfileRefused(f"{name}: LocalSandboxEnvironment mounts no host folder into a trial (--mounts)")
        if (self.environment_dir / ".dockerignore").exists():
            raise DockerfileRefused(f"{name}: a .dockerignore is not supported by LocalSandboxEnvironment")
        try:
            return parse_file(dockerfile)
        except DockerfileRefused as exc:
            raise DockerfileRefused(f"{name}: LocalSandboxEnvironment refuses this task: {exc}") from None

    @property
    def _network(self) -> bool:
        return self._network_policy.network_mode == NetworkMode.PUBLIC

    async def start(self, force_build: bool) -> None:
        if self._refusal is not None:
            raise SandboxBuildFailedError(self._refusal)
        policy = self._network_policy
        if policy.network_mode == NetworkMode.ALLOWLIST and len(policy.allowed_hosts) > 1:
            # Only the agent's model endpoint is forwarded (reach()); more hosts could not be let through.
            raise SandboxBuildFailedError(
                f"{self.environment_name}: LocalSandboxEnvironment lets through one host, the agent's model endpoint, "
                f"not {', '.join(policy.allowed_hosts)} (use -e docker)"
            )
        sandbox.bwrap_path()
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", self.environment_name)[:40]
        key = f"{name}-{self.environment_id[:16]}-{'net' if self._network else 'nonet'}"
        # Copied while the image is held: a --force-build of another trial cannot remove it mid-copy.
        await image.ensure_image(
            cache_dir() / "harbor-images",
            key,
            self.environment_dir,
            self._plan,
            network=self._network,
            rebuild=force_build,
            copy_to=self._root,
        )
        # Inside the sandbox: a link the task's files put at /logs is resolved in the trial, never on the host.
        made = await sandbox.run(
            self._root,
            ["/bin/sh", "-c", 'mkdir -p -- "$@" && chmod 777 -- "$@"', "sh", *_LOG_DIRS],
            cwd="/",
            env=sandbox.BASE_ENV,
            network=False,
        )
        if made.return_code != 0:
            raise SandboxBuildFailedError(f"{self.environment_name}: cannot make {', '.join(_LOG_DIRS)}: {made.stderr}")

    async def reach(self, url: str) -> str:
        """The URL an agent inside uses for the model endpoint `url` (forwarded when the trial has no network)."""
        policy = self._network_policy
        if policy.network_mode == NetworkMode.PUBLIC:
            return url
        if policy.network_mode == NetworkMode.NO_NETWORK:
            raise EndpointNotAllowed(f"the trial has no network, and Harbor allowed no inference host for {url}")
        return await self._forwards.reach(url, policy.allowed_hosts)

    async def stop(self, delete: bool) -> None:
        await self._forwards.close()
        if self._keep_root:
            self.logger.info(f"trial root kept at {self._root}")
            return
        await asyncio.to_thread(image.remove_tree, self._root.parent)

    def _check_user(self, user: str | int | None) -> None:
        if self._resolve_user(user) not in _ROOT_USERS:
            raise RuntimeError(
                f"LocalSandboxEnvironment runs every command as root of its own user namespace; "
                f"it cannot run as user {self._resolve_user(user)!r}"
            )

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        self._check_user(user)
        merged = {**self._plan.env, "HOME": "/root", **self._startup_env(), **(self._merge_env(env) or {})}
        argv = ["bash", "-c", command]
        binds: tuple[tuple[str, str], ...] = ()
        if self._forwards.directory is not None:
            argv = ["/bin/sh", "-c", PRELUDE, "sh", INSIDE_SCRIPT, command]
            binds = ((str(self._forwards.directory), INSIDE_DIR),)
        done = await sandbox.run(
            self._root,
            argv,
            cwd=cwd or self.task_env_config.workdir or self._plan.workdir,
            env=merged,
            network=self._network,
            timeout_sec=timeout_sec,
            binds=binds,
        )
        # Harbor's live log (a phase's output callback), once the command is done: no stream mode here.
        emit = self._output_callback()
        if emit is not None:
            if done.stdout:
                await emit(done.stdout, "stdout")
            if done.stderr:
                await emit(done.stderr, "stderr")
        return ExecResult(stdout=done.stdout, stderr=done.stderr, return_code=done.return_code)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        await transfer.upload_file(self._root, Path(source_path), target_path)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        await transfer.upload_dir(self._root, Path(source_dir), target_dir)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        await transfer.download_file(self._root, source_path, Path(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        await transfer.download_dir(self._root, source_dir, Path(target_dir))
