"""trec_eval 10.0, byte for byte, on the ireval_df engine.

``ireval-df trec_eval [options] QRELS RUN`` prints exactly what NIST
trec_eval 10.0 prints; :func:`trec_eval` does the same from Python and
returns the text. Every number comes from the engine behind
:func:`ireval_df.evaluate` (each trec_eval measure is a registry metric
reachable by its trec_eval name); this package only reads the files as
trec_eval reads them, parses its options and measure parameters, applies its
topic and summary rules and formats its output. ``docs/trec_eval.md`` lists
the measures and every deliberate difference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ireval_df.errors import IrevalError
from ireval_df.trec_eval._command import Result, run_command

if TYPE_CHECKING:
    from collections.abc import Sequence
    from os import PathLike

__all__ = ["Result", "TrecEvalError", "run_command", "trec_eval"]


class TrecEvalError(IrevalError):
    """trec_eval exited with a non-zero status.

    ``code`` is the exit status, ``stdout`` what was printed before the
    error (per-topic lines of the topics before a fatal one).
    """

    def __init__(self, message: str, code: int, stdout: str) -> None:
        super().__init__(message)
        self.code = code
        self.stdout = stdout


def trec_eval(
    qrels: str | PathLike[str],
    run: str | PathLike[str],
    options: Sequence[str] = (),
) -> str:
    r"""Run trec_eval on two files and return what it prints.

    Parameters
    ----------
    qrels : str or path
        The rel_info file (qrels by default; see ``-R``).
    run : str or path
        The results file (``qid iter docno rank sim run_id``).
    options : sequence of str
        trec_eval's options, e.g. ``["-q", "-m", "all_trec", "-c"]``, and
        ``--compat 9`` for trec_eval 9.x (pytrec_eval) semantics.

    Returns
    -------
    str
        trec_eval's standard output.

    Raises
    ------
    TrecEvalError
        trec_eval would exit with a non-zero status (bad option, input
        error, duplicate documents...); the message is what it prints on
        stderr.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "qrels").write_text("1 0 a 1\n1 0 b 0\n")
    >>> _ = (folder / "run").write_text("1 Q0 a 1 0.5 demo\n1 Q0 b 2 0.9 demo\n")
    >>> print(trec_eval(folder / "qrels", folder / "run", ["-m", "map", "-m", "P.1"]), end="")
    map                   	all	0.5000
    P_1                   	all	0.0000
    """
    result = run_command([*options, str(qrels), str(run)])
    if result.code != 0:
        raise TrecEvalError(result.stderr.strip(), result.code, result.stdout)
    return result.stdout
