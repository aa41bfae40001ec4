"""Benchmark ireval_df against ranx, pytrec_eval and ir_measures, side by side.

``python bench/harness.py --shapes msmarco-dev large --rounds 3`` generates
the data (``bench/generate.py``) into ``--data`` when it is missing, then per
shape:

1. agreement: every tool once (untimed) with per-query output; each peer's
   per-query values are compared with ireval_df's, and every difference must
   be explained: ranx breaks score ties by input order, so it may differ only
   on queries where a judged document ties with another document;
2. whole process: ``--rounds`` rounds, tools interleaved (the order rotates
   each round), each a fresh ``python bench/tools.py TOOL run qrels`` from
   TREC text to the five means; the harness times the process and reads its
   peak RSS (``wait4``); the tool reports its own load / evaluation split;
   beside them, ``text-read`` and ``text-floor``: processes that only read
   the TREC files with polars (and join them), the least any polars-based
   tool does;
3. in-process: ``ireval_df.evaluate()`` from Parquet against the floor (read
   the Parquet files and left-join the run on the qrels), interleaved in one
   process.

Beside the tools, the command users run is timed the same way, as a fresh
process: ``python -m ireval_df evaluate --run RUN --qrels QRELS -m ... -o
OUT.parquet`` (and on the Parquet-only ``xl`` shape with the default
``--buckets auto`` beside explicit ``--buckets N``). ``--robust03 DIR``
adds real runs: the 17 runs and the qrels of the TREC 2003 Robust track
(trectools' ``examples/robust03``), every tool scoring all of them in one
process.

Then, once: ``import ireval_df`` time, and one run against 20 stacked runs
(``--stacked``). It prints a markdown table (medians) and, with
``--json``, writes every measurement. ranx's numba cache is warmed before
anything is timed. Shape ``xl`` is Parquet only: only ireval_df runs on it.

``--versus PYTHON[=LABEL]`` (repeatable; the label defaults to ``base``)
compares this checkout's ireval_df ("after") with the one another
interpreter imports ("before": a venv with the older commit installed):
``ireval_df@LABEL`` and the command, run by ``PYTHON`` in a neutral folder
without this checkout on the path, right after their twins in the same
rotation of rounds, on the same files; its in-process, import and stacked
timings too. Its per-query values must equal ireval_df's exactly, and a
table per shape gives both medians, the ratio after / before and the range
of the rounds' own ratios. ``--python PYTHON`` runs this checkout's ireval_df
with that interpreter (``PYTHONPATH`` puts the checkout first): give it the
``--versus`` one, so that both versions start alike, with the same packages.

Nothing here asserts a time: ``tests/test_bench_smoke.py`` runs it on the
``tiny`` shape to check that it works and that the tools agree.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import SHAPES, generate  # noqa: E402
from tools import MEASURES  # noqa: E402

PEERS = ("ranx", "pytrec_eval", "ir_measures")
#: Processes that only read the TREC files with polars (and join them): the
#: least any polars-based tool does, timed beside the tools
FLOORS = ("text-read", "text-floor")
MODULES = {
    "ireval_df": "ireval_df",
    "ranx": "ranx",
    "pytrec_eval": "pytrec_eval",
    "ir_measures": "ir_measures",
}
DISTRIBUTIONS = {
    "ireval_df": "ireval-df",
    "ranx": "ranx",
    "pytrec_eval": "pytrec_eval-terrier",
    "ir_measures": "ir_measures",
    "polars": "polars",
    "numba": "numba",
}
#: Two values agree when they differ by at most this much.
TOLERANCE = 1e-9
#: Where a peer breaks score ties differently from trec_eval (score
#: descending, then doc_id descending): it may differ there, and only on
#: queries where a judged document ties with another document.
#: Peers built on trec_eval 9.x (pytrec_eval), which stores scores as
#: float32: they may also differ where float32 cannot tell a judged
#: document's score from another's (``evaluate(compat="9")`` equals them).
FLOAT32_TOOLS = frozenset({"pytrec_eval", "ir_measures"})
TIE_RULES = {
    "ranx": (set(MEASURES), "input order"),
    "ir_measures": (
        {"RR@10"},
        "doc_id ascending (its RR@k comes from the MS MARCO provider)",
    ),
}


def available(tools: list[str]) -> list[str]:
    """The tools whose module can be imported here (ireval_df always can)."""
    return [t for t in tools if t == "ireval_df" or find_spec(MODULES[t]) is not None]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(HERE.parent)
    env["PYTHONPATH"] = root + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    return env


def _launch(python: str | None, checkout: bool) -> tuple[str, dict[str, Any]]:
    """The interpreter and ``Popen`` arguments.

    ``checkout``: ``python`` (the harness's own when None) imports this
    checkout's ireval_df; else it runs in a neutral folder with the
    environment as it is, and imports the ireval_df installed for it.
    """
    if checkout:
        return python or sys.executable, {"env": _env()}
    assert python is not None
    return python, {"env": dict(os.environ), "cwd": tempfile.gettempdir()}


def run_process(
    args: list[str], python: str | None = None, checkout: bool = True
) -> tuple[dict[str, Any], float, float]:
    """Run ``python bench/tools.py ARGS``; its JSON, wall seconds, peak RSS (MiB).

    ``python``, ``checkout``: another interpreter (``--python``, ``--versus``),
    with this checkout's ireval_df or its own.
    """
    executable, how = _launch(python, checkout)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [executable, str(HERE / "tools.py"), *args],
            stdout=out,
            stderr=err,
            **how,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(
                f"{args[0]} failed:\n{err.read().decode(errors='replace')[-3000:]}"
            )
        lines = out.read().decode().strip().splitlines()
    return (
        json.loads(lines[-1]),
        wall,
        usage.ru_maxrss / 1024,
    )  # ru_maxrss is KiB on Linux


def run_command(
    argv: list[str], python: str | None = None, checkout: bool = True
) -> tuple[float, float]:
    """Run ``python -m ireval_df ARGV`` (the command users run); wall seconds, peak RSS."""
    executable, how = _launch(python, checkout)
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [executable, "-m", "ireval_df", *argv],
            stdout=subprocess.DEVNULL,
            stderr=err,
            **how,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise RuntimeError(
                f"ireval-df {' '.join(argv[:1])} failed:\n"
                + err.read().decode(errors="replace")[-3000:]
            )
    return wall, usage.ru_maxrss / 1024


def command_args(run: Path, qrels: Path, out: Path, buckets: str) -> list[str]:
    """``ireval-df evaluate`` of the five measures, as a user types it."""
    runs = [str(p) for p in sorted(run.iterdir())] if run.is_dir() else [str(run)]
    metrics = [arg for m in MEASURES for arg in ("-m", m)]
    extra = [] if buckets == "auto" else ["--buckets", buckets]
    return [
        "evaluate",
        "--run",
        *runs,
        "--qrels",
        str(qrels),
        *metrics,
        "-o",
        str(out),
        *extra,
    ]


def robust03(source: Path, data: Path) -> dict[str, Path]:
    """The TREC 2003 Robust runs and qrels, unpacked once into ``data/robust03``.

    ``source`` holds ``runs/input.*.gz`` and the qrels as ``qrels.txt`` or,
    in trectools' layout, ``qrel/robust03_qrels.txt``. Runs are unpacked to
    plain text (ranx reads no gzip); every tool reads the same files.
    """
    import gzip
    import shutil

    # its own folder, never the source (which may lie in the data folder)
    folder = data / "robust03-unpacked"
    runs = folder / "runs"
    qrels = folder / "qrels.txt"
    if not qrels.exists():
        runs.mkdir(parents=True, exist_ok=True)
        for packed in sorted((source / "runs").glob("input.*.gz")):
            with gzip.open(packed, "rb") as src, open(runs / packed.stem, "wb") as dst:
                shutil.copyfileobj(src, dst)
        found = [source / "qrels.txt", source / "qrel" / "robust03_qrels.txt"]
        shutil.copy(next(p for p in found if p.exists()), qrels)
    return {"run_trec": runs, "qrels_trec": qrels}


#: What ``probe()`` runs: where ireval_df comes from, with what.
PROBE = (
    "import json, sys; from importlib import metadata; import ireval_df, polars; "
    "print(json.dumps({'file': ireval_df.__file__, "
    "'version': metadata.version('ireval-df'), 'polars': polars.__version__, "
    "'python': sys.version.split()[0], "
    "'native': any(m.endswith('._ctrec') for m in sys.modules)}))"
)


def compile_checkout(python: str | None) -> None:
    """Byte-compile this checkout's ireval_df, as pip does on installing.

    Else, where nothing writes bytecode (``PYTHONDONTWRITEBYTECODE``), every
    process compiles it anew (~0.1 s), and an installed version does not.
    """
    package = str(HERE.parent / "ireval_df")
    command = [python or sys.executable, "-m", "compileall", "-q", package]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def probe(python: str | None, checkout: bool) -> dict[str, Any]:
    """The ireval_df an interpreter imports, and with what (as :func:`_launch`)."""
    executable, how = _launch(python, checkout)
    done = subprocess.run(
        [executable, "-c", PROBE], capture_output=True, text=True, check=False, **how
    )
    if done.returncode != 0:
        raise RuntimeError(f"{executable} cannot import ireval_df:\n{done.stderr}")
    return json.loads(done.stdout)


def split_tool(
    tool: str, versus: dict[str, str], own: str | None = None
) -> tuple[str, str | None, bool]:
    """A tool's name, interpreter and whether it runs this checkout's ireval_df.

    ``ireval_df@base`` runs with base's interpreter (``versus``), ireval_df
    and the command with ``own`` (``--python``), the others with the harness's.
    """
    name, _, label = tool.partition("@")
    if label:
        return name, versus[label], False
    return name, own if name in ("ireval_df", COMMAND) else None, True


def files(shape: str, data: Path) -> dict[str, Path]:
    """The shape's files, generated on first use."""
    folder = data / shape
    if not (folder / "run.parquet").exists():
        print(f"generating {shape} into {folder} ...", file=sys.stderr)
        generate(shape, folder)
    names = {
        "run_parquet": "run.parquet",
        "qrels_parquet": "qrels.parquet",
        "run_trec": "run.trec",
        "qrels_trec": "qrels.trec",
    }
    return {k: folder / v for k, v in names.items() if (folder / v).exists()}


def warm(paths: dict[str, Path], tools: list[str], data: Path) -> None:
    """Read the files once (page cache) and compile ranx's numba cache."""
    for path in paths.values():
        for file in sorted(path.iterdir()) if path.is_dir() else [path]:
            with open(file, "rb") as fh:
                while fh.read(1 << 24):
                    pass
    if "ranx" in tools:
        tiny = files("tiny", data)
        run_process(["ranx", str(tiny["run_trec"]), str(tiny["qrels_trec"])])


# --- agreement ---------------------------------------------------------------


def tie_queries(paths: dict[str, Path], *, float32: bool = False) -> set[str]:
    """Queries where a judged document has the same score as another retrieved one.

    For a track folder the keys are ``run/query``. With ``float32`` the
    scores are compared as float32, as trec_eval 9.x (pytrec_eval) stores
    them: closer scores tie there.
    """
    precision = pl.Float32 if float32 else pl.Float64
    if paths["run_trec"].is_dir():
        from tools import run_name

        import ireval_df as ie

        parts = []
        for path in sorted(paths["run_trec"].iterdir()):
            frame = ie.read_run(path)  # real runs split fields by tabs or blanks
            parts.append(
                frame.select(
                    query_id=pl.lit(run_name(path) + "/") + pl.col("query_id"),
                    doc_id="doc_id",
                    score=pl.col("score").cast(precision),
                    key=pl.col("query_id"),
                )
            )
        run = pl.concat(parts).lazy()
        qrels = (
            ie.read_qrels(paths["qrels_trec"])
            .select(key="query_id", doc_id="doc_id")
            .lazy()
        )
        on = ["key", "doc_id"]
    else:
        run = pl.scan_parquet(paths["run_parquet"]).select(
            "query_id", "doc_id", pl.col("score").cast(precision)
        )
        qrels = pl.scan_parquet(paths["qrels_parquet"]).select("query_id", "doc_id")
        on = ["query_id", "doc_id"]
    judged = run.join(qrels, on=on, how="semi")
    tied = (
        run.join(
            judged.select("query_id", "score").unique(),
            on=["query_id", "score"],
            how="semi",
        )
        .group_by("query_id", "score")
        .len()
        .filter(pl.col("len") > 1)
    )
    return set(tied.select("query_id").unique().collect()["query_id"].to_list())


def compare(
    tool: str,
    ours: dict[str, dict[str, float]],
    theirs: dict[str, dict[str, float]],
    ties: set[str],
    collisions: set[str] | None = None,
    tolerance: float = TOLERANCE,
) -> dict[str, dict[str, Any]]:
    """Per metric: queries, how many differ, how many the tie rules cannot explain.

    ``collisions``: queries where a judged document ties with another once
    the scores are float32; a tool in :data:`FLOAT32_TOOLS` may differ there.
    Values differ when they are further apart than ``tolerance``.
    """
    tie_metrics = TIE_RULES.get(tool, (set(), ""))[0]
    collided = (collisions or set()) if tool in FLOAT32_TOOLS else set()
    result = {}
    for metric in MEASURES:
        a, b = ours[metric], theirs[metric]
        queries = set(a) | set(b)
        differ = {
            q
            for q in queries
            if q not in a or q not in b or not abs(a[q] - b[q]) <= tolerance
        }
        explained = differ & ties if metric in tie_metrics else set()
        explained |= differ & collided
        result[metric] = {
            "queries": len(queries),
            "differ": len(differ),
            "unexplained": len(differ - explained),
            "mean_delta": _mean(b) - _mean(a),
        }
    return result


def _mean(values: dict[str, float]) -> float:
    return statistics.fmean(values.values()) if values else float("nan")


def agreement(
    tools: list[str],
    paths: dict[str, Path],
    workdir: Path,
    versus: dict[str, str] | None = None,
    own: str | None = None,
) -> dict[str, Any]:
    """Per-query values of every peer against ireval_df's; differences explained.

    Each ``versus`` version (``ireval_df@LABEL``) must give exactly the same
    values: no tie rule, no tolerance.
    """
    versus = versus or {}
    values: dict[str, dict[str, dict[str, float]]] = {}
    for tool in tools + [f"ireval_df@{label}" for label in versus]:
        out = workdir / f"{tool}.json"
        name, python, checkout = split_tool(tool, versus, own)
        run, qrels = _inputs(name, paths)
        args = [name, str(run), str(qrels), "--per-query", str(out)]
        run_process(args, python, checkout)
        values[tool] = json.loads(out.read_text())
    ours = values["ireval_df"]
    peers = [tool for tool in tools if tool != "ireval_df"]
    ties = tie_queries(paths) if peers else set()
    as_float32 = tie_queries(paths, float32=True) if peers else set()
    result: dict[str, Any] = {
        "tie_queries": len(ties),
        "float32_ties": len(as_float32 - ties),
        "peers": {
            tool: compare(tool, ours, values[tool], ties, as_float32) for tool in peers
        },
    }
    result["peers"].update(
        {
            f"ireval_df@{label}": compare(
                "ireval_df", ours, values[f"ireval_df@{label}"], set(), tolerance=0.0
            )
            for label in versus
        }
    )
    return result


def _inputs(tool: str, paths: dict[str, Path]) -> tuple[Path, Path]:
    if "run_trec" in paths:
        return paths["run_trec"], paths["qrels_trec"]
    return paths["run_parquet"], paths["qrels_parquet"]


# --- timing ------------------------------------------------------------------


#: The label of the command's row.
COMMAND = "ireval-df evaluate -o (command)"


def timed_rounds(
    tools: list[str],
    paths: dict[str, Path],
    rounds: int,
    buckets: list[int],
    versus: dict[str, str] | None = None,
    own: str | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Whole-process runs, interleaved; one list of measurements per tool.

    Besides each tool on the TREC files: the command users run (``ireval-df
    evaluate ... -o out.parquet``), ireval_df straight from Parquet and the
    text floors; on a Parquet-only shape, ireval_df and the command with the
    default ``buckets="auto"`` and with each explicit count in ``buckets``.
    Each ireval_df and command entry is followed by the same with each
    ``versus`` interpreter (``ireval_df@LABEL``, ``COMMAND@LABEL``); ``own``:
    the interpreter of this checkout's (``--python``).
    """
    versus = versus or {}
    entries = [(t, *_inputs(t, paths), "auto") for t in tools]
    entries.append((COMMAND, *_inputs("ireval_df", paths), "auto"))
    if "run_trec" in paths and "run_parquet" in paths:
        entries.append(
            ("ireval_df", paths["run_parquet"], paths["qrels_parquet"], "auto")
        )
        entries += [(t, *_inputs(t, paths), "auto") for t in FLOORS]
    elif "run_trec" not in paths:
        for parts in buckets:
            entries.append(
                ("ireval_df", paths["run_parquet"], paths["qrels_parquet"], str(parts))
            )
            entries.append(
                (COMMAND, paths["run_parquet"], paths["qrels_parquet"], str(parts))
            )
    # each entry with its versus twins: they run back to back, in turn first
    groups = [
        [
            (f"{tool}@{label}" if label else tool, *rest)
            for label in ["", *versus]
            if not label or tool in ("ireval_df", COMMAND)
        ]
        for tool, *rest in entries
    ]
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.parquet"
        for i in range(rounds):
            shift = i % len(groups)
            order = [
                entry
                for group in groups[shift:] + groups[:shift]
                for entry in (group if i % 2 == 0 else group[::-1])
            ]
            for tool, run, qrels, parts in order:
                parquet = run.suffix == ".parquet"
                label = f"{tool} (Parquet)" if parquet else tool
                if parquet and "run_trec" not in paths:
                    label = f"{tool} (buckets={parts})"
                name, python, checkout = split_tool(tool, versus, own)
                if name == COMMAND:
                    argv = command_args(run, qrels, out, parts)
                    wall, rss = run_command(argv, python, checkout)
                    report: dict[str, Any] = {
                        "tool": tool,
                        "import_s": float("nan"),
                        "load_s": float("nan"),
                        "eval_s": float("nan"),
                    }
                else:
                    args = [name, str(run), str(qrels)]
                    if name == "ireval_df":
                        args += ["--buckets", parts]
                    report, wall, rss = run_process(args, python, checkout)
                report.update(wall_s=wall, rss_mib=rss)
                results.setdefault(label, []).append(report)
                print(
                    f"  round {i + 1} {label}: {wall:.2f} s, {rss:.0f} MiB",
                    file=sys.stderr,
                )
    return results


def medians(reports: list[dict[str, Any]]) -> dict[str, float]:
    keys = ("wall_s", "rss_mib", "load_s", "eval_s", "import_s")
    return {k: statistics.median(r[k] for r in reports) for k in keys}


# --- report ------------------------------------------------------------------


def versions() -> dict[str, str]:
    found = {}
    for name, dist in DISTRIBUTIONS.items():
        try:
            found[name] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            if name == "ireval_df":  # run from a checkout: name the commit
                found[name] = "checkout " + _commit()
    found["python"] = platform.python_version()
    return found


def _commit() -> str:
    done = subprocess.run(
        ["git", "describe", "--always", "--dirty"],
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "(unknown commit)"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{memory}, {platform.system()} {platform.release()}"


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"Machine: {results['machine']}",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()),
        "",
    ]
    for label, info in results.get("versus", {}).items():
        lines += [
            f"{label}: ireval_df {info['version']} from {info['file']} "
            f"(C tokenizer: {'yes' if info['native'] else 'no'}), polars "
            f"{info['polars']}, Python {info['python']}",
            "",
        ]
    for shape, block in results["shapes"].items():
        info = block["shape"]
        lines += [
            f"### {shape}: {info['queries']:,} queries, {info['run_rows']:,} run rows, "
            f"{info['judged_per_query']} judged / {info['relevant_per_query']} relevant "
            f"per query",
            "",
        ]
        timing = block["timing"]
        base = medians(timing[next(k for k in timing if k.startswith("ireval_df"))])
        lines += [
            "| tool | whole process (s) | vs ireval_df | load (s) | evaluate (s) "
            "| peak RSS (MiB) | vs ireval_df |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for label, reports in timing.items():
            m = medians(reports)
            split = [
                "-" if v != v else f"{v:.2f}"  # NaN: the command reports no split
                for v in (m["load_s"], m["eval_s"])
            ]
            lines.append(
                f"| {label} | {m['wall_s']:.2f} | {m['wall_s'] / base['wall_s']:.1f}x | "
                f"{split[0]} | {split[1]} | {m['rss_mib']:.0f} | "
                f"{m['rss_mib'] / base['rss_mib']:.1f}x |"
            )
        lines.append("")
        lines += versus_table(timing)
        command = [k for k in timing if k.startswith(COMMAND) and "@" not in k]
        for label in command:
            own = medians(timing[label])
            peers = [
                f"{medians(timing[peer])['wall_s'] / own['wall_s']:.1f}x faster than "
                f"{peer} with {own['rss_mib'] / medians(timing[peer])['rss_mib']:.2f}x "
                "its peak memory"
                for peer in PEERS
                if peer in timing
            ]
            if peers:
                lines.append(f"The command ({label}): " + "; ".join(peers) + ".")
                lines.append("")
        lines.append(
            f"Medians of {len(next(iter(timing.values())))} interleaved rounds. "
            "Whole process: interpreter start to the five means "
            "(" + ", ".join(MEASURES) + ") from TREC text (rows marked Parquet: from "
            "the Parquet files); load: reading the files into the tool's "
            "structures; evaluate: from loaded data to the means. ireval_df is "
            "given the paths: `evaluate()` reads the files itself, so its load is 0 "
            "and its evaluate includes the reading."
        )
        if all(f in timing for f in FLOORS):
            lines.append("")
            lines.append(
                "text-read: import polars and parse the TREC files (the four run "
                "columns the measures need), no measures; text-floor: also "
                "left-join the run on the qrels. What any polars-based tool does "
                "at least."
            )
            if "pytrec_eval" in timing:
                read = medians(timing["text-read"])["wall_s"]
                peer = medians(timing["pytrec_eval"])["wall_s"]
                lines.append(
                    f"pytrec_eval takes {peer / read:.1f}x text-read: no "
                    "polars-based tool can be faster than that."
                )
        lines.append("")
        if "inproc" in block:
            ip = block["inproc"]
            lines.append(
                f"In-process from Parquet: `evaluate()` {ip['evaluate']:.3f} s, floor "
                f"(read both Parquet files + left join) {ip['floor']:.3f} s: "
                f"**{ip['evaluate'] / ip['floor']:.2f}x** the floor."
            )
            for key in block:
                if key.startswith("inproc@"):
                    before = block[key]
                    lines.append(
                        f"ireval_df{key.removeprefix('inproc')}: `evaluate()` "
                        f"{before['evaluate']:.3f} s, floor {before['floor']:.3f} s; "
                        f"after / before: {ip['evaluate'] / before['evaluate']:.3f}."
                    )
            lines.append("")
        agree = block.get("agreement")
        if agree:
            if all("@" in tool for tool in agree["peers"]):  # versions only
                lines.append("Agreement with ireval_df:")
            else:
                lines.append(
                    f"Agreement with ireval_df (|difference| <= {TOLERANCE:g} per "
                    f"query); {agree['tie_queries']} queries have a judged document "
                    "tied with another document, and "
                    f"{agree.get('float32_ties', 0)} more tie only as float32 "
                    "(trec_eval 9.x, inside pytrec_eval and ir_measures, stores "
                    "scores so):"
                )
            lines.append("")
            for tool, per_metric in agree["peers"].items():
                rule = TIE_RULES.get(tool, (set(), "as trec_eval"))[1] or "as trec_eval"
                if "@" in tool:
                    rule = "none; must equal ireval_df exactly"
                parts = []
                for metric, d in per_metric.items():
                    text = f"{metric} {d['differ']}/{d['queries']}"
                    if d["differ"]:
                        text += f" (mean {d['mean_delta']:+.2e}, unexplained {d['unexplained']})"
                    parts.append(text)
                lines.append(
                    f"- {tool} (ties: {rule}): queries differing: " + "; ".join(parts)
                )
            lines.append("")
    for key, im in results.items():
        if key == "imports" or key.startswith("imports@"):
            lines.append(
                f"`import ireval_df{key.removeprefix('imports')}`: {im['import_s']:.3f} s "
                f"(median); pandas imported: {im['pandas']}, scipy imported: "
                f"{im['scipy']}."
            )
            lines.append("")
    for st in results.get("stacked", []):
        version = f"ireval_df@{st['version']}, " if st.get("version") else ""
        lines.append(
            f"Stacked runs ({version}{st['shape']}, {st['queries']:,} queries): one run "
            f"({st['rows_one']:,} rows) {st['one']:.3f} s; {st['runs']} runs in one frame "
            f"({st['rows_stacked']:,} rows) {st['stacked']:.3f} s = "
            f"**{st['stacked'] / st['one']:.1f}x** one run."
        )
        lines.append("")
    return "\n".join(lines)


def versus_table(timing: dict[str, list[dict[str, Any]]]) -> list[str]:
    """After (this checkout) against each ``--versus`` version, row by row."""
    rows = []
    for label, before in timing.items():
        if "@" not in label:
            continue
        name, _, rest = label.partition("@")
        version, _, suffix = rest.partition(" ")
        after = timing[" ".join([name, suffix]).strip()]
        a, b = medians(after), medians(before)
        paired = [x["wall_s"] / y["wall_s"] for x, y in zip(after, before, strict=True)]
        rows.append(
            f"| {label} | {a['wall_s']:.3f} | {b['wall_s']:.3f} | "
            f"**{a['wall_s'] / b['wall_s']:.3f}** | {min(paired):.3f}-{max(paired):.3f} | "
            f"{a['rss_mib']:.0f} | {b['rss_mib']:.0f} | "
            f"**{a['rss_mib'] / b['rss_mib']:.3f}** |"
        )
    if not rows:
        return []
    return [
        "After (this checkout) / before (`--versus`): medians, and the range of "
        "the rounds' own ratios (each round runs both back to back, in turn first).",
        "",
        "| before | after (s) | before (s) | after / before | rounds | "
        "after RSS (MiB) | before RSS (MiB) | after / before |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]


def unexplained(results: dict[str, Any]) -> int:
    """Number of per-query differences the agreement check cannot explain."""
    return sum(
        d["unexplained"]
        for block in results["shapes"].values()
        for per_metric in block.get("agreement", {}).get("peers", {}).values()
        for d in per_metric.values()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shapes", nargs="+", default=["msmarco-dev", "large"], choices=sorted(SHAPES)
    )
    parser.add_argument(
        "--tools",
        nargs="+",
        default=["ireval_df", *PEERS],
        choices=["ireval_df", *PEERS],
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--inproc-rounds", type=int, default=7)
    parser.add_argument("--import-rounds", type=int, default=7)
    parser.add_argument(
        "--buckets",
        type=int,
        nargs="*",
        default=[1, 10],
        help="on Parquet-only shapes (xl), also time evaluate(buckets=N) for each N "
        "beside the default (auto)",
    )
    parser.add_argument(
        "--robust03",
        metavar="DIR",
        help="also score the 17 runs of the TREC 2003 Robust track: a folder "
        "holding runs/input.*.gz and qrels.txt (or trectools' examples/robust03)",
    )
    parser.add_argument(
        "--data", default=os.path.join(tempfile.gettempdir(), "ireval_df_bench")
    )
    parser.add_argument(
        "--stacked",
        nargs="*",
        default=["trec-dl", "msmarco-dev:1000"],
        metavar="SHAPE[:QUERIES]",
        help="one run vs 20 stacked runs of these shapes (first QUERIES queries); none: skip",
    )
    parser.add_argument(
        "--versus",
        action="append",
        default=[],
        metavar="PYTHON[=LABEL]",
        help="also time the ireval_df that this interpreter imports (e.g. a venv "
        "with the code before a change installed) as ireval_df@LABEL (default "
        "label: base), interleaved with this checkout's; repeatable",
    )
    parser.add_argument(
        "--python",
        help="the interpreter that runs this checkout's ireval_df (default: this "
        "one); with --versus, best the same as the other version's, so that both "
        "start alike (an editable install's import hook alone costs ~25 ms a process)",
    )
    parser.add_argument("--no-agreement", action="store_true")
    parser.add_argument("--json", help="write every measurement here")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    versus: dict[str, str] = {}
    for item in args.versus:
        python, _, label = item.partition("=")
        label = label or "base"
        if label in versus or not label.isidentifier():
            parser.error(f"--versus: label {label!r} is taken or not a plain name")
        versus[label] = python
    data = Path(args.data)
    tools = available(["ireval_df", *[t for t in args.tools if t != "ireval_df"]])
    skipped = sorted(set(args.tools) - set(tools))
    if skipped:
        print(f"not installed, skipped: {', '.join(skipped)}", file=sys.stderr)
    results: dict[str, Any] = {
        "machine": machine(),
        "versions": versions(),
        "shapes": {},
        "skipped": skipped,
    }
    compile_checkout(args.python)
    if versus:
        found = {"ireval_df": probe(args.python, checkout=True)}
        for label, python in versus.items():
            found[f"ireval_df@{label}"] = probe(python, checkout=False)
        for label, info in found.items():
            if info["polars"] != found["ireval_df"]["polars"]:
                print(f"warning: {label} runs another polars", file=sys.stderr)
            if label != "ireval_df" and info["file"] == found["ireval_df"]["file"]:
                print(f"warning: {label} imports this checkout", file=sys.stderr)
        results["versus"] = found
    blocks = list(args.shapes) + (["robust03"] if args.robust03 else [])
    for shape in blocks:
        print(f"{shape}:", file=sys.stderr)
        if shape == "robust03":
            paths = robust03(Path(args.robust03), data)
        else:
            paths = files(shape, data)
        shape_tools = tools if "run_trec" in paths else ["ireval_df"]
        warm(paths, shape_tools, data)
        block: dict[str, Any] = {"shape": _describe(shape, paths)}
        if not args.no_agreement and (len(shape_tools) > 1 or versus):
            with tempfile.TemporaryDirectory() as tmp:
                block["agreement"] = agreement(
                    shape_tools, paths, Path(tmp), versus, args.python
                )
        block["timing"] = timed_rounds(
            shape_tools, paths, args.rounds, args.buckets, versus, args.python
        )
        if "run_parquet" in paths and "run_trec" in paths:  # not on xl or robust03
            inproc = [
                "inproc",
                str(paths["run_parquet"]),
                str(paths["qrels_parquet"]),
                "--rounds",
                str(args.inproc_rounds),
            ]
            block["inproc"], _, _ = run_process(inproc, args.python)
            for label, python in versus.items():
                block[f"inproc@{label}"], _, _ = run_process(inproc, python, False)
        results["shapes"][shape] = block
    # one import a process, the versions in turn
    imports: dict[str, list[dict[str, Any]]] = {}
    for _ in range(args.import_rounds):
        for label, python in {"": args.python, **versus}.items():
            report, _, _ = run_process(["imports", "--rounds", "1"], python, not label)
            imports.setdefault(label, []).append(report)
    for label, reports in imports.items():
        results["imports@" + label if label else "imports"] = {
            "import_s": statistics.median(r["import_s"] for r in reports),
            "pandas": any(r["pandas"] for r in reports),
            "scipy": any(r["scipy"] for r in reports),
        }
    results["stacked"] = []
    for item in args.stacked:
        if item == "none":
            continue
        shape, _, queries = item.partition(":")
        paths = files(shape, data)
        extra = ["--queries", queries] if queries else []
        stacked = [
            "stacked",
            str(paths["run_parquet"]),
            str(paths["qrels_parquet"]),
            "--rounds",
            str(args.rounds),
            *extra,
        ]
        for label, python in {"": args.python, **versus}.items():
            report, _, _ = run_process(stacked, python, label == "")
            results["stacked"].append({"shape": shape, "version": label, **report})
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(markdown(results))
    bad = unexplained(results)
    if bad:
        print(f"{bad} per-query differences are not explained", file=sys.stderr)
        return 1
    return 0


def _describe(shape: str, paths: dict[str, Path]) -> dict[str, Any]:
    if shape == "robust03":
        import ireval_df as ie

        qrels = ie.read_qrels(paths["qrels_trec"])
        runs = sorted(paths["run_trec"].iterdir())
        rows = sum(sum(1 for _ in open(p, "rb")) for p in runs)
        queries = qrels["query_id"].n_unique()
        return {
            "queries": queries,
            "run_rows": rows,
            "runs": len(runs),
            "judged_per_query": round(qrels.height / queries, 2),
            "relevant_per_query": round(
                qrels.filter(pl.col("relevance") > 0).height / queries, 2
            ),
        }
    run = pl.scan_parquet(paths["run_parquet"])
    qrels = pl.scan_parquet(paths["qrels_parquet"])
    queries = SHAPES[shape].queries
    judged = qrels.select(pl.len()).collect().item()
    relevant = qrels.filter(pl.col("relevance") > 0).select(pl.len()).collect().item()
    return {
        "queries": queries,
        "run_rows": run.select(pl.len()).collect().item(),
        "judged_per_query": round(judged / queries, 2),
        "relevant_per_query": round(relevant / queries, 2),
    }


if __name__ == "__main__":
    raise SystemExit(main())
