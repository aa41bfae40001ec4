"""One trec_eval invocation: argv in, stdout text, stderr text and exit code out.

The steps and their order are trec_eval 10.0's (``trec_eval/trec_eval.c``):
parse the options (unknown options and measures exit 1 at once), read the
rel_info file, then the results file (input errors exit 2), then the Z-score
file, then initialise the measures (bad parameters exit 2), then evaluate
topic by topic (duplicates and, without ``-c``, topics missing from the run
exit 4 after the lines of the topics before) and print the summary.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ireval_df.trec_eval._evaluate import (
    Scores,
    evaluate_prefs_topics,
    evaluate_topics,
    summarize,
    zscores,
)
from ireval_df.trec_eval._format import relstring_line, text_line, value_line
from ireval_df.trec_eval._measures import Context, ParamError, expand
from ireval_df.trec_eval._options import Options, UsageError, parse_args
from ireval_df.trec_eval._reader import (
    Data,
    InputError,
    contains,
    read_prefs,
    read_qrels,
    read_run,
    read_source,
    read_zscores,
)

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

    from ireval_df.trec_eval._measures import Output

__all__ = ["HELP", "Result", "run_command"]

HELP = r"""\
ireval-df trec_eval [-h] [-q] [-m measure[.params]] [-c] [-n] [-l <num>]
   [-D debug_level] [-N <num>] [-M <num>] [-R rel_format] [-T results_format]
   [-Z zscores_file] [--compat 9|10] rel_info_file results_file

A reimplementation of NIST trec_eval 10.0 on the ireval_df polars engine:
the same options, input rules and output, byte for byte. If results_file is
'-', the results are read from stdin.

 -q: also print the evaluation of each topic
 -m measure[.params]: measure or nickname to compute (repeatable):
    nicknames official (default), all_trec, set, qrels_jg, prefs, all_prefs
 -c: average over every topic of the rel_info file; a topic missing from
     the results scores as an empty ranking (without -c it is an error)
 -l <num>: lowest relevance judgement that counts as relevant (default 1)
 -n: no summary
 -N <num>: number of documents in the collection (utility only; default 0)
 -M <num>: evaluate only the top <num> documents of each topic
 -J: drop documents without a judgement before evaluating (DO NOT USE
     unless you know why)
 -R format: qrels (default), qrels_jg, prefs, qrels_prefs
 -T format: trec_results (the only one)
 -Z file: print Z-scores against the 'qid measure mean stddev' lines of file
 -D num[.qid]: debug level (ignored); with .qid evaluate only that topic
 --compat 9: trec_eval 9.x semantics (as pytrec_eval): float32 scores,
     (long)(p*R + 0.9) recall cutoffs, topics missing from the results
     skipped, all_trec without rbp, rbp_resid and unj
