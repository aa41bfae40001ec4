"""Print pip constraints pinning each runtime dependency and extra at its floor.

``.ci/run`` installs the package with these constraints beside the newest
versions, so the floors declared in ``pyproject.toml`` are proven, not
hoped: ``polars>=2.1`` becomes ``polars==2.1``. The development tools
(pytest, ruff, mypy, ...) are not pinned: their floors say which of their
features the suite uses, not what users get.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

EXTRAS = ("pandas", "stats", "zstd")


def main() -> int:
    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in EXTRAS:
        requirements += project["optional-dependencies"][extra]
    pins = {}
    for requirement in requirements:
        match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9.]+)\s*(,.*)?", requirement)
        if match is None:
            print(f"no '>=' floor in {requirement!r}", file=sys.stderr)
            return 1
        pins[match.group(1).lower()] = match.group(2)
    for name, version in sorted(pins.items()):
        print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
