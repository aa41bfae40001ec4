"""Arguments every data subcommand of ``ireval-df`` shares, defined once."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["add_data_arguments"]


def add_data_arguments(
    parser: Any,
    *,
    required: bool = True,
    run_help: str = "run file(s); several runs may follow one --run",
    metric_help: str = "metric (repeatable); see 'ireval-df metrics'",
    by_help: str | None = "slice by this query attribute (repeatable; needs --queries)",
    qrels: bool = True,
) -> None:
    """Add ``--run``, ``--qrels`` (unless ``qrels=False``), ``-m``, ``--queries`` and ``--by``.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_data_arguments(parser)
    >>> args = parser.parse_args(["--run", "a.run", "b.run", "--qrels", "q.txt", "-m", "AP"])
    >>> args.run, args.qrels, args.metric, args.by
    (['a.run', 'b.run'], 'q.txt', ['AP'], None)
    """
    parser.add_argument(
        "--run",
        action="extend",
        nargs="+",
        required=required,
        metavar="FILE",
        help=run_help,
    )
    if qrels:
        parser.add_argument(
            "--qrels", required=required, metavar="FILE", help="relevance judgments"
        )
    parser.add_argument(
        "-m", "--metric", action="append", metavar="NAME", help=metric_help
    )
    parser.add_argument(
        "--queries", metavar="FILE", help="query attributes (query_id + columns)"
    )
    if by_help is not None:
        parser.add_argument("--by", action="append", metavar="COLUMN", help=by_help)


def slices_of(args: argparse.Namespace) -> list[str]:
    """Return ``--by``'s columns, checked to come with ``--queries``.

    Raises
    ------
    OptionError
        ``--by`` without ``--queries`` (the table that holds the columns).

    Examples
    --------
    >>> slices_of(argparse.Namespace(by=["language"], queries="q.tsv"))
    ['language']
    """
    from ireval_df.errors import OptionError

    by = list(args.by or [])
    if by and args.queries is None:
        msg = "--by needs --queries FILE (the table holding the slice columns)."
        raise OptionError(msg)
    return by


#: What ``ireval-df evaluate`` computes when no ``-m`` is given.
DEFAULT_METRICS = ("nDCG@10", "AP", "RR@10", "P@10", "R@100")


def number_or(
    word: str,
    meaning: Any,
    convert: Callable[[str], float],
    valid: Callable[[float], bool],
    expected: str,
) -> Callable[[str], Any]:
    """Make an argparse type: ``word`` (standing for ``meaning``) or a valid number."""

    def parse(text: str) -> Any:
        if text == word:
            return meaning
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not valid(value):
            msg = f"expected {expected} or {word!r}, found {text!r}"
            raise argparse.ArgumentTypeError(msg)
        return value

    return parse


#: ``--buckets``: ``auto`` or a positive whole number.
buckets = number_or("auto", "auto", int, lambda n: n >= 1, "a positive whole number")
#: ``--warn-unjudged``: a share from 0 to 1, or ``never`` (None: do not warn).
share = number_or("never", None, float, lambda x: 0 <= x <= 1, "a share from 0 to 1")


def add_qrels_intents(parser: Any) -> None:
    """Add ``--qrels-intents``: TREC text qrels read as diversity qrels."""
    parser.add_argument(
        "--qrels-intents",
        action="store_true",
        help="read TREC qrels as diversity qrels, 'qid subtopic docno relevance': "
        "the second field is the intent (subtopic), as ndeval reads it, for the "
        "diversity measures (alpha_nDCG, ERR_IA, ...); a table's 'intent' column "
        "is read without it",
    )
