"""A task's Dockerfile read as a build plan the host can follow, or refused.

LocalSandboxEnvironment has no image: it rebuilds the task's files on the host
and runs its RUN steps with the host's tools. This module decides, before
anything runs, whether that reproduces the Dockerfile; whatever it cannot honour
is refused with the line that asked for it, never approximated.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Instructions that only describe how a container is started or labelled:
# Harbor starts the environment itself, so they change nothing it can observe.
_NO_EFFECT = {"LABEL", "MAINTAINER", "EXPOSE", "CMD", "ENTRYPOINT", "STOPSIGNAL"}
_ROOT_USERS = {"root", "0", "root:root", "0:0"}


class DockerfileRefused(Exception):
    """The Dockerfile asks for something the host cannot reproduce."""


@dataclass(frozen=True)
class Copy:
    line: int
    sources: tuple[str, ...]
    destination: str
    mode: str | None
    # ADD unpacks a local archive, whatever its name: the build checks each source's content.
    add: bool = False


@dataclass(frozen=True)
class Run:
    line: int
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    workdir: str


@dataclass(frozen=True)
class Workdir:
    line: int
    path: str


Step = Copy | Run | Workdir


@dataclass
class BuildPlan:
    base_image: str
    steps: list[Step] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"


@dataclass
class _Line:
    number: int
    instruction: str
    rest: str


def _logical_lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            # Parser directives are read only before the first instruction (any comment line there).
            if not lines and re.match(r"#\s*escape\s*=", stripped, re.IGNORECASE):
                raise DockerfileRefused(f"line {number}: the escape directive is not supported")
            continue
        if pending and stripped.startswith("#"):
            continue  # comment lines inside a continuation are dropped, as BuildKit does
        if not pending:
            start = number
        if raw.rstrip().endswith("\\"):
            pending.append(raw.rstrip()[:-1])
            continue
        pending.append(raw)
        joined = " ".join(part.strip() for part in pending).strip()
        pending = []
        word, _, rest = joined.partition(" ")
        if rest.lstrip().startswith("<<"):
            raise DockerfileRefused(f"line {start}: heredocs are not supported")
        lines.append(_Line(start, word.upper(), rest.strip()))
    if pending:
        raise DockerfileRefused(f"line {start}: the file ends inside a line continuation")
    return lines


_VAR = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:[-+])?(?P<word>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))"
)


def _expand(text: str, variables: dict[str, str], line: int) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group("braced") or match.group("plain")
        value = variables.get(name, "")
        op = match.group("op")
        if op == ":-":
            return value or match.group("word")
        if op == ":+":
            return match.group("word") if value else ""
        if match.group("braced") and match.group("word"):
            raise DockerfileRefused(f"line {line}: unsupported substitution {match.group(0)!r}")
        return value

    return _VAR.sub(one, text)


def _pairs(rest: str, line: int, what: str) -> list[tuple[str, str]]:
    try:
        words = shlex.split(rest, posix=True)
    except ValueError as exc:
        raise DockerfileRefused(f"line {line}: {what}: {exc}") from None
    if words and "=" not in words[0]:
        # The legacy form: ENV KEY the rest of the line.
        key, _, value = rest.partition(" ")
        return [(key, value.strip())]
    pairs: list[tuple[str, str]] = []
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise DockerfileRefused(f"line {line}: {what}: cannot read {word!r} as KEY=VALUE")
        pairs.append((key, value))
    return pairs


def _flags(rest: str, line: int, allowed: set[str]) -> tuple[dict[str, str], str]:
    flags: dict[str, str] = {}
    while rest.startswith("--"):
        word, _, rest = rest.partition(" ")
        rest = rest.strip()
        name, _, value = word[2:].partition("=")
        if name not in allowed:
            raise DockerfileRefused(f"line {line}: the flag --{name} is not supported")
        flags[name] = value
    return flags, rest


def _json_or_words(rest: str, line: int) -> list[str] | None:
    if not rest.startswith("["):
        return None
    try:
        parsed = json.loads(rest)
    except json.JSONDecodeError:
        return None  # Docker reads a malformed array as the shell form
    if not isinstance(parsed, list) or not all(isinstance(p, str) for p in parsed):
        raise DockerfileRefused(f"line {line}: the exec form must be an array of strings")
    return parsed


def _absolute(path: str, workdir: str) -> str:
    return posixpath.normpath(posixpath.join(workdir, path))


def _copy(line: _Line, variables: dict[str, str], workdir: str) -> Copy:
    flags, rest = _flags(line.rest, line.number, {"chown", "chmod", "link", "from"})
    if "from" in flags:
        raise DockerfileRefused(f"line {line.number}: COPY --from (a multi-stage build) is not supported")
    words = _json_or_words(rest, line.number)
    if words is None:
        try:
            words = shlex.split(rest)
        except ValueError as exc:
            raise DockerfileRefused(f"line {line.number}: {line.instruction}: {exc}") from None
    words = [_expand(w, variables, line.number) for w in words]
    if len(words) < 2:
        raise DockerfileRefused(f"line {line.number}: {line.instruction} needs a source and a destination")
    *sources, destination = words
    for source in sources:
        if re.match(r"^[a-z][a-z0-9+.-]*://", source, re.IGNORECASE) or source.startswith("git@"):
            raise DockerfileRefused(f"line {line.number}: {line.instruction} from a URL ({source}) needs the network")
        if line.instruction == "ADD" and re.search(r"\.(tar|tgz|tar\.\w+|tbz2?|txz)$", source):
            raise DockerfileRefused(f"line {line.number}: ADD of an archive ({source}) is not supported; use COPY")
    mode = flags.get("chmod") or None
    if mode is not None and not re.fullmatch(r"[0-7]{3,4}", mode):
        raise DockerfileRefused(f"line {line.number}: --chmod={mode} is not an octal mode")
    trailing = destination.endswith("/")
    dest = _absolute(destination, workdir) + ("/" if trailing and destination != "/" else "")
    return Copy(line.number, tuple(sources), dest, mode, add=line.instruction == "ADD")


def _user(rest: str, line: int, variables: dict[str, str]) -> None:
    user = _expand(rest.strip(), variables, line)
    if user not in _ROOT_USERS:
        raise DockerfileRefused(f"line {line}: USER {user}: only root can be reproduced on the host")


def parse(text: str) -> BuildPlan:
    """The plan for `text`, or DockerfileRefused naming the first line it cannot honour."""
    lines = _logical_lines(text)
    args: dict[str, str] = {}
    plan: BuildPlan | None = None
    env: dict[str, str] = {"PATH": DEFAULT_PATH}
    workdir = "/"
    for line in lines:
        variables = {**args, **env}
        if line.instruction == "ARG":
            for key, value in _pairs(line.rest, line.number, "ARG") if "=" in line.rest else [(line.rest, "")]:
                args.setdefault(key, _expand(value, variables, line.number))
            continue
        if line.instruction == "FROM":
            if plan is not None:
                raise DockerfileRefused(f"line {line.number}: a second FROM (a multi-stage build) is not supported")
            _, rest = _flags(line.rest, line.number, {"platform"})
            image = _expand(rest.split()[0] if rest else "", variables, line.number)
            if not image:
                raise DockerfileRefused(f"line {line.number}: FROM names no image")
            plan = BuildPlan(base_image=image)
            continue
        if plan is None:
            raise DockerfileRefused(f"line {line.number}: {line.instruction} before FROM")
        if line.instruction in _NO_EFFECT:
            continue
        if line.instruction == "ENV":
            for key, value in _pairs(line.rest, line.number, "ENV"):
                env[key] = _expand(value, {**args, **env}, line.number)
        elif line.instruction == "WORKDIR":
            workdir = _absolute(_expand(line.rest, variables, line.number), workdir)
            plan.steps.append(Workdir(line.number, workdir))
        elif line.instruction in ("COPY", "ADD"):
            plan.steps.append(_copy(line, variables, workdir))
        elif line.instruction == "RUN":
            _, rest = _flags(line.rest, line.number, set())
            words = _json_or_words(rest, line.number)
            argv = tuple(words) if words is not None else ("/bin/sh", "-c", rest)
            run_env = tuple(sorted({**args, **env}.items()))
            plan.steps.append(Run(line.number, argv, run_env, workdir))
        elif line.instruction == "USER":
            _user(line.rest, line.number, variables)
        else:
            raise DockerfileRefused(
                f"line {line.number}: {line.instruction} is not an instruction this environment can honour"
            )
    if plan is None:
        raise DockerfileRefused("the Dockerfile has no FROM")
    plan.env = env
    plan.workdir = workdir
    return plan


def parse_file(path: Path) -> BuildPlan:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DockerfileRefused(f"cannot read {path}: {exc}") from None
    try:
        return parse(text)
    except DockerfileRefused as exc:
        raise DockerfileRefused(f"{path.name} {exc}") from None
