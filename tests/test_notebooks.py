"""Execute every notebook in notebooks/ top to bottom; any error fails the test.

The notebooks are committed with their outputs (``notebooks/execute.py``
refreshes them); a cell whose output appears or disappears on this run means
the committed outputs are stale.

The kernel is the interpreter running the tests (a temporary kernelspec points at
``sys.executable``), so the notebooks see the same ireval_df and packages.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "ireval-df-tests"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory, monkeypatch_module):
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    # the repository first on the path, so an uninstalled checkout works too
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [
                    sys.executable,
                    "-m",
                    "ipykernel_launcher",
                    "-f",
                    "{connection_file}",
                ],
                "display_name": "ireval-df tests",
                "language": "python",
                "env": {"PYTHONPATH": path},
            }
        )
    )
    monkeypatch_module.setenv("JUPYTER_PATH", str(root))
    return KERNEL


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, kernel):
    # committed with their outputs, so they read well where the repository is
    # browsed; run again here, and a cell whose output appears or disappears
    # means the committed page is stale (python notebooks/execute.py)
    committed = nbformat.read(path, as_version=4)
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name=kernel,
        timeout=120,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    code = [c for c in committed.cells if c.cell_type == "code"]
    assert any(c.get("outputs") for c in code), (
        f"{path.name} is committed without outputs: run python notebooks/execute.py"
    )
    fresh = [c for c in notebook.cells if c.cell_type == "code"]
    stale = [
        i
        for i, (old, new) in enumerate(zip(code, fresh, strict=True))
        if bool(old.get("outputs")) != bool(new.get("outputs"))
    ]
    assert not stale, (
        f"{path.name}: code cells {stale} show output now and not in the committed "
        "notebook, or the reverse: run python notebooks/execute.py"
    )
