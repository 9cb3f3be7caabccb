"""One command in a trial's bubblewrap sandbox: the host's tools read-only, the trial's root writable.

A trial's root is a host folder bound at `/`; the host's /usr is laid over it
read-only, so the task sees the host's tools but writes only its own files.
Every file transfer also runs inside the sandbox (tar), so a symbolic link the
agent planted is resolved in the trial's root, never on the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from lar_harbor.dockerfile import DEFAULT_PATH

# The host folder the trial sees read-only: the tools. Its /etc is a curated copy
# of the host's (lar_harbor.image), so no host secret is in view and the task may change it.
_READ_ONLY = ("usr",)
# Merged-/usr links (/bin → usr/bin …) are recreated; real folders are bound read-only.
_SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")

# What our own commands in a trial (transfers, the build's folders) run with: a container's defaults.
BASE_ENV = {"PATH": DEFAULT_PATH, "HOME": "/root"}

# What one command may print before the rest is dropped: Harbor keeps output in memory.
OUTPUT_LIMIT = 8 * 1024 * 1024
# What one download may bring to the host's disk (a trial's files are the trial's to fill, not the host's).
DOWNLOAD_LIMIT = 2 * 1024 * 1024 * 1024


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create its namespaces here."""


@dataclass(frozen=True)
class Outcome:
    stdout: str
    stderr: str
    return_code: int


def bwrap_path() -> str:
    found = shutil.which("bwrap")
    if not found:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed: LocalSandboxEnvironment runs each trial in it "
            "(Debian/Ubuntu: apt-get install bubblewrap)"
        )
    return found


def real_folders(root: Path, target: str) -> None:
    """Every part of `target` under `root` a real folder, as bwrap needs a mount point to be.

    Between two commands nothing of the trial runs, so a link the trial left where a mount
    point goes (bwrap would resolve it from outside the new root) is removed here first.
    """
    current = root
    for part in PurePosixPath(target).parts[1:]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            current.mkdir()
            continue
        if stat.S_ISDIR(mode):
            continue
        current.unlink()  # a link, a file, a FIFO: never followed
        current.mkdir()


def _system_args(root: Path) -> list[str]:
    args: list[str] = []
    for name in _READ_ONLY:
        real_folders(root, f"/{name}")
        args += ["--ro-bind", f"/{name}", f"/{name}"]
    for name in _SYSTEM_LINKS:
        host = Path("/") / name
        mine = root / name
        if not (host.is_symlink() or host.is_dir()):
            continue
        try:
            mode: int | None = os.lstat(mine).st_mode
        except FileNotFoundError:
            mode = None
        target = os.readlink(host) if host.is_symlink() else None
        if mode is not None and stat.S_ISLNK(mode) and target is not None and os.readlink(mine) == target:
            continue  # the link a former command's bwrap made
        if mode is not None and not stat.S_ISDIR(mode):
            mine.unlink()  # a link the trial made elsewhere, or a file: never followed
            mode = None
        if mode is None and target is not None:
            args += ["--symlink", target, f"/{name}"]
        else:
            real_folders(root, f"/{name}")
            args += ["--ro-bind", str(host.resolve()), f"/{name}"]
    return args


def command_line(
    root: Path,
    argv: list[str],
    *,
    cwd: str,
    network: bool,
    binds: tuple[tuple[str, str], ...] = (),
) -> list[str]:
    """The bwrap command line that runs `argv` as root of a new user namespace inside `root`.

    The environment is not on it (a host's other users read command lines): bwrap passes its own on.
    """
    args = [bwrap_path(), "--unshare-all", "--unshare-user"]
    if network:
        args.append("--share-net")
    args += ["--die-with-parent", "--bind", str(root), "/", *_system_args(root)]
    for source, target in binds:
        real_folders(root, target)
        args += ["--bind", source, target]
    for target in ("/proc", "/dev"):
        real_folders(root, target)
    args += ["--proc", "/proc", "--dev", "/dev", "--uid", "0", "--gid", "0", "--chdir", cwd]
    return [*args, "--", *argv]


async def _read_bounded(stream: asyncio.StreamReader | None) -> str:
    if stream is None:
        return ""
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(65536):
        room = OUTPUT_LIMIT - len(kept)
        kept += chunk[:room]
        dropped += max(0, len(chunk) - room)
    text = kept.decode(errors="replace")
    if dropped:
        text += f"\n[lar-harbor: {dropped} more bytes of output were dropped]\n"
    return text


async def _copy_out(stream: asyncio.StreamReader | None, sink: IO[bytes]) -> str:
    written = 0
    if stream is not None:
        while chunk := await stream.read(1 << 20):
            written += len(chunk)
            if written > DOWNLOAD_LIMIT:
                raise RuntimeError(f"more than {DOWNLOAD_LIMIT >> 30} GiB to copy out of the trial: refused")
            sink.write(chunk)
    return ""


async def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    # bwrap leads its own session: killing the group takes the sandbox's first
    # process, and with it (a PID namespace) everything it started.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    await process.wait()


async def run(
    root: Path,
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    network: bool,
    timeout_sec: float | None = None,
    stdin: bytes | None = None,
    stdout_to: IO[bytes] | None = None,
    binds: tuple[tuple[str, str], ...] = (),
) -> Outcome:
    """Run `argv` in the sandbox; a timeout or a cancellation kills everything it started.

    With `stdout_to` the output goes there whole (a download), else it is kept up to OUTPUT_LIMIT.
    """
    process = await asyncio.create_subprocess_exec(
        *command_line(root, argv, cwd=cwd, network=network, binds=binds),
        env=env,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )

    async def feed() -> None:
        if stdin is None or process.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(stdin)
            await process.stdin.drain()
        process.stdin.close()

    async def whole() -> tuple[str, str, int]:
        out_reader = _copy_out(process.stdout, stdout_to) if stdout_to else _read_bounded(process.stdout)
        _, out, err = await asyncio.gather(feed(), out_reader, _read_bounded(process.stderr))
        return out, err, await process.wait()

    try:
        # 0 is no timeout, as for Docker's exec.
        out, err, code = await asyncio.wait_for(whole(), timeout=timeout_sec or None)
    except TimeoutError:
        await _kill(process)
        raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None
    except BaseException:
        await _kill(process)
        raise
    return Outcome(out, err, code)
