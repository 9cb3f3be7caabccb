"""The Dockerfile reader: what it reproduces, and that it refuses, naming the line, what it cannot."""

import unittest

from lar_harbor.dockerfile import Copy, DockerfileRefused, Run, Workdir, parse


class Reads(unittest.TestCase):
    def test_a_typical_task(self) -> None:
        plan = parse(
            "# syntax=docker/dockerfile:1\n"
            "FROM python:3.12-slim-bookworm AS base\n"
            "ARG NAME=app\n"
            'ENV LANG=C.UTF-8 \\\n    GREETING="hello world"\n'
            "WORKDIR /${NAME}\n"
            "COPY --chmod=755 run.sh data/ ./\n"
            "RUN echo $GREETING > built.txt\n"
            'CMD ["sleep", "infinity"]\n'
        )
        self.assertEqual(plan.base_image, "python:3.12-slim-bookworm")
        self.assertEqual(plan.workdir, "/app")
        self.assertEqual(plan.env["GREETING"], "hello world")
        workdir, copy, run = plan.steps
        self.assertEqual(workdir, Workdir(6, "/app"))
        assert isinstance(copy, Copy) and isinstance(run, Run)
        self.assertEqual(copy.sources, ("run.sh", "data/"))
        self.assertEqual(copy.destination, "/app/")
        self.assertEqual(copy.mode, "755")
        self.assertEqual(run.argv, ("/bin/sh", "-c", "echo $GREETING > built.txt"))
        self.assertEqual(run.workdir, "/app")
        self.assertIn(("NAME", "app"), run.env)

    def test_legacy_env_exec_form_and_relative_workdir(self) -> None:
        plan = parse('FROM debian\nENV PATH_EXTRA /opt/x y\nWORKDIR /srv\nWORKDIR sub\nRUN ["make", "all"]\n')
        self.assertEqual(plan.env["PATH_EXTRA"], "/opt/x y")
        self.assertEqual(plan.workdir, "/srv/sub")
        self.assertEqual(plan.steps[-1], Run(5, ("make", "all"), plan.steps[-1].env, "/srv/sub"))  # type: ignore[union-attr]

    def test_root_user_is_fine(self) -> None:
        parse("FROM debian\nUSER root\nUSER 0:0\n")


class Refuses(unittest.TestCase):
    def refused(self, text: str, *words: str) -> None:
        with self.assertRaises(DockerfileRefused) as caught:
            parse(text)
        for word in words:
            self.assertIn(word, str(caught.exception))

    def test_what_the_host_cannot_reproduce(self) -> None:
        self.refused("FROM a\nFROM b\n", "line 2", "multi-stage")
        self.refused("FROM a\nCOPY --from=build /x /y\n", "line 2", "--from")
        self.refused("FROM a\nADD https://example.com/x.tgz /x\n", "line 2", "URL")
        self.refused("FROM a\nADD src.tar.gz /x\n", "archive")
        self.refused("FROM a\nVOLUME /data\n", "line 2", "VOLUME")
        self.refused("FROM a\nHEALTHCHECK CMD true\n", "HEALTHCHECK")
        self.refused('FROM a\nSHELL ["/bin/bash", "-c"]\n', "SHELL")
        self.refused("FROM a\nUSER agent\n", "USER agent")
        self.refused("FROM a\nRUN --mount=type=cache,target=/x true\n", "--mount")
        self.refused("FROM a\nRUN <<EOF\necho\nEOF\n", "heredoc")
        self.refused("RUN true\n", "before FROM")
        self.refused("# nothing\n", "no FROM")
        self.refused("FROM a\nRUN echo \\\n", "continuation")
        self.refused("# escape=`\nFROM a\n", "escape")


if __name__ == "__main__":
    unittest.main()
