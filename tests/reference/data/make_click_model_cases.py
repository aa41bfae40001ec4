"""Write click_model_logs.parquet and click_model_pyclick.parquet: PyClick's answers.

Simulated logs (``tests/click_simulation.py``, fixed seeds) are written to
``click_model_logs.parquet`` (``case, split, search_id, query_id, position,
doc_id, clicked``); PyClick (github.com/markovi/PyClick, commit 98e7e46, GPL:
run as an oracle in its own interpreter, none of its code copied) trains
PBM, CM, UBM, DCM and SDBN on each case's ``train`` split and its results go
to ``click_model_pyclick.parquet``, one long frame:

* ``kind = "param"``: ``model, iterations, param, query_id, doc_id,
  position, prev_click_position, value``. Positions are 1-based;
  PyClick's UBM "no click above" (its rank M - 1 with M = 10) is written as
  ``prev_click_position = 0``. Only the keys the log shows are kept.
* ``kind = "full"`` / ``"conditional"``: per row of the ``test`` split
  (``search_id, position``), ``get_full_click_probs`` and
  ``get_conditional_click_probs`` (the probability of what happened: one
  minus P(click) on a skip).
* ``kind = "metric"``: ``param = "log_likelihood"`` (PyClick's
  ``LogLikelihood``) and ``"perplexity"`` (``Perplexity``: ``position`` null
  for the overall value) on the test split.

Cases: multi-click PBM users; DBN users (gamma 0.9); sparse pairs (150
queries, most pairs seen once or twice); rare clicks (many searches without
a click); UBM users; short lists (3 to 10 results: PyClick's UBM and its
perplexity assume 10, so neither is compared there). PBM and UBM are also
trained with 3 and 1 EM iterations, where EM has not converged.

    python make_click_model_cases.py --pyclick-python PY --pyclick-path DIR

``PY`` is an interpreter that runs PyClick (Python 3 works unchanged) and
``DIR`` the checkout holding its ``pyclick`` package.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for click_simulation

from click_simulation import simulate  # noqa: E402

#: name, user, simulate() options, train searches, test searches, models
CASES = [
    ("pbm_multi", "PBM", {"seed": 11, "n_queries": 20, "docs_per_query": 12}, 500),
    ("dbn_user", "DBN", {"seed": 12, "n_queries": 15, "docs_per_query": 12}, 500),
    ("sparse", "PBM", {"seed": 13, "n_queries": 150, "docs_per_query": 12}, 300),
    (
        "rare_clicks",
        "DCM",
        {"seed": 14, "n_queries": 15, "alpha_range": (0.01, 0.2)},
        500,
    ),
    ("ubm_user", "UBM", {"seed": 15, "n_queries": 15, "docs_per_query": 12}, 500),
    ("short_lists", "DBN", {"seed": 16, "n_queries": 15, "min_length": 3}, 400),
]
N_TEST = 30
#: (model, iterations) trained per case; MLE models take no iterations
RUNS = [("PBM", 50), ("CM", 0), ("UBM", 50), ("DCM", 0), ("SDBN", 0)]
EXTRA_RUNS = {"pbm_multi": [("PBM", 3), ("UBM", 3)], "sparse": [("PBM", 1)]}
#: PyClick assumes lists of 10 for UBM's "no click above" and for perplexity
SKIP = {"short_lists": {"UBM"}}

DRIVER = r"""
import json, sys
from pyclick.click_models.PBM import PBM
from pyclick.click_models.CM import CM
from pyclick.click_models.UBM import UBM
from pyclick.click_models.DCM import DCM
from pyclick.click_models.SDBN import SDBN
from pyclick.click_models.Inference import EMInference
from pyclick.click_models.Evaluation import LogLikelihood, Perplexity
from pyclick.search_session.SearchSession import SearchSession
from pyclick.search_session.SearchResult import SearchResult

MODELS = {"PBM": PBM, "CM": CM, "UBM": UBM, "DCM": DCM, "SDBN": SDBN}

def sessions(rows):
    out = []
    for query, results in rows:
        s = SearchSession(query)
        s.web_results = [SearchResult(doc, int(click)) for doc, click in results]
        out.append(s)
    return out

def pairs(container):
    return [[q, d, p.value()] for q, docs in container._container.items()
            for d, p in docs.items()]

job = json.load(open(sys.argv[1]))
out = []
for case in job["cases"]:
    train, test = sessions(case["train"]), sessions(case["test"])
    for name, iterations in case["runs"]:
        model = MODELS[name]()
        if iterations:
            model._inference = EMInference(iterations)
        model.train(train)
        names = model.param_names
        params = {}
        for key, container in model.params.items():
            if key.name in ("attr", "sat"):
                params[key.name] = pairs(container)
            elif name == "UBM":
                params[key.name] = [[p.value() for p in row] for row in container._container]
            else:
                params[key.name] = [p.value() for p in container._container]
        full = [model.get_full_click_probs(s) for s in test]
        conditional = [model.get_conditional_click_probs(s) for s in test]
        ll = LogLikelihood().evaluate(model, test)
        perplexity = Perplexity().evaluate(model, test)
        out.append({"case": case["name"], "model": name, "iterations": iterations,
                    "params": params, "full": full, "conditional": conditional,
                    "log_likelihood": ll, "perplexity": perplexity})
