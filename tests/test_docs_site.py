"""The documentation site builds with ``mkdocs build --strict`` and leaves nothing out.

Strict mode fails on any warning: a broken link between pages, a page named
in the navigation that does not exist, a docstring mkdocstrings cannot read.
The API reference must name every public function, and the navigation every
page of ``docs/``.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ireval_df as ie

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _nav_pages() -> set[str]:
    config = (ROOT / "mkdocs.yml").read_text()
    return set(re.findall(r":\s*([\w/.-]+\.md)\s*$", config, flags=re.MULTILINE))


def test_every_page_of_docs_is_in_the_navigation():
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.glob("*.md")}
    assert pages - _nav_pages() == set(), "add these pages to mkdocs.yml's nav"
    assert _nav_pages() - pages == set(), "mkdocs.yml's nav names missing pages"


def _resolve(path: str) -> object:
    """The object a ``::: path`` line documents (a module, then attributes)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ImportError(path)


def test_the_api_reference_names_every_public_function():
    # a function whose name is also a module's (ie.similarity, ie.diff,
    # ie.headroom, ie.online.metrics) is named where it is defined, or
    # mkdocstrings would show the module
    api = (DOCS / "api.md").read_text()
    paths = re.findall(r"^::: ([\w.]+)$", api, flags=re.MULTILINE)
    documented = [_resolve(path) for path in paths]
    public = {
        f"ie.{name}": getattr(ie, name)
        for name in ie.__all__
        if name not in ("online", "plot")
    }
    public |= {f"ie.plot.{name}": getattr(ie.plot, name) for name in ie.plot.__all__}
    public |= {
        f"ie.online.{name}": getattr(ie.online, name)
        for name in ie.online.__all__
        if name != "MODELS"
    }
    missing = [
        name for name, obj in public.items() if not any(obj is d for d in documented)
    ]
    assert missing == [], "add these to docs/api.md"


def test_the_site_builds_in_strict_mode(tmp_path):
    pytest.importorskip(
        "mkdocs",
        reason="the docs tools are in the dev and docs extras: pip install -e '.[docs]'",
    )
    pytest.importorskip("mkdocstrings", reason="pip install -e '.[docs]'")
    pytest.importorskip("material", reason="pip install -e '.[docs]' (mkdocs-material)")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--site-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "", "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "api" / "index.html").read_text()
    # every public function rendered from its docstring, parameters and all
    assert api.count('class="doc doc-object doc-function"') >= 40
    assert "Parameters" in api
    for page in ("similarity", "online", "statistics", "metrics"):
        assert (tmp_path / page / "index.html").exists()
