"""A trial's sandbox as the agent and Harbor meet it: confinement, transfers that cannot reach the host, bounds."""

import asyncio
import subprocess
import tempfile
import threading
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from harbor.environments.base import SandboxBuildFailedError
from harbor.models.task.config import EnvironmentConfig
from harbor.models.trial.paths import TrialPaths

from lar_harbor import image, sandbox, transfer
from lar_harbor.dockerfile import parse
from lar_harbor.environment import LocalSandboxEnvironment
from lar_harbor.forward import INSIDE_DIR, INSIDE_SCRIPT, PRELUDE, EndpointNotAllowed, Forwards

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root"}


def sh(root: Path, command: str, **kwargs: object) -> sandbox.Outcome:
    return asyncio.run(sandbox.run(root, ["bash", "-c", command], cwd="/", env=ENV, network=False, **kwargs))  # type: ignore[arg-type]


class Trial(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="lar-harbor-test-"))
        context = self.scratch / "context"
        context.mkdir()
        (context / "data.txt").write_text("data\n")
        plan = parse("FROM debian\nWORKDIR /app\nCOPY data.txt ./\nRUN echo built > built.txt\n")
        built = asyncio.run(
            image.ensure_image(self.scratch / "images", "t", context, plan, network=False, rebuild=False)
        )
        self.root = self.scratch / "trial" / "root"
        image.copy_root(built, self.root)

    def tearDown(self) -> None:
        image.remove_tree(self.scratch)

    def test_the_build_ran_and_the_trial_writes_only_its_own_root(self) -> None:
        done = sh(self.root, "cat /app/data.txt /app/built.txt; touch /usr/x 2>&1; echo new > /etc/motd-lar; id -u")
        self.assertEqual(done.stdout.splitlines()[:2], ["data", "built"])
        self.assertIn("Read-only file system", done.stdout)
        self.assertEqual(done.stdout.splitlines()[-1], "0")
        self.assertTrue((self.root / "etc" / "motd-lar").exists())
        self.assertFalse(Path("/etc/motd-lar").exists())

    def test_no_host_secret_or_folder_is_in_view(self) -> None:
        marker = Path(tempfile.gettempdir()) / f"lar-host-{uuid.uuid4().hex}"
        marker.write_text("host")
        try:
            done = sh(self.root, f"ls /etc/shadow /etc/ssh {marker} {Path.home()}/.bash_history 2>&1; ls -A /root")
        finally:
            marker.unlink()
        self.assertEqual(done.stdout.count("No such file or directory"), 4, done.stdout)

    def test_no_network(self) -> None:
        server = HTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
        port = server.server_address[1]
        try:
            code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
            done = sh(self.root, f'python3 -c "{code}" 2>&1')
        finally:
            server.server_close()
        self.assertNotEqual(done.return_code, 0)
        self.assertIn("Connection refused", done.stdout)

    def test_a_timeout_kills_everything_the_command_started(self) -> None:
        tag = uuid.uuid4().hex
        with self.assertRaises(RuntimeError) as caught:
            sh(self.root, f"sleep 300 & exec -a lar-{tag} sleep 300", timeout_sec=1)
        self.assertIn("timed out", str(caught.exception))
        left = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True)
        self.assertEqual(left.stdout, "")

    def test_output_is_bounded(self) -> None:
        done = sh(self.root, f"head -c {sandbox.OUTPUT_LIMIT + 5000} /dev/zero | tr '\\0' x")
        self.assertIn("5000 more bytes of output were dropped", done.stdout)
        self.assertLess(len(done.stdout), sandbox.OUTPUT_LIMIT + 200)

    def test_downloads_leave_links_out_of_the_folder_behind(self) -> None:
        sh(
            self.root,
            "mkdir -p /logs/agent && cd /logs/agent && echo ok > run.txt"
            " && ln -s /etc/passwd pw && ln -s ../../../../../../etc/hostname up",
        )
        target = self.scratch / "out"
        asyncio.run(transfer.download_dir(self.root, "/logs/agent", target))
        self.assertEqual((target / "run.txt").read_text(), "ok\n")
        self.assertFalse((target / "pw").exists() or (target / "pw").is_symlink())
        self.assertFalse((target / "up").exists() or (target / "up").is_symlink())
        self.assertIn("pw", (target / "lar-harbor-skipped.txt").read_text())

    def test_uploads_through_a_planted_link_stay_in_the_trial(self) -> None:
        sh(self.root, "ln -s /etc /up")
        source = self.scratch / "marker.txt"
        source.write_text("mine")
        asyncio.run(transfer.upload_file(self.root, source, f"/up/lar-{uuid.uuid4().hex}"))
        self.assertEqual([p.name for p in Path("/etc").glob("lar-*") if p.read_text() == "mine"], [])
        self.assertTrue(any(p.read_text() == "mine" for p in (self.root / "etc").glob("lar-*")))

    def test_a_build_step_the_host_cannot_run_refuses_the_task(self) -> None:
        plan = parse("FROM debian\nWORKDIR /app\nRUN apt-get install -y cowsay\n")
        with self.assertRaises(SandboxBuildFailedError) as caught:
            asyncio.run(
                image.ensure_image(self.scratch / "images", "bad", self.scratch, plan, network=False, rebuild=False)
            )
        self.assertIn("line 3", str(caught.exception))
        self.assertFalse((self.scratch / "images" / "bad").exists())

    def test_a_link_where_a_mount_point_goes_is_removed_not_followed(self) -> None:
        escape = self.scratch / "escape"
        escape.mkdir()
        # From inside, bwrap 0.8 would resolve /run through the host's root (/oldroot) to make /run/lar-net.
        sh(self.root, f"rm -rf /run && ln -s ../oldroot{escape} /run && ln -s /etc /bin2")
        net = self.scratch / "net"
        net.mkdir()
        done = asyncio.run(
            sandbox.run(self.root, ["true"], cwd="/", env=ENV, network=False, binds=((str(net), "/run/lar-net"),))
        )
        self.assertEqual(done.return_code, 0, done.stderr)
        self.assertEqual(list(escape.iterdir()), [])
        self.assertTrue((self.root / "run").is_dir() and not (self.root / "run").is_symlink())

    def test_a_sparse_file_stays_small_on_its_way_out(self) -> None:
        sh(self.root, "mkdir -p /logs/agent && truncate -s 3G /logs/agent/big && echo ok > /logs/agent/run.txt")
        target = self.scratch / "out"
        asyncio.run(transfer.download_dir(self.root, "/logs/agent", target))
        self.assertEqual((target / "run.txt").read_text(), "ok\n")
        self.assertLess((target / "big").stat().st_blocks * 512, 1 << 20)

    def test_add_of_an_archive_is_refused_whatever_its_name(self) -> None:
        context = self.scratch / "ctx"
        context.mkdir()
        (context / "f.txt").write_text("x")
        subprocess.run(["tar", "-cf", str(context / "bundle"), "-C", str(context), "f.txt"], check=True)
        plan = parse("FROM debian\nADD bundle /app/\n")
        with self.assertRaises(SandboxBuildFailedError) as caught:
            asyncio.run(image.ensure_image(self.scratch / "images", "add", context, plan, network=False, rebuild=False))
        self.assertIn("archive", str(caught.exception))


