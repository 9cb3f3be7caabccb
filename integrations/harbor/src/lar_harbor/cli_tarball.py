"""Where the `lar` CLI's npm tarball is: the one LarAgent uploads into every task's environment.

`npm run package` writes it to out/cli/ of the clone; an installed copy of this
package finds it there through LAR_CLI_TARBALL or `--ak cli_tarball=PATH`.
"""

from __future__ import annotations

import os
from pathlib import Path

_NAME = "lean4-agentic-lar-*.tgz"


def _clone_out() -> Path:
    # src/lar_harbor/ → integrations/harbor/src/lar_harbor: the clone is four folders up.
    return Path(__file__).resolve().parents[4] / "out" / "cli"


def find_tarball(explicit: str | None = None) -> Path:
    """The tarball to install: the one named, else $LAR_CLI_TARBALL, else the clone's only one."""
    named = explicit or os.environ.get("LAR_CLI_TARBALL")
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"the lar CLI tarball {path} does not exist (build it with `npm run package`)")
        return path
    found = sorted(_clone_out().glob(_NAME))
    if len(found) == 1:
        return found[0]
    if not found:
        raise FileNotFoundError(
            f"no lar CLI tarball in {_clone_out()}: run `npm run package` in the clone, "
            "or pass --ak cli_tarball=PATH (or set LAR_CLI_TARBALL)"
        )
    names = ", ".join(p.name for p in found)
    raise FileNotFoundError(
        f"several lar CLI tarballs in {_clone_out()} ({names}): name one with --ak cli_tarball=PATH"
    )
