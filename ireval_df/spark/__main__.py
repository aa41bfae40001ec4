r"""``python -m ireval_df.spark``, or ``spark-submit <this file>``: ``ireval-df`` on Spark.

The arguments are those of ``ireval-df``; ``evaluate``, ``online
metrics`` and ``online ab`` run with ``--engine spark`` unless told otherwise, in the Spark session that
``spark-submit`` (or ``spark-defaults.conf``) configures::

    spark-submit --master yarn "$(python -c 'import ireval_df.spark.__main__ as m; print(m.__file__)')" \
        evaluate --run s3a://bucket/runs/bm25.parquet --qrels s3a://bucket/qrels.parquet -m nDCG@10
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ireval_df.cli.main import main as cli_main

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ireval-df`` with ``evaluate`` and ``online metrics``/``ab`` on Spark by default; returns the exit code.

    Examples
    --------
    >>> main(["metrics", "--help"])  # doctest: +SKIP
    """
    args = list(sys.argv[1:] if argv is None else argv)
    engine = any(a == "--engine" or a.startswith("--engine=") for a in args)
    if args[:1] == ["evaluate"] and not engine:
        args[1:1] = ["--engine", "spark"]
    if args[:2] in (["online", "metrics"], ["online", "ab"]) and not engine:
        args[2:2] = ["--engine", "spark"]
    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