def harbors_environment(env_dir: Path, name: str) -> LocalSandboxEnvironment:
    """The environment as Harbor makes it for a trial of the task whose environment/ is `env_dir`."""
    trial = TrialPaths(trial_dir=env_dir.parent / "trial")
    trial.mkdir()
    return LocalSandboxEnvironment(
        environment_dir=env_dir,
        environment_name=name,
        session_id=f"{name}__x",
        trial_paths=trial,
        task_env_config=EnvironmentConfig(network_mode="no-network"),
    )


class Environment(unittest.TestCase):
    """LocalSandboxEnvironment as Harbor makes it."""

    def test_links_in_the_task_files_never_reach_the_host(self) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="lar-env-"))
        victim = scratch / "victim"
        victim.mkdir(mode=0o700)
        env_dir = scratch / "task" / "environment"
        (env_dir / "logs").mkdir(parents=True)
        (env_dir / "logs" / "agent").symlink_to(victim)
        (env_dir / "Dockerfile").write_text("FROM debian\nCOPY . /\n")
        env = harbors_environment(env_dir, "links")
        try:
            # The link is the trial's own: the logs cannot be made there, so the task is refused.
            with self.assertRaises(SandboxBuildFailedError):
                asyncio.run(env.start(force_build=True))
            asyncio.run(env.stop(delete=True))
        finally:
            mode = victim.stat().st_mode & 0o777
            listed = list(victim.iterdir())
            image.remove_tree(scratch)
        self.assertEqual(mode, 0o700)
        self.assertEqual(listed, [])

    def test_a_command_runs_as_harbor_asks_and_its_output_reaches_harbors_log(self) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="lar-env-"))
        env_dir = scratch / "environment"
        env_dir.mkdir()
        (env_dir / "Dockerfile").write_text("FROM debian\nENV GREETING=hello\nWORKDIR /app\n")
        env = harbors_environment(env_dir, "plain")
        seen: list[tuple[str, str]] = []

        async def log(text: str, stream: str) -> None:
            seen.append((text, stream))

        async def scenario() -> tuple[object, object]:
            await env.start(force_build=True)
            try:
                with env.scoped_output_callback(log):
                    done = await env.exec('echo "$GREETING from $PWD" && echo oops >&2', env={"EXTRA": "1"})
                with self.assertRaises(RuntimeError):
                    await env.exec("true", user="agent")
                return done.stdout, done.return_code
            finally:
                await env.stop(delete=True)

        try:
            out, code = asyncio.run(scenario())
        finally:
            image.remove_tree(scratch)
        self.assertEqual((out, code), ("hello from /app\n", 0))
        self.assertEqual(seen, [("hello from /app\n", "stdout"), ("oops\n", "stderr")])


