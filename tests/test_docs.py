"""Documentation that is generated or promised stays true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ireval_df.measures.docs import metrics_markdown
from ireval_df.measures.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[1]


def test_metrics_page_is_current():
    page = (ROOT / "docs" / "metrics.md").read_text()
    assert page == metrics_markdown(), (
        "regenerate: ireval-df metrics --markdown > docs/metrics.md"
    )
    for name in REGISTRY:
        assert f"### {name}\n" in page


def test_readme_quick_start_has_exactly_two_commands():
    readme = (ROOT / "README.md").read_text()
    first_section = readme.split("\n## ", 2)[1]
    assert first_section.startswith("Quick start")
    block = re.search(r"```bash\n(.*?)```", first_section, re.S).group(1)
    commands = [line for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    assert "ireval-df evaluate" in commands[0]
    assert "pytest" in commands[1]
    for path in re.findall(r"data/[\w./]+", commands[0]):
        assert (ROOT / path).exists(), path


def test_no_machine_paths_in_tracked_text():
    for path in [
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "ireval_df").rglob("*.py"),
    ]:
        text = path.read_text()
        for machine_path in ("/" + "work" + "/", "/" + "tmp/dev"):
            assert machine_path not in text, path


@pytest.mark.parametrize(
    "page",
    [
        "README.md",
        "docs/index.md",
        "docs/report.md",
        "docs/statistics.md",
        "docs/similarity.md",
        "docs/slices.md",
        "docs/failures.md",
        "docs/online.md",
        "docs/click_models.md",
        "docs/interleaving.md",
        "docs/propensities.md",
        "docs/plots.md",
        "docs/diversity.md",
    ],
)
def test_python_examples_run(page, tmp_path, monkeypatch):
    """Every python block of the page, in order, in one namespace."""
    import warnings

    text = (ROOT / page).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").symlink_to(ROOT / "data")
    namespace: dict[str, object] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for block in blocks:
            exec(compile(block, page, "exec"), namespace)  # noqa: S102 - our own docs
    if page == "README.md":
        assert (tmp_path / "per_query.parquet").exists()
