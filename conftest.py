"""Repository-wide pytest setup: the doctest namespace.

``pytest --doctest-modules`` runs the examples in ``ireval_df/`` as well as
``tests/``; a fixture in ``tests/conftest.py`` would not reach the package's
modules, so the namespace is provided here, at the root.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace: dict[str, Any]) -> None:
    """Make ``pl`` (polars) and ``ie`` (ireval_df) available to every doctest."""
    import ireval_df

    doctest_namespace["pl"] = pl
    doctest_namespace["ie"] = ireval_df


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--update-golden`` rewrites tests/golden/*.txt from the current output."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the golden files in tests/golden instead of comparing",
    )
