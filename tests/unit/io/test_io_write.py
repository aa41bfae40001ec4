"""write_results: formats, Parquet metadata, atomic replacement."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pytest

from ireval_df._utils.provenance import attach
from ireval_df.errors import FormatError, IrevalWarning, SchemaError
from ireval_df.io import SUPPORTED_EXTENSIONS, write_results

if TYPE_CHECKING:
    from collections.abc import Callable

RESULT = pl.DataFrame(
    {
        "run_id": ["bm25", "bm25"],
        "query_id": ["007", "301"],
        "metric": ["AP", "nDCG@10"],
        "value": [0.1 + 0.2, 1 / 3],
    }
)

READERS: dict[str, Callable[[Path], pl.DataFrame]] = {
    ".parquet": pl.read_parquet,
    ".pq": pl.read_parquet,
    ".csv": lambda p: pl.read_csv(p, infer_schema=False),
    ".tsv": lambda p: pl.read_csv(p, separator="\t", infer_schema=False),
    ".jsonl": pl.read_ndjson,
    ".ndjson": pl.read_ndjson,
}


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("suffix", SUPPORTED_EXTENSIONS)
def test_round_trip_every_format(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"results{suffix}"
    write_results(RESULT, path)
    back = READERS[suffix](path)
    if suffix in (".csv", ".tsv"):  # text: floats must survive exactly
        back = back.with_columns(pl.col("value").cast(pl.Float64))
    assert back.equals(RESULT)
    assert leftovers(tmp_path) == []


def test_lazy_and_pandas_frames(tmp_path: Path) -> None:
    write_results(RESULT.lazy(), tmp_path / "lazy.parquet")
    assert pl.read_parquet(tmp_path / "lazy.parquet").equals(RESULT)
    pytest.importorskip("pandas")
    write_results(RESULT.to_pandas(), tmp_path / "pandas.parquet")
    assert pl.read_parquet(tmp_path / "pandas.parquet").equals(RESULT)


def test_parquet_metadata_explicit_and_from_provenance(tmp_path: Path) -> None:
    write_results(RESULT, tmp_path / "a.parquet", metadata={"qrels": "q.txt"})
    assert pl.read_parquet_metadata(tmp_path / "a.parquet")["qrels"] == "q.txt"
    frame = attach(RESULT.clone(), {"depth": 100, "missing": "zero"})
    write_results(frame, tmp_path / "b.parquet")
    stored = pl.read_parquet_metadata(tmp_path / "b.parquet")["ireval_df"]
    assert stored == '{"depth": 100, "missing": "zero"}'
    write_results(RESULT, tmp_path / "c.parquet")  # nothing attached: no key
    assert "ireval_df" not in pl.read_parquet_metadata(tmp_path / "c.parquet")


def test_metadata_for_text_formats_warns(tmp_path: Path) -> None:
    with pytest.warns(IrevalWarning, match=r"only in Parquet files; writing '\.csv'"):
        write_results(RESULT, tmp_path / "r.csv", metadata={"a": "b"})


def test_metadata_must_be_strings(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"must map str to str, found 'depth': 10"):
        write_results(RESULT, tmp_path / "r.parquet", metadata={"depth": 10})  # type: ignore[dict-item]


def test_unknown_extension_lists_the_supported_ones(tmp_path: Path) -> None:
    with pytest.raises(
        FormatError,
        match=r"unsupported extension '\.xlsx'; use one of .parquet, .pq, .csv",
    ):
        write_results(RESULT, tmp_path / "r.xlsx")
    with pytest.raises(FormatError, match=r"unsupported extension '\(none\)'"):
        write_results(RESULT, tmp_path / "results")


@pytest.mark.parametrize(
    ("name", "frame", "message"),
    [
        (
            "old.csv",
            pl.DataFrame({"l": [[1, 2]]}),
            "CSV format does not support nested",
        ),
        (
            "old.parquet",
            pl.DataFrame({"o": [object()]}, schema={"o": pl.Object}),
            "cannot write 'Object'",
        ),
    ],
    ids=["nested-csv", "object-parquet"],
)
def test_failed_write_leaves_the_old_file_intact(
    tmp_path: Path, name: str, frame: pl.DataFrame, message: str
) -> None:
    path = tmp_path / name
    path.write_text("previous results\n")
    with pytest.raises(FormatError, match=f"cannot write '.*{name}': {message}"):
        write_results(frame, path)
    assert path.read_text() == "previous results\n"
    assert leftovers(tmp_path) == []


def test_not_a_frame(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("previous\n")
    with pytest.raises(
        SchemaError, match="needs a polars or pandas DataFrame, found list"
    ):
        write_results([1, 2], path)
    assert path.read_text() == "previous\n"


def test_bad_destinations(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"directory '.*nowhere' does not exist"):
        write_results(RESULT, tmp_path / "nowhere" / "r.csv")
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(FormatError, match="it is a directory"):
        write_results(RESULT, tmp_path / "d.csv")


def test_replaces_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("old\n")
    write_results(RESULT, path)
    assert pl.read_ndjson(path).equals(RESULT)


def test_tsv_refuses_tabs_and_line_breaks_in_values(tmp_path: Path) -> None:
    path = tmp_path / "r.tsv"
    frame = RESULT.with_columns(pl.Series("text", ["a\tb", "c"]))
    with pytest.raises(FormatError, match=r"column 'text' has values with tabs"):
        write_results(frame, path)
    assert not path.exists()
    assert leftovers(tmp_path) == []


# --------------------------------------------------------------------------
# interrupted writes leave no temporary file


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_second_ctrl_c_during_the_cleanup_still_removes_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ireval_df.io import write as write_module

    def interrupted_sink(df, path, meta):  # polars raises it from inside the sink
        path.write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setitem(write_module._WRITERS, ".parquet", interrupted_sink)
    real_unlink = Path.unlink
    calls = []

    def unlink_once_interrupted(self, missing_ok=False):
        calls.append(self.name)
        if len(calls) == 1:  # the second Ctrl-C lands in the cleanup
            raise KeyboardInterrupt
        return real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink_once_interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_results(pl.DataFrame({"a": [1]}), tmp_path / "out.parquet")
    assert len(calls) == 2
    assert list(tmp_path.iterdir()) == []


def test_a_file_the_cleanup_never_reached_is_removed_at_exit(tmp_path: Path) -> None:
    from ireval_df._utils import signals as _signals

    left = _signals.track(tmp_path / ".out.parquet.0123456789ab.tmp")
    left.write_bytes(b"partial")
    _signals._remove_pending()  # what atexit runs
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("signals", [["SIGTERM"], ["SIGINT", "SIGINT"]])
def test_real_signals_during_a_large_write_leave_nothing(
    tmp_path: Path, signals: list[str]
) -> None:
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import polars as pl, ireval_df as ie\n"
        "n = 30_000_000\n"
        "frame = pl.DataFrame({'a': pl.int_range(n, eager=True),"
        " 'b': pl.int_range(n, eager=True).cast(pl.String)})\n"
        "print('ready', flush=True)\n"
        f"ie.write_results(frame, {str(tmp_path / 'out.parquet')!r})\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"
    deadline = time.monotonic() + 60
    while not _leftovers(tmp_path) and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    for name in signals:
        proc.send_signal(getattr(signal, name))
        time.sleep(0.01)
    proc.communicate(timeout=120)
    assert proc.returncode != 0  # interrupted, not finished
    assert list(tmp_path.iterdir()) == []