print(json.dumps(out))
"""


def sessions_of(log: pl.DataFrame) -> list[list[object]]:
    """[[query, [[doc, click], ...]], ...] in search order, results by position."""
    grouped = (
        log.sort("search_id", "position")
        .group_by("search_id", maintain_order=True)
        .agg(pl.col("query_id").first(), "doc_id", "clicked")
    )
    return [
        [q, [[d, int(c)] for d, c in zip(docs, clicks, strict=True)]]
        for _, q, docs, clicks in grouped.iter_rows()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyclick-python", required=True)
    parser.add_argument("--pyclick-path", required=True, type=Path)
    args = parser.parse_args()
    logs, job = [], []
    for name, user, options, n_train in CASES:
        sim = simulate(user, n_searches=n_train + N_TEST, **options)  # type: ignore[arg-type]
        log = sim.log.with_columns(
            case=pl.lit(name),
            split=pl.when(pl.col("search_id").str.slice(1).cast(pl.Int64) < n_train)
            .then(pl.lit("train"))
            .otherwise(pl.lit("test")),
        )
        logs.append(log)
        runs = [
            r for r in RUNS + EXTRA_RUNS.get(name, []) if r[0] not in SKIP.get(name, ())
        ]
        job.append(
            {
                "name": name,
                "train": sessions_of(log.filter(pl.col("split") == "train")),
                "test": sessions_of(log.filter(pl.col("split") == "test")),
                "runs": runs,
            }
        )
    all_logs = pl.concat(logs).select(
        "case", "split", "search_id", "query_id", "position", "doc_id", "clicked"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "job.json"
        path.write_text(json.dumps({"cases": job}))
        env = dict(os.environ, PYTHONPATH=str(args.pyclick_path))
        done = subprocess.run(
            [args.pyclick_python, "-c", DRIVER, str(path)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
    results = json.loads(done.stdout)
    rows: list[dict[str, object]] = []
    for result in results:
        rows.extend(expected_rows(result, all_logs))
    all_logs.write_parquet(HERE / "click_model_logs.parquet", compression_level=22)
    frame = pl.DataFrame(
        rows,
        schema={
            "case": pl.String,
            "model": pl.String,
            "iterations": pl.Int64,
            "kind": pl.String,
            "param": pl.String,
            "query_id": pl.String,
            "doc_id": pl.String,
            "search_id": pl.String,
            "position": pl.Int64,
            "prev_click_position": pl.Int64,
            "value": pl.Float64,
        },
    )
    frame.write_parquet(HERE / "click_model_pyclick.parquet", compression_level=22)
    print(f"{all_logs.height} log rows, {frame.height} expected values")


def expected_rows(
    result: dict[str, object], logs: pl.DataFrame
) -> list[dict[str, object]]:
    case, model = str(result["case"]), str(result["model"])
    base = {"case": case, "model": model, "iterations": result["iterations"]}
    train = logs.filter((pl.col("case") == case) & (pl.col("split") == "train"))
    depth = int(train["position"].max())
    seen_positions = set(train["position"].unique().to_list())
    rows: list[dict[str, object]] = []
    params = result["params"]
    assert isinstance(params, dict)
    shown = set(train.select("query_id", "doc_id").iter_rows())
    names = {"attr": "attractiveness", "sat": "satisfaction"}
    for key, values in params.items():
        if key in names:
            for q, d, v in values:
                if (q, d) in shown:
                    rows.append(
                        base
                        | {"kind": "param", "param": names[key], "query_id": q}
                        | {"doc_id": d, "value": v}
                    )
        elif model == "UBM":
            for rank, row in enumerate(values):
                for prev, v in enumerate(row):
                    if prev >= rank and prev != depth - 1:
                        continue  # impossible keys: a click above must be above
                    position = rank + 1
                    previous = 0 if prev == depth - 1 else prev + 1
                    if position in seen_positions:
                        rows.append(
                            base
                            | {"kind": "param", "param": "examination"}
                            | {"position": position}
                            | {"prev_click_position": previous, "value": v}
                        )
        else:
            param = {"exam": "examination", "cont": "continuation"}[key]
            for rank, v in enumerate(values):
                if rank + 1 in seen_positions:
                    rows.append(
                        base
                        | {"kind": "param", "param": param, "position": rank + 1}
                        | {"value": v}
                    )
    test = (
        logs.filter((pl.col("case") == case) & (pl.col("split") == "test"))
        .sort("search_id", "position")
        .group_by("search_id", maintain_order=True)
        .agg("position")
    )
    for kind in ("full", "conditional"):
        probabilities = result[kind]
        assert isinstance(probabilities, list)
        for (search_id, positions), probs in zip(
            test.iter_rows(), probabilities, strict=True
        ):
            for position, p in zip(positions, probs, strict=True):
                rows.append(
                    base
                    | {"kind": kind, "search_id": search_id, "position": position}
                    | {"value": p}
                )
    rows.append(
        base
        | {
            "kind": "metric",
            "param": "log_likelihood",
            "value": result["log_likelihood"],
        }
    )
    perplexity = result["perplexity"]
    assert isinstance(perplexity, list)
    overall, per_rank = perplexity
    rows.append(base | {"kind": "metric", "param": "perplexity", "value": overall})
    for rank, v in enumerate(per_rank):
        rows.append(
            base
            | {"kind": "metric", "param": "perplexity", "position": rank + 1}
            | {"value": v}
        )
    return rows


if __name__ == "__main__":
    main()
