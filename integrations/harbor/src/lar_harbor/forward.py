"""The model's endpoint reachable from a trial that has no network of its own.

Harbor lets an agent reach its inference host even in a `no-network` task (it
adds the host to an allowlist). A sandbox with its own empty network namespace
has no route anywhere, so each allowed endpoint gets a pair of forwarders: inside,
one listens on the sandbox's loopback at the endpoint's port and hands each
connection to a Unix socket; outside, this module connects it to that one
host and port. Nothing else leaves the sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

INSIDE_DIR = "/run/lar-net"
INSIDE_PORT = 47291

# Runs inside with the host's python3: listens on each <port>.sock's port, returns
# once listening (the server goes on in the background until the sandbox ends).
INSIDE_SCRIPT = r"""
import os, socket, sys, threading
d = sys.argv[1]
pairs = []
for name in sorted(os.listdir(d)):
    if name.endswith(".sock"):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", int(name[:-5])))
        s.listen(64)
        pairs.append((s, os.path.join(d, name)))
if os.fork():
    os._exit(0)
os.setsid()
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def serve(listener, path):
    while True:
        conn, _ = listener.accept()
        out = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            out.connect(path)
        except OSError:
            conn.close()
            continue
        threading.Thread(target=pipe, args=(conn, out), daemon=True).start()
        threading.Thread(target=pipe, args=(out, conn), daemon=True).start()
threads = [threading.Thread(target=serve, args=p) for p in pairs]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""

# Starts the inside half, then the command; a forwarder that cannot start fails the command visibly.
PRELUDE = (
    'python3 -c "$1" '
    + INSIDE_DIR
    + " || { echo 'lar-harbor: the model endpoint forwarder did not start' >&2; exit 97; }; "
    'exec bash -c "$2"'
)


class EndpointNotAllowed(RuntimeError):
    """The endpoint's host is not one the trial's network policy lets through."""


class Forwards:
    """The outside halves for one trial: a Unix socket per allowed endpoint, in `directory` once there is one."""

    def __init__(self) -> None:
        # Unix socket paths are short (108 bytes): a folder of their own, made at the first endpoint.
        self.directory: Path | None = None
        self._servers: dict[int, asyncio.Server] = {}
        self._targets: dict[int, tuple[str, int]] = {}

    async def reach(self, url: str, allowed_hosts: list[str]) -> str:
        """The URL to use inside for `url`: the same path on the sandbox's loopback, at a forwarded port."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.scheme != "http":
            raise EndpointNotAllowed(
                f"{url}: only an http:// endpoint can be forwarded into a task without network "
                "(a TLS name cannot be kept on the sandbox's loopback); use -e docker for this one"
            )
        if host not in {h.lower() for h in allowed_hosts}:
            raise EndpointNotAllowed(f"{host} is not among the hosts this trial may reach ({', '.join(allowed_hosts)})")
        port = parts.port or 80
        # An unusual port of the sandbox's loopback, not the endpoint's own (8000, 30000): a task's
        # server or its tests may want that one.
        inside = next((p for p, t in self._targets.items() if t == (host, port)), INSIDE_PORT + len(self._targets))
        if inside not in self._servers:
            if self.directory is None:
                self.directory = Path(tempfile.mkdtemp(prefix="lar-net-"))
            target = (host, port)
            self._targets[inside] = target

            async def carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                await self._carry(reader, writer, target)

            self._servers[inside] = await asyncio.start_unix_server(carry, path=str(self.directory / f"{inside}.sock"))
        netloc = f"127.0.0.1:{inside}"
        if parts.username:
            netloc = f"{parts.username}{':' + parts.password if parts.password else ''}@{netloc}"
        return urlunsplit(("http", netloc, parts.path, parts.query, parts.fragment))

    async def _carry(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, target: tuple[str, int]) -> None:
        try:
            far_reader, far_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(OSError):
                dst.close()

        await asyncio.gather(pump(reader, far_writer), pump(far_reader, writer))

    async def close(self) -> None:
        for server in self._servers.values():
            server.close()
        self._servers.clear()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
