"""ruff, mypy and import-linter, run by the same test command as CI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = ["ireval_df", "tests", "bench", "data"]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(
        name
    )
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_check():
    proc = _run([_tool("ruff"), "check", *TREES])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format():
    proc = _run([_tool("ruff"), "format", "--check", *TREES])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict():
    proc = _run([_tool("mypy"), "ireval_df"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_contracts():
    """Calls only go down the layers, no cycles, no foreign private imports.

    The contracts are in pyproject.toml ([tool.importlinter]); lint-imports
    reads them with the package's static import graph.
    """
    proc = _run([_tool("lint-imports"), "--no-cache"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
