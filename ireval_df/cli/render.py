"""Plain-text tables for the terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

__all__ = ["render_table", "wide"]


def render_table(frame: pl.DataFrame, *, digits: int = 4) -> str:
    """Format a frame as an aligned plain-text table, floats rounded.

    Examples
    --------
    >>> print(render_table(pl.DataFrame({"run_id": ["bm25"], "AP": [0.123456]})))
    run_id  AP
    bm25    0.1235
    """
    columns = frame.columns
    cells = [[str(c) for c in columns]]
    for row in frame.iter_rows():
        cells.append(
            [
                ""
                if v is None
                else f"{v:.{digits}f}"
                if isinstance(v, float)
                else str(v)
                for v in row
            ]
        )
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    numeric = [frame.schema[c].is_numeric() for c in columns]
    lines = []
    for row_cells in cells:
        parts = [
            cell.rjust(width)
            if num and i > 0 and row_cells is not cells[0]
            else cell.ljust(width)
            for i, (cell, width, num) in enumerate(
                zip(row_cells, widths, numeric, strict=True)
            )
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def wide(summary: pl.DataFrame, index: list[str]) -> pl.DataFrame:
    """Pivot a long summary to one column per metric, in the metrics' order."""
    order = summary["metric"].unique(maintain_order=True).to_list()
    wide = summary.pivot(on="metric", index=index, values="value")
    return wide.select(*index, *order)
