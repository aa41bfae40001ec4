"""``ireval-df``: the parser and the error handling every subcommand shares.

Data goes to stdout or ``-o``, messages to stderr. Exit 0 on success, 1 for
bad data (the same messages as the API), 2 for bad usage, 130 on Ctrl-C
and 143 on SIGTERM. No traceback unless ``--debug``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import warnings
from typing import TYPE_CHECKING, Any

from ireval_df._utils.signals import Terminated, terminate_as_interrupt
from ireval_df.cli import (
    compare,
    diff,
    evaluate,
    failures,
    gate,
    metrics,
    online,
    report,
    similarity,
    trec_eval,
    validate,
)
from ireval_df.errors import IrevalError, IrevalWarning, OptionError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Build the ``ireval-df`` argument parser: one module per subcommand."""
    parser = argparse.ArgumentParser(
        prog="ireval-df",
        description="trec_eval-exact evaluation of search runs, as dataframes.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks on errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    for command in (
        evaluate,
        compare,
        gate,
        similarity,
        diff,
        failures,
        online,
        report,
        validate,
        metrics,
        trec_eval,
    ):
        command.register(sub)
    return parser


def _show_warning(message: Any, category: Any, *_: Any, **__: Any) -> None:
    label = "warning" if issubclass(category, IrevalWarning) else category.__name__
    print(f"ireval-df: {label}: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        with terminate_as_interrupt():
            return int(args.handler(args))
    except IrevalError as exc:
        if args.debug:
            raise
        print(f"ireval-df: error: {exc}", file=sys.stderr)
        # a metric name or option value is bad usage, like argparse's own errors
        return 2 if isinstance(exc, OptionError) else 1
    except Terminated:
        print("ireval-df: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("ireval-df: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
