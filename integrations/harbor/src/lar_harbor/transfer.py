"""Files in and out of a trial's root, always through tar inside the sandbox.

The host never opens a path inside a trial's root: the agent could have made any
part of it a symbolic link to a host file. tar inside the sandbox resolves such
links within the trial; what comes out is unpacked with tarfile's "data" filter,
which refuses links and paths that leave the destination.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
import tempfile
from pathlib import Path

from lar_harbor import sandbox

_UNPACK = 'mkdir -p -- "$1" && exec tar -x --no-same-owner -C "$1" -f -'
# --sparse: a file of holes (truncate -s 1T) stays small on its way out.
_PACK_DIR = 'cd -- "$1" && exec tar --sparse -c -f - .'
_CAT_FILE = 'if [ -f "$1" ]; then exec cat -- "$1"; else echo "not a file: $1" >&2; exit 2; fi'


def _add_tree(archive: tarfile.TarFile, source: Path, name: str, mode: int | None) -> None:
    def with_mode(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        if mode is not None and not info.issym():
            info.mode = mode
        return info

    archive.add(str(source), arcname=name, recursive=True, filter=with_mode)


def pack(entries: list[tuple[Path, str]], mode: int | None = None) -> bytes:
    """A tar of host paths, each under the member name given (a folder with its contents)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for source, name in entries:
            _add_tree(archive, source, name, mode)
    return buffer.getvalue()


async def unpack_into(root: Path, archive: bytes, target_dir: str, *, network: bool = False) -> None:
    """Unpack `archive` into `target_dir` of the trial (created if missing)."""
    done = await sandbox.run(
        root,
        ["/bin/sh", "-c", _UNPACK, "sh", target_dir],
        cwd="/",
        env=sandbox.BASE_ENV,
        network=network,
        stdin=archive,
    )
    if done.return_code != 0:
        raise RuntimeError(f"could not write {target_dir} in the sandbox: {done.stderr.strip()[-500:]}")


async def upload_dir(root: Path, source_dir: Path, target_dir: str) -> None:
    source = Path(source_dir)
    if not source.is_dir():
        raise FileNotFoundError(f"not a folder: {source}")
    await unpack_into(root, pack([(source, ".")]), target_dir)


async def upload_file(root: Path, source_path: Path, target_path: str) -> None:
    source = Path(source_path)
    if not source.is_file():
        raise FileNotFoundError(f"not a file: {source}")
    parent, name = posixpath.split(posixpath.normpath(target_path))
    await unpack_into(root, pack([(source, name)]), parent or "/")


async def download_dir(root: Path, source_dir: str, target_dir: Path) -> None:
    with tempfile.TemporaryFile() as spool:
        done = await sandbox.run(
            root,
            ["/bin/sh", "-c", _PACK_DIR, "sh", source_dir],
            cwd="/",
            env=sandbox.BASE_ENV,
            network=False,
            stdout_to=spool,
        )
        if done.return_code != 0:
            raise RuntimeError(f"could not read {source_dir} in the sandbox: {done.stderr.strip()[-500:]}")
        spool.seek(0)
        Path(target_dir).mkdir(parents=True, exist_ok=True)
        skipped: list[str] = []

        def safe(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
            # A link out of the folder or a device is left behind, the rest still comes.
            try:
                return tarfile.data_filter(member, path)
            except tarfile.FilterError:
                skipped.append(member.name)
                return None

        with tarfile.open(fileobj=spool, mode="r:") as archive:
            archive.extractall(Path(target_dir), filter=safe)
        if skipped:
            note = Path(target_dir) / "lar-harbor-skipped.txt"
            note.write_text(
                "Left in the sandbox (a link that leaves the folder, or not a file):\n" + "\n".join(skipped) + "\n"
            )


async def download_file(root: Path, source_path: str, target_path: Path) -> None:
    target = Path(target_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as spool:
        try:
            done = await sandbox.run(
                root,
                ["/bin/sh", "-c", _CAT_FILE, "sh", source_path],
                cwd="/",
                env=sandbox.BASE_ENV,
                network=False,
                stdout_to=spool,
            )
            if done.return_code != 0:
                raise FileNotFoundError(f"{source_path}: {done.stderr.strip()[-500:]}")
            spool.flush()
            Path(spool.name).replace(target)
        finally:
            Path(spool.name).unlink(missing_ok=True)
