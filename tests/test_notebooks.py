"""Execute every notebook in notebooks/ top to bottom; any error fails the test.

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
    notebook = nbformat.read(path, as_version=4)
    assert all(
        not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"
    ), f"{path.name} is committed with outputs; clear them first"
    client = nbclient.NotebookClient(
        notebook,
        kernel_name=kernel,
        timeout=120,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
