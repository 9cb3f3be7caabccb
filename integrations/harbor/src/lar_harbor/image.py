"""A task's environment built once on the host, then copied fresh for every trial.

The "image" is a folder: the Dockerfile's COPY and WORKDIR steps applied to an
empty root, its RUN steps run in the sandbox with the host's tools. A build
that fails is a refusal of the task, naming the Dockerfile line.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from harbor.environments.base import SandboxBuildFailedError

from lar_harbor import sandbox, transfer
from lar_harbor.dockerfile import BuildPlan, Copy, DockerfileRefused, Run, Workdir

_BASE_DIRS = {"tmp": 0o1777, "root": 0o700, "var": 0o755, "var/tmp": 0o1777, "run": 0o755, "home": 0o755, "opt": 0o755}
_FINISHED = ".lar-image-finished"
# What of the host's /etc a trial gets, copied: what programs need to run (users, name
# resolution, the loader's cache, alternatives, certificates), never a secret (shadow, keys,
# credentials; not environment or profile.d, where proxies with passwords are often set).
_ETC = (
    "passwd", "group", "hosts", "resolv.conf", "nsswitch.conf", "host.conf", "gai.conf",
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl/certs", "ssl/openssl.cnf",
    "ca-certificates", "ca-certificates.conf", "localtime", "timezone", "os-release", "debian_version",
    "lsb-release", "bash.bashrc", "inputrc", "login.defs",
    "mime.types", "protocols", "services", "shells", "python3", "python3.11", "python3.12", "python3.13",
    "perl", "terminfo", "magic", "magic.mime",
)  # fmt: skip
_locks: dict[str, asyncio.Lock] = {}


def _sources(context: Path, step: Copy) -> list[Path]:
    base = context.resolve()
    found: list[Path] = []
    for pattern in step.sources:
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise DockerfileRefused(f"line {step.line}: COPY source {pattern} leaves the build context")
        matches = sorted(base.glob(pattern)) if any(c in pattern for c in "*?[") else [base / pattern]
        matches = [m for m in matches if m.exists() or m.is_symlink()]
        if not matches:
            raise DockerfileRefused(f"line {step.line}: COPY source {pattern} is not in the build context")
        for match in matches:
            if not match.resolve().is_relative_to(base):
                raise DockerfileRefused(f"line {step.line}: COPY source {pattern} leads outside the build context")
            found.append(match)
    return found


_ARCHIVE_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")


def _is_archive(path: Path) -> bool:
    """What Docker's ADD would unpack: a tar, plain or compressed, recognised by its content."""
    if not path.is_file() or path.is_symlink():
        return False
    with open(path, "rb") as f:
        head = f.read(512)
    return head.startswith(_ARCHIVE_MAGIC) or tarfile.is_tarfile(path)


async def _copy(root: Path, context: Path, step: Copy) -> None:
    sources = _sources(context, step)
    for source in sources if step.add else []:
        if _is_archive(source):
            raise DockerfileRefused(f"line {step.line}: ADD of an archive ({source.name}) is not supported; use COPY")
    mode = int(step.mode, 8) if step.mode else None
    into_dir = step.destination.endswith("/") or len(sources) > 1
    if not into_dir and sources[0].is_file():
        # COPY file /path/name: the file becomes /path/name, unless that is already a folder.
        probe = await sandbox.run(root, ["test", "-d", step.destination], cwd="/", env=sandbox.BASE_ENV, network=False)
        if probe.return_code != 0:
            parent, name = os.path.split(step.destination.rstrip("/"))
            await transfer.unpack_into(root, transfer.pack([(sources[0], name)], mode), parent or "/")
            return
    entries = [(s, "." if s.is_dir() and not s.is_symlink() else s.name) for s in sources]
    await transfer.unpack_into(root, transfer.pack(entries, mode), step.destination.rstrip("/") or "/")


async def _run(root: Path, step: Run, network: bool) -> None:
    env = {**dict(step.env), "HOME": "/root"}
    done = await sandbox.run(root, list(step.argv), cwd=step.workdir, env=env, network=network)
    if done.return_code != 0:
        tail = (done.stderr.strip() or done.stdout.strip())[-800:]
        command = " ".join(step.argv[2:] if step.argv[:2] == ("/bin/sh", "-c") else step.argv)
        raise SandboxBuildFailedError(
            f"Dockerfile line {step.line}: RUN {command} failed here with exit code {done.return_code} "
            f"(the host's tools stand in for the image; a step that installs packages cannot run): {tail}"
        )


def _copy_etc(root: Path) -> None:
    etc = root / "etc"
    etc.mkdir(mode=0o755, exist_ok=True)
    for name in _ETC:
        source = Path("/etc") / name
        target = etc / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), target)
        elif source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        elif source.is_file():
            shutil.copy2(source, target)


async def _build(root: Path, context: Path, plan: BuildPlan, network: bool) -> None:
    for name, mode in _BASE_DIRS.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name).chmod(mode)
    _copy_etc(root)
    for step in plan.steps:
        if isinstance(step, Workdir):
            await sandbox.run(root, ["mkdir", "-p", "--", step.path], cwd="/", env=sandbox.BASE_ENV, network=False)
        elif isinstance(step, Copy):
            try:
                await _copy(root, context, step)
            except DockerfileRefused as exc:
                raise SandboxBuildFailedError(f"Dockerfile {exc}") from None
        else:
            await _run(root, step, network)
    await sandbox.run(root, ["mkdir", "-p", "--", plan.workdir], cwd="/", env=sandbox.BASE_ENV, network=False)


async def ensure_image(
    images: Path, key: str, context: Path, plan: BuildPlan, *, network: bool, rebuild: bool, copy_to: Path | None = None
) -> Path:
    """The built root for `key`, built first unless a finished one is there (or `rebuild`); copied to `copy_to`."""
    lock = _locks.setdefault(key, asyncio.Lock())
    async with lock:
        images.mkdir(parents=True, exist_ok=True)
        final = images / key
        with open(images / f"{key}.lock", "w") as lock_file:
            await asyncio.to_thread(fcntl.flock, lock_file, fcntl.LOCK_EX)
            if (final / _FINISHED).exists() and not rebuild:
                if copy_to is not None:
                    await asyncio.to_thread(copy_root, final / "root", copy_to)
                return final / "root"
            building = images / f"{key}.building"
            remove_tree(building)
            remove_tree(final)
            (building / "root").mkdir(parents=True)
            try:
                await _build(building / "root", context, plan, network)
            except BaseException:
                remove_tree(building)
                raise
            (building / _FINISHED).touch()
            building.rename(final)
            if copy_to is not None:
                await asyncio.to_thread(copy_root, final / "root", copy_to)
            return final / "root"


def copy_root(image_root: Path, trial_root: Path) -> None:
    """A fresh copy of the image for one trial (cp keeps links as links and shares blocks where it can)."""
    trial_root.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", "--reflink=auto", str(image_root), str(trial_root)], check=True)


def remove_tree(path: Path) -> None:
    """Remove a trial's or image's folder even where the task made folders read-only."""
    if not path.exists() and not path.is_symlink():
        return

    def writable(function: object, name: str, _exc: BaseException) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(name), 0o700)
            if os.path.isdir(name) and not os.path.islink(name):
                os.chmod(name, 0o700)
                shutil.rmtree(name, onexc=writable)
            else:
                os.unlink(name)

    shutil.rmtree(path, onexc=writable)
