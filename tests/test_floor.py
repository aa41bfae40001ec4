"""The dependency floors in pyproject.toml are true, and CI proves them.

``.ci/run`` runs the whole suite a second time with every runtime
dependency and extra pinned at the lowest version ``pyproject.toml``
declares (``.ci/floor_constraints.py``). The declared polars floor was
``>=1.20`` once, and no 1.x release passed (see docs/install.md); this file
keeps the declaration, the import-time check and CI in step.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ireval_df._utils.versions import POLARS_FLOOR, check_polars

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_polars_floor_is_declared_once() -> None:
    declared = [d for d in _project()["dependencies"] if d.startswith("polars")]
    floor = ".".join(map(str, POLARS_FLOOR))
    assert declared == [f"polars>={floor}"]


@pytest.mark.parametrize("version", ["1.20.0", "1.44.2", "2.0.0", "0.20.31"])
def test_an_older_polars_is_refused_naming_the_fix(version: str) -> None:
    with pytest.raises(ImportError, match=rf"needs polars >= 2\.1, found {version}"):
        check_polars(version)


@pytest.mark.parametrize("version", ["2.1.0", "2.1.1", "2.10.0", "3.0.0b1"])
def test_the_floor_and_newer_are_accepted(version: str) -> None:
    check_polars(version)


def test_ci_pins_every_runtime_dependency_and_extra_at_its_floor() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "floor_constraints.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    pins = dict(line.split("==") for line in done.stdout.split())
    project = _project()
    wanted = list(project["dependencies"])
    for extra in ("pandas", "stats", "zstd", "plot", "spark"):
        wanted += project["optional-dependencies"][extra]
    for requirement in wanted:
        name, floor = requirement.split(">=")
        assert pins[name.lower()] == floor
    script = (ROOT / ".ci" / "run").read_text()
    assert "floor_constraints.py" in script
    assert "-c .venv-floor/constraints.txt" in script
