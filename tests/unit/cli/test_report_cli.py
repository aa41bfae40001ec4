"""``ireval-df report``: the HTML page on the bundled data, with and without judgments."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from ireval_df.cli.main import main

pytest.importorskip("altair", reason="the report's charts need the plot extra")
pytest.importorskip("vl_convert", reason="the report's charts need the plot extra")

DATA = Path(__file__).resolve().parents[3] / "data"
RUNS = [str(DATA / "runs" / f"{name}.run") for name in ("bm25", "dense", "hybrid")]


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's usage errors
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def sections(page: str) -> list[str]:
    import re

    return re.findall(r'<h2 id="[^"]+">([^<]+)</h2>', page)


def test_the_full_report_on_the_bundled_data(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    code, _, err = run(
        [
            "report",
            "--run",
            *RUNS,
            "--qrels",
            str(DATA / "qrels.txt"),
            "--queries",
            str(DATA / "queries.tsv"),
            "--by",
            "query_class",
            "-o",
            str(target),
        ]
    )
    assert code == 0, err
    assert "wrote" in err
    page = target.read_text()
    assert sections(page) == [
        "Summary",
        "Comparison",
        "Slices",
        "Precision and recall",
        "Where metrics disagree",
        "Failures",
        "How alike the rankings are",
        "Settings and versions",
    ]
    # summary, comparison and slice charts; per-query charts of both runs; the
    # curves, the heatmap and the similarity boxes
    assert page.count('class="vega"') == 9
    assert "informational" in page
    assert "hybrid" in page
    assert "missing=" in page  # the warnings while building it are on the page


def test_without_judgments_the_report_holds_the_similarity_part(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    code, _, err = run(["report", "--run", *RUNS[:2], "-o", str(target)])
    assert code == 0, err
    page = target.read_text()
    assert sections(page) == [
        "About",
        "How alike the rankings are",
        "Settings and versions",
    ]
    assert "No judgments were given" in page


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--run", RUNS[0], "-o", "report.txt"], "HTML file"),
        (
            ["--run", *RUNS, "--baseline", "nope", "-o", "r.html"],
            "'nope' is not one of",
        ),
        (
            ["--run", *RUNS, "--by", "query_class", "-o", "r.html"],
            "--by needs --queries",
        ),
    ],
)
def test_usage_errors_exit_2_and_write_nothing(
    argv: list[str], words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["report", *argv])
    assert code == 2
    assert words in err
    assert list(tmp_path.iterdir()) == []


def test_a_missing_output_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run(["report", "--run", *RUNS])
    assert code == 2
    assert "-o" in err


def test_a_run_file_that_does_not_exist_is_a_data_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["report", "--run", "nope.run", RUNS[0], "-o", "r.html"])
    assert code == 1
    assert "nope.run" in err
    assert not (tmp_path / "r.html").exists()


def test_a_search_log_adds_its_online_metrics_and_ab_test(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    code, _, err = run(
        ["report", "--run", *RUNS[:2], "--log", str(DATA / "log"), "-o", str(target)]
    )
    assert code == 0, err
    page = target.read_text()
    assert sections(page) == [
        "About",
        "How alike the rankings are",
        "Online",
        "Settings and versions",
    ]
    assert "and the search log&#x27;s online metrics" in page
    # per arm: the click curve and the A/B test against the arm called control
    assert "Each arm against control" in page
    assert page.count('class="vega"') == 3
