"""Helpers of the chart tests (tests/unit/plot): a chart's encodings, data, PNG."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
RUNS = [str(DATA / "runs" / f"{name}.run") for name in ("bm25", "dense", "hybrid")]
QRELS = str(DATA / "qrels.txt")
QUERIES = str(DATA / "queries.tsv")


def encodings(chart) -> list[dict]:
    """Every layer's encoding of a chart, faceted or not."""
    spec = chart.to_dict()
    inner = spec.get("spec", spec)
    return [layer["encoding"] for layer in inner.get("layer", [inner])]


def fields(chart, channel: str) -> set[str]:
    return {
        enc[channel]["field"]
        for enc in encodings(chart)
        if channel in enc and "field" in enc[channel]
    }


def rows(chart) -> list[dict]:
    return chart.data.values


def assert_png(chart, path: Path) -> None:
    """Render through vl-convert: a PNG file of some size."""
    chart.save(str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 5_000
