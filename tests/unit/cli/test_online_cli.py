"""``ireval-df online metrics|ab|srm|power|interleaving`` on the bundled logs: tables, files, exits."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import ireval_df as ie
from ireval_df.cli.main import main
from ireval_df.cli.online import METRICS_DEFAULT

pytest.importorskip("scipy")

LOG = Path(__file__).resolve().parents[3] / "data" / "log"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    assert "Traceback" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def log() -> ie.online.SearchLog:
    return ie.online.read_log(LOG)


@pytest.fixture
def renamed(tmp_path: Path) -> Path:
    """The bundled log with its arms called A and B: no variant named control."""
    folder = tmp_path / "log"
    folder.mkdir()
    arms = {"control": "A", "treatment": "B"}
    for path in LOG.glob("*.parquet"):
        frame = pl.read_parquet(path)
        if "variant" in frame.columns:
            frame = frame.with_columns(pl.col("variant").replace_strict(arms))
        frame.write_parquet(folder / path.name)
    return folder


# --------------------------------------------------------------------------
# metrics


def test_metrics_default_table() -> None:
    code, out, err = run(["online", "metrics", "--log", str(LOG)])
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split() == [
        "experiment_id",
        "variant",
        *METRICS_DEFAULT,
        "n_units",
        "n_searches",
    ]
    assert [r.split()[:3] for r in rows] == [
        ["ranker-2024", "control", "0.6194"],
        ["ranker-2024", "treatment", "0.6676"],
    ]
    assert rows[0].split()[-2:] == ["453", "2341"]


def test_metrics_by_slice_and_positions() -> None:
    code, out, _ = run(
        [
            "online",
            "metrics",
            "--log",
            str(LOG),
            "-m",
            "CTR",
            "-m",
            "PositionCTR@2",
            "--by",
            "device",
        ]
    )
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == [
        "experiment_id",
        "variant",
        "device",
        "CTR",
        "PositionCTR@2[1]",
        "PositionCTR@2[2]",
        "n_units",
        "n_searches",
    ]
    assert len(rows) == 6


def test_metrics_written_equal_the_api(
    log: ie.online.SearchLog, tmp_path: Path
) -> None:
    target = tmp_path / "metrics.parquet"
    code, out, err = run(
        [
            "online",
            "metrics",
            "--log",
            str(LOG),
            "--by",
            "query_class",
            "-m",
            "CTR",
            "-m",
            "RevenuePerSearch",
            "-o",
            str(target),
        ]
    )
    assert code == 0
    assert out == ""
    assert f"to {target}" in err
    expected = ie.online.metrics(log, ["CTR", "RevenuePerSearch"], by=["query_class"])
    assert_frame_equal(pl.read_parquet(target), expected)


def test_power_pooling_the_arms_says_so() -> None:
    argv = ["online", "power", "--log", str(LOG), "-m", "CTR", "--n", "1000"]
    code, out, err = run(argv)
    assert code == 0
    assert "--variant" in err
    header, row = out.splitlines()
    values = dict(zip(header.split(), row.split(), strict=True))
    assert values["n_units"] == "900"


# --------------------------------------------------------------------------
# ab


def test_ab_default_is_ctr_against_control() -> None:
    code, out, err = run(["online", "ab", "--log", str(LOG)])
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split() == [
        "variant",
        "metric",
        "control",
        "treatment",
        "delta",
        "change",
        "95%",
        "CI",
        "p_adjusted",
        "significant",
    ]
    cells = row.split()
    assert cells[:4] == ["treatment", "CTR", "0.6194", "0.6676"]
    assert cells[-1] == "yes"


def test_ab_written_equal_the_api(log: ie.online.SearchLog, tmp_path: Path) -> None:
    target = tmp_path / "ab.parquet"
    metrics = ["CTR", "ClickRR", "ZeroResultRate"]
    argv = ["online", "ab", "--log", str(LOG), "--by", "query_class"]
    for m in metrics:
        argv += ["-m", m]
    argv += ["--correction", "bh", "--alpha", "0.1", "-o", str(target)]
    code, _, err = run(argv)
    assert code == 0, err
    expected = ie.online.ab_test(
        log,
        metrics,
        control="control",
        by=["query_class"],
        correction="bh",
        alpha=0.1,
    )
    written = pl.read_parquet(target)
    assert_frame_equal(written, expected)
    assert written.height == 9


def test_ab_cuped_written_equal_the_api(
    log: ie.online.SearchLog, tmp_path: Path
) -> None:
    target = tmp_path / "ab.csv"
    argv = ["online", "ab", "--log", str(LOG), "--cuped", "-o", str(target)]
    code, _, err = run(argv)
    assert code == 0, err
    expected = ie.online.ab_test(log, ["CTR"], control="control", cuped=True)
    plain = ie.online.ab_test(log, ["CTR"], control="control")
    written = pl.read_csv(target)
    assert_frame_equal(written, expected, check_dtypes=False, check_exact=False)
    # CUPED moves the estimate and narrows the interval
    width = (written["ci_high"] - written["ci_low"]).item()
    assert width < (plain["ci_high"] - plain["ci_low"]).item()


def test_ab_table_slices_and_interval_level() -> None:
    code, out, _ = run(
        ["online", "ab", "--log", str(LOG), "--by", "query_class", "--alpha", "0.1"]
    )
    assert code == 0
    header, *rows = out.splitlines()
    assert "90% CI" in header
    assert header.split()[:3] == ["variant", "query_class", "metric"]
    informational = next(r for r in rows if "informational" in r)
    assert informational.split()[-1] == "yes"


def test_ab_control_chosen_or_asked_for(renamed: Path) -> None:
    code, out, err = run(["online", "ab", "--log", str(renamed)])
    assert code == 2
    assert out == ""
    assert "--control" in err
    assert "A, B" in err
    code, out, _ = run(["online", "ab", "--log", str(renamed), "--control", "A"])
    assert code == 0
    assert out.splitlines()[1].split()[:2] == ["B", "CTR"]


def test_ab_sample_ratio_mismatch_warns(tmp_path: Path) -> None:
    code, out, err = run(
        [
            "online",
            "ab",
            "--log",
            str(LOG),
            "--expected",
            "control=0.6",
            "--expected",
            "treatment=0.4",
        ]
    )
    assert code == 0
    assert out
    assert "sample" in err.lower()
    assert "ratio" in err.lower()


# --------------------------------------------------------------------------
# srm


def test_srm_overall_and_by_slice(log: ie.online.SearchLog, tmp_path: Path) -> None:
    code, out, err = run(["online", "srm", "--log", str(LOG)])
    assert code == 0
    assert err == ""
    header, *rows = out.splitlines()
    assert header.split()[:2] == ["variant", "n_units"]
    assert [r.split()[:2] for r in rows] == [["control", "453"], ["treatment", "447"]]
    assert rows[0].split()[-2:] == ["0.8415", "False"]

    target = tmp_path / "srm.csv"
    code, _, _ = run(
        ["online", "srm", "--log", str(LOG), "--by", "device", "-o", str(target)]
    )
    assert code == 0
    expected = ie.online.srm(log, by=["device"])
    assert_frame_equal(
        pl.read_csv(target), expected, check_dtypes=False, check_exact=False
    )


def test_srm_flags_a_wrong_plan() -> None:
    code, out, err = run(
        [
            "online",
            "srm",
            "--log",
            str(LOG),
            "--expected",
            "control=3",
            "--expected",
            "treatment=2",
        ]
    )
    assert code == 0
    assert "True" in out
    assert "sample-ratio mismatch" in err


# --------------------------------------------------------------------------
# power


def test_power_from_a_baseline_rate() -> None:
    code, out, _ = run(["online", "power", "--baseline-mean", "0.1", "--mde", "0.01"])
    assert code == 0
    header, row = out.splitlines()
    values = dict(zip(header.split(), row.split(), strict=True))
    assert values["n_per_arm"] == "14128"  # the closed form


def test_power_from_the_log(log: ie.online.SearchLog, tmp_path: Path) -> None:
    target = tmp_path / "power.parquet"
    argv = ["online", "power", "--log", str(LOG), "-m", "CTR", "--variant", "control"]
    code, _, err = run([*argv, "--mde", "0.02", "--relative", "-o", str(target)])
    assert code == 0, err
    expected = ie.online.power(
        log=log, metric="CTR", variant="control", mde=0.02, relative=True
    )
    assert_frame_equal(pl.read_parquet(target), expected)


# --------------------------------------------------------------------------
# bad usage: exit 2; bad data: exit 1; never a traceback


@pytest.mark.parametrize(
    "argv",
    [
        ["online"],
        ["online", "metrics"],
        ["online", "metrics", "--log", str(LOG), "-m", "CTRR"],
        ["online", "metrics", "--log", str(LOG), "-m", "nDCG@10"],
        ["online", "metrics", "--log", str(LOG), "--by", "no_such_column"],
        ["online", "ab", "--log", str(LOG), "--control", "nobody"],
        ["online", "ab", "--log", str(LOG), "--correction", "magic"],
        ["online", "ab", "--log", str(LOG), "--expected", "control"],
        ["online", "ab", "--log", str(LOG), "--expected", "control=-1"],
        [
            "online",
            "srm",
            "--log",
            str(LOG),
            "--expected",
            "control=1",
            "--expected",
            "control=2",
        ],
        ["online", "power", "--mde", "0.01"],
        ["online", "power", "--baseline-mean", "0.1"],
        ["online", "power", "--baseline-mean", "0.1", "--mde", "0.01", "--n", "9"],
        ["online", "power", "--baseline-mean", "0.1", "-m", "CTR", "--mde", "0.01"],
        ["online", "power", "--log", str(LOG), "--mde", "0.01"],
        [
            "online",
            "power",
            "--log",
            str(LOG),
            "-m",
            "CTR",
            "-m",
            "ClickRR",
            "--n",
            "9",
        ],
        ["online", "power", "--log", str(LOG), "-m", "CTR", "--baseline-mean", "0.1"],
    ],
)
def test_bad_usage_exits_2(argv: list[str]) -> None:
    code, out, err = run(argv)
    assert code == 2
    assert out == ""
    assert "error" in err


def test_unknown_metric_hints_at_the_list() -> None:
    _, _, err = run(["online", "ab", "--log", str(LOG), "-m", "CTRR"])
    assert "Did you mean 'CTR'" in err


def test_bad_data_exits_1(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "events.parquet").write_bytes((LOG / "events.parquet").read_bytes())
    for folder in (empty, tmp_path / "missing"):
        for command in ("metrics", "ab", "srm"):
            code, out, err = run(["online", command, "--log", str(folder)])
            assert code == 1
            assert out == ""
            assert err.startswith("ireval-df: error: ")


def test_contaminated_unit_is_an_error_or_dropped(tmp_path: Path) -> None:
    folder = tmp_path / "log"
    folder.mkdir()
    searches = pl.read_parquet(LOG / "searches.parquet")
    # u0001's first search served by the other arm
    first = searches["user_id"].to_list().index("u0001")
    searches = searches.with_columns(
        pl.when(pl.int_range(pl.len()) == first)
        .then(pl.lit("treatment"))
        .otherwise(pl.col("variant"))
        .alias("variant")
    )
    searches.write_parquet(folder / "searches.parquet")
    for table in ("results", "events"):
        (folder / f"{table}.parquet").write_bytes(
            (LOG / f"{table}.parquet").read_bytes()
        )
    code, _, err = run(["online", "metrics", "--log", str(folder), "-m", "CTR"])
    assert code == 1
    assert "u0001" in err
    code, out, _ = run(
        [
            "online",
            "metrics",
            "--log",
            str(folder),
            "-m",
            "CTR",
            "--contaminated",
            "drop",
        ]
    )
    assert code == 0
    assert out.count("\n") == 3


# --------------------------------------------------------------------------
# interleaving

INTERLEAVING = LOG.parent / "log_interleaving"


def test_interleaving_table_by_class() -> None:
    code, out, err = run(
        ["online", "interleaving", "--log", str(INTERLEAVING), "--by", "query_class"]
    )
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split()[:9] == [
        "query_class",
        "ranker_a",
        "ranker_b",
        "n_units",
        "wins",
        "losses",
        "ties",
        "delta_ab",
        "95%",
    ]
    # data/README.md: hybrid wins informational queries, bm25 navigational ones
    cells = {row.split()[0]: row.split() for row in rows}
    assert cells["informational"][3:7] == ["402", "82", "269", "51"]
    assert cells["informational"][-1] == "hybrid"
    assert cells["navigational"][-1] == "bm25"
    # the zero-result searches are counted on stderr
    assert "122 search(es)" in err


def test_interleaving_written_equals_the_api(tmp_path: Path) -> None:
    target = tmp_path / "il.parquet"
    argv = ["online", "interleaving", "--log", str(INTERLEAVING), "-o", str(target)]
    argv += ["--credit", "sat_click", "--unit", "search", "--test", "sign"]
    code, out, err = run(argv)
    assert code == 0, err
    assert out == ""
    log = ie.online.read_log(INTERLEAVING)
    with pytest.warns(ie.errors.InterleavingWarning):
        outcomes = ie.online.interleaving_outcomes(log, credit="sat_click")
    expected = ie.online.interleaving_test(outcomes, unit="search")
    assert_frame_equal(pl.read_parquet(target), expected)


def test_interleaving_bad_usage_and_data() -> None:
    code, out, err = run(
        ["online", "interleaving", "--log", str(INTERLEAVING), "--by", "nope"]
    )
    assert (code, out) == (2, "")
    assert "not columns of the searches" in err
    code, out, err = run(["online", "interleaving", "--log", str(LOG)])
    assert (code, out) == (1, "")
    assert "none of its searches was interleaved" in err