See docs/trec_eval.md for the measures and every known difference.
"""

_FORMATS = {
    "qrels": {"qrels"},
    "jg": {"qrels_jg"},
    "prefs": {"prefs", "qrels_prefs"},
    "any": {"qrels", "qrels_jg", "prefs", "qrels_prefs"},
}

#: trec_eval's message when a measure's rel_info format is not the one read.
_MISMATCH = {
    "qrels": "trec_eval.form_res_qrels: rel_info format not qrels or results "
    "format not trec_results",
    "jg": "trec_eval.form_res_qrels: rel_info format not qrels or results "
    "format not trec_results",
    "prefs": "trec_eval.form_prefs_info: prefs_info format not (prefs or "
    "qrels_prefs) or results format not trec_results",
}


@dataclass
class Result:
    """What one invocation prints, and its exit status.

    ``encoding`` is the byte encoding of ``stdout`` (that of the inputs).
    """

    stdout: str
    stderr: str
    code: int
    encoding: str = "utf-8"


class _Stop(Exception):
    def __init__(self, stderr: str, code: int, stdout: str = "") -> None:
        super().__init__(stderr)
        self.stderr = stderr
        self.code = code
        self.stdout = stdout


def _quit(messages: list[str], path: str) -> _Stop:
    return _Stop("".join(messages) + f"trec_eval: Quit in file '{path}'\n", 2)


def _read(path: str, stdin: IO[Any] | None, kind: str) -> Data:
    messages = {
        "qrels": f"trec_eval.get_qrels: Cannot read qrels file '{path}'\n",
        "prefs": f"trec_eval.get_prefs: Cannot read prefs file '{path}'\n",
        "results": f"trec_eval.get_results: Cannot read results file '{path}'\n",
        "zscores": f"trec_eval.get_zscores: Cannot read zscores file '{path}'\n",
    }
    try:
        raw = read_source(path, stdin) if kind == "results" else Path(path).read_bytes()
    except OSError:
        raise _quit([messages[kind]], path) from None
    if not len(raw) or contains(raw, b"\x00"):
        raise _quit([messages[kind]], path)
    return raw


def run_command(argv: list[str], stdin: IO[Any] | None = None) -> Result:
    """Run trec_eval with ``argv`` (no program name); never raises for bad input.

    Examples
    --------
    >>> run_command(["-x", "q", "r"]).code
    1
    """
    try:
        opts = parse_args(argv)
    except UsageError as exc:
        return Result("", exc.message, exc.code)
    if opts.help:
        return Result(HELP, "", 0)
    try:
        return _evaluate(opts, stdin)
    except _Stop as stop:
        return Result(stop.stdout, stop.stderr, stop.code)


def _parse(
    opts: Options,
    files: tuple[str, Data, str, Data, str | None, Data | None],
    encoding: str,
) -> tuple[pl.DataFrame, pl.DataFrame, str, pl.DataFrame | None]:
    """Parse the qrels, the run and the Z-score file in ``encoding``.

    Raises ``UnicodeDecodeError`` when a file is not valid UTF-8 and
    ``encoding`` is UTF-8 (all are then read again as Latin-1).
    """
    qrels_path, raw_qrels, run_path, raw_run, z_path, raw_z = files
    try:
        if opts.rel_format in _FORMATS["prefs"]:
            qrels = read_prefs(
                bytes(raw_qrels),
                encoding,
                qrels_layout=opts.rel_format == "qrels_prefs",
            )
        else:
            qrels = read_qrels(
                bytes(raw_qrels), encoding, groups=opts.rel_format == "qrels_jg"
            )
    except InputError as exc:
        raise _quit(exc.messages, qrels_path) from None
    try:
        mapped = run_path if isinstance(raw_run, mmap.mmap) else None
        run, run_id = read_run(raw_run, encoding, mapped)
    except InputError as exc:
        raise _quit(exc.messages, run_path) from None
    table = None
    if raw_z is not None and z_path is not None:
        try:
            table = read_zscores(bytes(raw_z), encoding)
        except InputError as exc:
            raise _quit(exc.messages, z_path) from None
    return qrels, run, run_id, table


def _evaluate(opts: Options, stdin: IO[Any] | None) -> Result:
    qrels_path, run_path = opts.files
    if opts.rel_format not in _FORMATS["any"]:
        msg = f"trec_eval: Illegal rel_format '{opts.rel_format}'\n"
        raise _Stop(msg, 2)
    kind = "prefs" if opts.rel_format in _FORMATS["prefs"] else "qrels"
    raw_qrels = _read(qrels_path, stdin, kind)
    if opts.results_format != "trec_results":
        msg = f"trec_eval: Illegal retrieval results format '{opts.results_format}'\n"
        raise _Stop(msg, 2)
    raw_run = _read(run_path, stdin, "results")
    raw_z = _read(opts.zscores, stdin, "zscores") if opts.zscores is not None else None
    files = (qrels_path, raw_qrels, run_path, raw_run, opts.zscores, raw_z)
    try:
        encoding = "utf-8"
        qrels, run, run_id, table = _parse(opts, files, encoding)
    except UnicodeDecodeError:
        encoding = "latin-1"  # byte for byte: any byte is one character
        qrels, run, run_id, table = _parse(opts, files, encoding)
    del raw_run, files  # the run's bytes or map are not needed any more

    if not opts.measures_given:
        opts.selection.mark("official")
    ctx = Context(
        rel=opts.rel_level,
        judged_only=opts.judged_only,
        compat=opts.compat,
        collection=opts.collection,
    )
    try:
        outputs = expand(opts.selection, ctx)
    except ParamError as exc:
        raise _Stop(
            exc.detail + f"trec_eval: Cannot initialize measure '{exc.measure}'\n", 2
        ) from None
    for o in outputs:
        if opts.rel_format not in _FORMATS[o.measure.source]:
            what = _MISMATCH.get(o.measure.source, _MISMATCH["qrels"])
            msg = f"{what}\ntrec_eval: Can't calculate measure '{o.measure.name}'\n"
            raise _Stop(msg, 4)

    prefs = opts.rel_format in _FORMATS["prefs"]
    if prefs:
        scores = evaluate_prefs_topics(qrels, run, outputs, opts)
    else:
        scores = evaluate_topics(qrels, run, outputs, opts)
    if table is not None:
        zscores(scores, outputs, table)
    stdout = _topic_lines(scores, outputs, opts)
    if scores.fatal is not None:
        return Result(stdout, scores.fatal.message, 4, encoding)
    if not scores.topics:
        return Result(
            stdout,
            "trec_eval: No queries with both results and relevance info\n",
            7,
            encoding,
        )
    positive = 0 if prefs else int((qrels.get_column("relevance") > 0).sum())
    n_topics = qrels.get_column("query_id").n_unique()
    summary = summarize(
        scores, outputs, opts, n_qrels_topics=n_topics, positive_judgments=positive
    )
    if opts.summary:
        stdout += _summary_lines(summary, outputs, run_id, zscore=table is not None)
    return Result(stdout, "", 0, encoding)


def _topic_lines(scores: Scores, outputs: list[Output], opts: Options) -> str:
    if not opts.query:
        return ""
    zscore = opts.zscores is not None
    shown = [(j, o) for j, o in enumerate(outputs) if o.measure.per_topic]
    lines: list[str] = []
    values = scores.values
    for i, topic in enumerate(scores.topics):
        row = values[i]
        for j, o in shown:
            if o.column.startswith("relstring:"):
                lines.append(
                    relstring_line(o.label, topic, scores.relstrings[o.column][i])
                )
            else:
                lines.append(value_line(o, topic, float(row[j]), zscore=zscore))
    return "".join(lines)


def _summary_lines(
    summary: np.ndarray, outputs: list[Output], run_id: str, *, zscore: bool
) -> str:
    lines = []
    for j, o in enumerate(outputs):
        if o.measure.summary == "none":
            continue
        if o.measure.summary == "runid":
            lines.append(text_line("runid", "all", run_id))
        else:
            lines.append(value_line(o, "all", float(summary[j]), zscore=zscore))
    return "".join(lines)
