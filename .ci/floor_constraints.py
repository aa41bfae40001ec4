"""Print pip constraints pinning each runtime dependency and extra at its floor.

With ``--dev``, print instead the ``dev`` extra's requirements that install
beside the floors (all but :data:`NOT_AT_FLOORS`).

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

EXTRAS = ("pandas", "stats", "zstd", "plot", "spark")
#: Development oracles that cannot install beside the floors (tea-tasting
#: 1.14 needs numpy 1.25, pyarrow 16 and scipy 1.11); the floor pass leaves
#: them out and their tests say they skip
NOT_AT_FLOORS = ("tea-tasting",)


def dev_requirements(project: dict) -> list[str]:
    """Return the ``dev`` extra's requirements, without those of :data:`NOT_AT_FLOORS`."""
    return [
        requirement
        for requirement in project["optional-dependencies"]["dev"]
        if re.split(r"[<>=!~ \[;]", requirement, maxsplit=1)[0].lower()
        not in NOT_AT_FLOORS
    ]


def main() -> int:
    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    if sys.argv[1:] == ["--dev"]:
        print("\n".join(dev_requirements(project)))
        return 0
    requirements = list(project["dependencies"])
    for extra in EXTRAS:
        requirements += project["optional-dependencies"][extra]
    pins = {}
    for requirement in requirements:
        match = re.fullmatch(
            r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9.]+)\s*(,.*)?", requirement
        )
        if match is None:
            print(f"no '>=' floor in {requirement!r}", file=sys.stderr)
            return 1
        pins[match.group(1).lower()] = match.group(2)
    for name, version in sorted(pins.items()):
        print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
