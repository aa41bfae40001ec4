"""trec_eval's command line, parsed as its ``getopt_long`` call parses it.

Short options ``hvqm:cl:nD:JN:M:R:T:oZ:`` may be clustered (``-qc``) and take
their argument attached (``-M100``) or as the next word (``-M 100``); long
options (``--measure=P.5``, ``--Max_retrieved_per_topic 100``) may be
abbreviated to any unique prefix; options and file names may come in any
order (GNU permutation); ``--`` ends the options; ``-`` alone is a file name
(the run on stdin). ``--compat 9|10`` is this implementation's extension and
must be spelled out in full.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ireval_df.trec_eval._measures import Selection, parse_long

__all__ = ["USAGE", "Options", "UsageError", "parse_args"]

USAGE = (
    "Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file\n"
    "   -h: Give full help information, including other options\n"
    "   -q: In addition to summary evaluation, give evaluation for each query\n"
    "   -m: calculate and print measures indicated by 'measure'\n"
    "       ('-m all_qrels' prints all qrels measures, '-m official' is default)\n"
)

#: Short options and whether they take an argument.
_SHORT = {c: c in "mlDNMRTZ" for c in "hvqmclnDJNMRToZ"}
#: Long options: name -> (short equivalent, takes an argument).
_LONG = {
    "help": ("h", False),
    "version": ("v", False),
    "query_eval_wanted": ("q", False),
    "measure": ("m", True),
    "complete_rel_info_wanted": ("c", False),
    "level_for_rel": ("l", True),
    "nosummary": ("n", False),
    "Debug_level": ("D", True),
    "Judged_docs_only": ("J", False),
    "Number_docs_in_coll": ("N", True),
    "Max_retrieved_per_topic": ("M", True),
    "Rel_info_format": ("R", True),
    "Results_format": ("T", True),
    "Output_old_results_format": ("o", True),
    "Zscore": ("Z", True),
}


class UsageError(Exception):
    """A command line trec_eval rejects: ``message`` on stderr, exit ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class Options:
    """Everything the command line sets (trec_eval's ``EPI``)."""

    query: bool = False
    complete: bool = False
    rel_level: int = 1
    summary: bool = True
    debug_level: int = 0
    debug_query: str | None = None
    judged_only: bool = False
    collection: int = 0
    max_docs: int | None = None
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscores: str | None = None
    help: bool = False
    version: bool = False
    compat: str = "10"
    measures_given: bool = False
    selection: Selection = field(default_factory=Selection.empty)
    files: list[str] = field(default_factory=list)


def _apply(opts: Options, short: str, value: str | None) -> None:
    """Apply one option, in command-line order (``-m`` errors stop at once)."""
    if short == "h":
        opts.help = True
    elif short == "v":
        opts.version = True
        msg = "trec_eval version 10.0-rc3 (ireval-df)\n"
        raise UsageError(msg, code=0)
    elif short == "q":
        opts.query = True
    elif short == "m":
        assert value is not None
        error = opts.selection.mark(value)
        if error is not None:
            raise UsageError(error)
        opts.measures_given = True
    elif short == "c":
        opts.complete = True
    elif short == "l":
        opts.rel_level = parse_long(value or "")
    elif short == "n":
        opts.summary = False
    elif short == "D":
        level, dot, qid = (value or "").partition(".")
        opts.debug_level = parse_long(level)
        opts.debug_query = qid if dot else None
    elif short == "J":
        opts.judged_only = True
    elif short == "N":
        opts.collection = parse_long(value or "")
    elif short == "M":
        opts.max_docs = max(0, parse_long(value or ""))
    elif short == "R":
        opts.rel_format = value or ""
    elif short == "T":
        opts.results_format = value or ""
    elif short == "Z":
        opts.zscores = value


def _invalid(message: str) -> UsageError:
    return UsageError(f"trec_eval: {message}\n" + USAGE)


def _long(opts: Options, args: list[str], i: int) -> int:
    """Handle the long option at ``args[i]``; return the next index."""
    text = args[i][2:]
    name, eq, value = text.partition("=")
    if name == "compat":
        if not eq:
            if i + 1 >= len(args):
                msg = "option '--compat' requires an argument"
                raise _invalid(msg)
            i += 1
            value = args[i]
        if value not in ("9", "10"):
            msg = f"--compat must be 9 or 10, not '{value}'"
            raise _invalid(msg)
        opts.compat = value
        return i + 1
    if name in _LONG:
        matches = [name]
    else:
        matches = [n for n in _LONG if n.startswith(name)]
    if not matches:
        msg = f"unrecognized option '--{name}'"
        raise _invalid(msg)
    if len(matches) > 1:
        msg = f"option '--{name}' is ambiguous"
        raise _invalid(msg)
    short, takes = _LONG[matches[0]]
    if not takes and eq:
        msg = f"option '--{matches[0]}' doesn't allow an argument"
        raise _invalid(msg)
    if takes and not eq:
        if i + 1 >= len(args):
            msg = f"option '--{matches[0]}' requires an argument"
            raise _invalid(msg)
        i += 1
        value = args[i]
    _apply(opts, short, value if takes else None)
    return i + 1


def parse_args(argv: list[str]) -> Options:
    """Parse trec_eval's arguments (without the program name).

    Raises :class:`UsageError` (exit 1, or 0 for ``-v``) for what trec_eval
    rejects: unknown options or measures, a missing option argument, not
    exactly two file names (checked unless ``-h``).

    Examples
    --------
    >>> o = parse_args(["-q", "qrels", "-M100", "-mP.5", "run", "-c"])
    >>> o.query, o.complete, o.max_docs, o.files, o.selection.params
    (True, True, 100, ['qrels', 'run'], {'P': '5'})
    >>> parse_args(["-qx", "a", "b"])
    Traceback (most recent call last):
    ...
    ireval_df.trec_eval._options.UsageError: trec_eval: invalid option -- 'x'
    Usage: ...
    """
    opts = Options()
    files: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            files += argv[i + 1 :]
            break
        if arg.startswith("--"):
            i = _long(opts, argv, i)
            continue
        if not arg.startswith("-") or arg == "-":
            files.append(arg)
            i += 1
            continue
        j = 1
        while j < len(arg):
            short = arg[j]
            if short not in _SHORT:
                msg = f"invalid option -- '{short}'"
                raise _invalid(msg)
            if _SHORT[short]:
                value = arg[j + 1 :]
                if not value:
                    if i + 1 >= len(argv):
                        msg = f"option requires an argument -- '{short}'"
                        raise _invalid(msg)
                    i += 1
                    value = argv[i]
                _apply(opts, short, value)
                break
            _apply(opts, short, None)
            j += 1
        i += 1
    opts.files = files
    if not opts.help and len(files) != 2:
        raise UsageError(USAGE)
    return opts
