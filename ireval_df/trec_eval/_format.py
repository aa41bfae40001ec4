r"""trec_eval's output lines, byte for byte (``trec_eval/meas_print_*.c``).

``printf("%-22s\t%s\t%6.4f\n", name, qid, value)`` for values,
``%ld`` (truncated) for the counts, ``'%s'`` quoted for ``relstring`` and the
plain run id for ``runid``. With ``-Z`` every value line is prefixed ``Z``
and printed ``%6.4f``, counts included. NaN prints as C does on x86
(``-nan``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ireval_df.trec_eval._measures import Output

__all__ = ["format_value", "value_line"]

#: What ``(long)`` of NaN or an infinity gives on x86-64.
_LONG_NAN = -(2**63)


def format_value(value: float) -> str:
    """C's ``%6.4f``.

    Examples
    --------
    >>> format_value(0.12345), format_value(-1e6), format_value(float("nan")), format_value(float("inf"))
    ('0.1235', '-1000000.0000', '  -nan', '   inf')
    """
    if math.isnan(value):
        return "  -nan"
    return f"{value:6.4f}"  # correctly rounded, as glibc's printf


def format_long(value: float) -> str:
    """C's ``%ld`` of ``(long) value`` (truncation toward zero).

    Examples
    --------
    >>> format_long(3.0), format_long(-2.7), format_long(float("nan"))
    ('3', '-2', '-9223372036854775808')
    """
    if not math.isfinite(value):
        return str(_LONG_NAN)
    return str(int(value))


def value_line(output: Output, qid: str, value: float, *, zscore: bool) -> str:
    r"""Format one measure line.

    Examples
    --------
    >>> from ireval_df.trec_eval._measures import BY_NAME, Output
    >>> value_line(Output("num_ret", BY_NAME["num_ret"], "NumRet"), "301", 500.0, zscore=False)
    'num_ret               \t301\t500\n'
    >>> value_line(Output("P_5", BY_NAME["P"], "P@5"), "all", 0.26666, zscore=True)
    'ZP_5                   \tall\t0.2667\n'
    """
    if zscore:
        return f"Z{output.label:<22}\t{qid}\t{format_value(value)}\n"
    if output.measure.integer or output.measure.summary == "num_q":
        return f"{output.label:<22}\t{qid}\t{format_long(value)}\n"
    return f"{output.label:<22}\t{qid}\t{format_value(value)}\n"


def text_line(label: str, qid: str, text: str) -> str:
    r"""Format a string-valued line (the ``runid`` summary).

    Examples
    --------
    >>> text_line("runid", "all", "STANDARD")
    'runid                 \tall\tSTANDARD\n'
    """
    return f"{label:<22}\t{qid}\t{text}\n"


def relstring_line(label: str, qid: str, text: str) -> str:
    r"""Format a ``relstring`` line: the string in single quotes.

    Examples
    --------
    >>> relstring_line("relstring", "301", "01-")
    "relstring             \t301\t'01-'\n"
    """
    return f"{label:<22}\t{qid}\t'{text}'\n"