class Forwarding(unittest.TestCase):
    def test_only_the_allowed_endpoint_is_reachable(self) -> None:
        class Hello(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"model says hi")

            def log_message(self, *args: object) -> None:
                pass

        allowed = HTTPServer(("127.0.0.1", 0), Hello)
        other = HTTPServer(("127.0.0.1", 0), Hello)
        for server in (allowed, other):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        scratch = Path(tempfile.mkdtemp(prefix="lar-fwd-"))
        root = scratch / "root"
        (root / "tmp").mkdir(parents=True)

        async def scenario() -> tuple[str, sandbox.Outcome]:
            forwards = Forwards()
            url = await forwards.reach(f"http://127.0.0.1:{allowed.server_address[1]}/v1", ["127.0.0.1"])
            with self.assertRaises(EndpointNotAllowed):
                await forwards.reach("http://gpu.example:30000/v1", ["127.0.0.1"])
            fetch = (
                "import urllib.request, sys\n"
                "for u in sys.argv[1:]:\n"
                "    try: print(urllib.request.urlopen(u, timeout=3).read().decode())\n"
                "    except Exception as e: print('refused', type(e).__name__)\n"
            )
            command = f'python3 -c "$FETCH" {url} http://127.0.0.1:{other.server_address[1]}/'
            done = await sandbox.run(
                root,
                ["/bin/sh", "-c", PRELUDE, "sh", INSIDE_SCRIPT, command],
                cwd="/",
                env={**ENV, "FETCH": fetch},
                network=False,
                binds=((str(forwards.directory), INSIDE_DIR),),
            )
            used = forwards.directory
            await forwards.close()
            self.assertFalse(used is not None and used.exists(), "the sockets' folder is removed")
            return url, done

        try:
            url, done = asyncio.run(scenario())
        finally:
            allowed.shutdown()
            other.shutdown()
            image.remove_tree(scratch)
        self.assertTrue(url.startswith("http://127.0.0.1:") and url.endswith("/v1"))
        self.assertEqual(done.stdout.splitlines(), ["model says hi", "refused URLError"], done.stderr)


if __name__ == "__main__":
    unittest.main()
