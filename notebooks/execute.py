"""Run every notebook here top to bottom and save it with its outputs.

``python notebooks/execute.py`` (from the repository, with the dev extra
installed) refreshes the committed outputs after a change that moves them;
``tests/test_notebooks.py`` runs the notebooks again and fails when a cell's
output appears or disappears, so the committed pages stay current. The kernel
is this interpreter, started in ``notebooks/`` as the tests start it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def main() -> int:
    paths = sorted(HERE.glob("*.ipynb")) if len(sys.argv) < 2 else [Path(p) for p in sys.argv[1:]]
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(
            notebook,
            kernel_name="python3",
            timeout=300,
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
        # execution counts and timings churn on every run; keep the outputs
        for cell in notebook.cells:
            cell.get("metadata", {}).pop("execution", None)
        nbformat.write(notebook, path)
        print(f"{path.name}: {sum(bool(c.get('outputs')) for c in notebook.cells)} cells with output")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
