"""Evaluating polars frames loads neither pandas, scipy, hypothesis nor tqdm.

``import ireval_df`` alone loads no numpy either, nor the modules behind the
public names imported on first use (compare, report, slices, summarize,
validate, plot); every name in ``__all__`` still resolves, and resolving
``ie.plot`` loads no altair (a chart does).

Checked in a fresh interpreter through ``sys.modules``. How long ``import
ireval_df`` takes is measured by the benchmarks (``bench/harness.py``,
``docs/benchmarks.md``), never asserted here: the machine is shared.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "scipy", "hypothesis", "tqdm")

PROBE = """
import json, sys
heavy = {heavy!r}
seen = {{}}
import ireval_df as ie
seen["import"] = sorted(m for m in heavy if m in sys.modules)
import polars as pl
run = pl.DataFrame({{
    "query_id": ["q1", "q1", "q1", "q2", "q2"],
    "doc_id": ["a", "b", "c", "a", "d"],
    "score": [3.0, 2.0, 2.0, 1.0, 0.5],
}})
qrels = pl.DataFrame({{
    "query_id": ["q1", "q1", "q2", "q3"],
    "doc_id": ["b", "z", "d", "x"],
    "relevance": [1, 2, 1, 1],
}})
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    per_query = ie.evaluate(run, qrels, {metrics!r})
    lazy = ie.evaluate(run.lazy(), qrels.lazy(), ["AP"]).collect()
    ie.summarize(per_query, ci="t")
    # the benchmark's path: files to means with a t interval, without numpy
    seen["numpy"] = "numpy" in sys.modules
    ie.summarize(per_query)
seen["evaluate"] = sorted(m for m in heavy if m in sys.modules)
print(json.dumps(seen))
"""

METRICS = [
    "nDCG@10",
    "AP",
    "RR@10",
    "R@100",
    "P@10",
    "Bpref",
    "infAP",
    "ERR@10",
    "RBP",
    "RBPResidual",
    "G",
    "Rndcg",
    "IPrec@0.5",
    "SetF",
    "Judged@10",
]


def _probe(code: str) -> Any:
    """Run ``code`` in a fresh interpreter; return the JSON of its last line."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_evaluating_polars_frames_imports_no_heavy_module() -> None:
    seen = _probe(PROBE.format(heavy=HEAVY, metrics=METRICS))
    assert seen == {"import": [], "evaluate": [], "numpy": False}


IMPORT_PROBE = """
import json, sys
import ireval_df as ie
seen = {{"heavy": sorted(m for m in {heavy!r} if m in sys.modules)}}
seen["lazy"] = sorted(m for m in {lazy!r} if m in sys.modules)
missing = [name for name in ie.__all__ if not hasattr(ie, name)]
names = {{name: type(getattr(ie, name)).__name__ for name in ie.__all__}}
# ie.plot resolved above: its charts import altair on first use only
seen["altair"] = "altair" in sys.modules
from ireval_df.stats import compare, tukey_hsd
from ireval_df.stats.summary import summarize
from ireval_df.diagnostics.validation import validate
same = [ie.compare is compare, ie.tukey_hsd is tukey_hsd,
        ie.summarize is summarize, ie.validate is validate]
print(json.dumps({{"seen": seen, "missing": missing, "names": names, "same": same}}))
"""

LAZY = (
    "ireval_df.stats",
    "ireval_df.report",
    "ireval_df.diagnostics",
    "ireval_df.online",
    "ireval_df.plot",
)


def test_import_loads_no_numpy_and_every_public_name_resolves() -> None:
    found = _probe(IMPORT_PROBE.format(heavy=(*HEAVY, "numpy"), lazy=LAZY))
    assert found["seen"] == {"heavy": [], "lazy": [], "altair": False}
    assert found["missing"] == []
    # a subpackage named like its function (compare, validate) never hides it
    modules = {k: v for k, v in found["names"].items() if v != "function"}
    assert modules == {
        "Metric": "type",
        "errors": "module",
        "online": "module",
        "plot": "module",
    }
    assert found["same"] == [True, True, True, True]


def test_a_subpackage_never_hides_its_namesake_function() -> None:
    # ireval_df.similarity is a package and ie.similarity a function: the
    # package is imported with ireval_df, so importing its modules later
    # (as the measure registry does) leaves the function in place
    probe = (
        "import json, ireval_df as ie, ireval_df.similarity.measures, "
        "ireval_df.similarity.rbo\n"
        "print(json.dumps([type(ie.similarity).__name__, type(ie.diff).__name__]))"
    )
    assert _probe(probe) == ["function", "function"]


def test_a_module_named_like_its_function_never_replaces_it() -> None:
    # ireval_df.stats.headroom is a module holding headroom(): imported first
    # (by a user, or by a tool reading the package), it becomes the attribute
    # ireval_df.stats.headroom; ie.headroom must still be the function
    probe = (
        "import json, ireval_df as ie, ireval_df.stats.headroom\n"
        "print(json.dumps([type(ie.headroom).__name__]))"
    )
    assert _probe(probe) == ["function"]
