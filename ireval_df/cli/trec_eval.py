"""``ireval-df trec_eval``: trec_eval 10.0's command line, on the ireval_df engine.

:func:`register` adds the subcommand to ``ireval-df``'s parser; every word
after ``trec_eval`` is passed untouched to :func:`main`, which parses it as
trec_eval does (``-q -c -M100 -m all_trec QRELS RUN``).
"""

from __future__ import annotations

import argparse
import io
import sys
from typing import IO, TYPE_CHECKING, Any

from ireval_df.trec_eval import run_command

if TYPE_CHECKING:
    from ireval_df.trec_eval import Result

__all__ = ["main", "register"]


def register(subparsers: Any) -> None:
    """Add the ``trec_eval`` subcommand to an argparse subparsers object.

    Its one positional collects every remaining word, options included (the
    subparser recognises no option prefix), so that trec_eval's own syntax
    reaches :func:`main` unchanged.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="ireval-df")
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["trec_eval", "-q", "-m", "P.5", "qrels", "run"]).argv
    ['-q', '-m', 'P.5', 'qrels', 'run']
    """
    parser = subparsers.add_parser(
        "trec_eval",
        help="trec_eval 10.0, byte for byte (see 'ireval-df trec_eval -h')",
        description="NIST trec_eval 10.0's command line and output, on the ireval_df engine.",
        add_help=False,
        prefix_chars="\x00",
    )
    parser.add_argument(
        "argv",
        nargs=argparse.REMAINDER,
        help="trec_eval's options and files: [-q] [-m measure] ... qrels run",
    )
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return main(list(args.argv))


def _write(stream: IO[Any], text: str, encoding: str) -> None:
    if isinstance(stream, io.TextIOBase) and not hasattr(stream, "buffer"):
        stream.write(text)  # a StringIO: text as is
        return
    binary = getattr(stream, "buffer", stream)
    if isinstance(binary, io.TextIOBase):
        binary.write(text)
    else:
        binary.write(text.encode(encoding))
    stream.flush()


def main(
    argv: list[str],
    stdin: IO[Any] | None = None,
    stdout: IO[Any] | None = None,
    stderr: IO[Any] | None = None,
) -> int:
    r"""Run trec_eval with ``argv`` (without the program name); return its exit status.

    Output goes to ``stdout`` (bytes in the inputs' encoding when the stream
    is binary or has a ``buffer``), messages to ``stderr``; ``stdin`` feeds a
    results file named ``-``. Exit codes are trec_eval's: 0 success, 1
    unknown option or measure, 2 input or parameter error, 4 duplicate
    documents or (without ``-c``) a topic missing from the run, 7 no topic
    evaluated. No traceback is ever printed for bad input.

    Examples
    --------
    >>> err = io.StringIO()
    >>> main(["-m", "nosuch", "qrels", "run"], stdout=io.StringIO(), stderr=err)
    1
    >>> err.getvalue()
    "trec_eval: illegal measure 'nosuch'\n"
    """
    source = stdin if stdin is not None else sys.stdin
    binary_in = getattr(source, "buffer", source)
    result: Result = run_command(argv, binary_in)
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    if result.stdout:
        _write(out, result.stdout, result.encoding)
    if result.stderr:
        _write(err, result.stderr, "utf-8")
    return result.code
