"""Random preference judgments and runs, for trec_eval's ``prefs_*`` measures.

``generate(seed)`` makes one case: a preference file (``-R prefs``, or a
qrels file for ``-R qrels_prefs``), a run and trec_eval options. The cases
cover judgment groups with one and with several sub-groups (whose levels come
from one hidden order per group, so they are consistent, as trec_eval
requires), ties in levels and in scores, documents listed twice, negative and
zero levels, judged documents not retrieved, retrieved documents not judged,
topics the run does not answer, ``-M`` cuts, and groups with nothing to
count.

``python tests/reference/prefs_cases.py TREC_EVAL TREC_EVAL_17G`` runs
trec_eval 10.0 on each case and stores its output beside the inputs in
``data/prefs_cases.json``, which ``test_prefs_trec_eval.py`` replays:
``expected``, the output of the released binary, and ``exact``, that of the
same source built with its values printed ``%.17g`` instead of ``%6.4f``
(``sed -i 's/%6\\.4f/%.17g/g' meas_print_single.c meas_print_final.c``), to
compare the numbers to the last bit.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "prefs_cases.json"
N_CASES = 80


def _levels(rng: random.Random, *, one_sub_group: bool) -> list[float]:
    """Levels for one judgment group.

    A group with one sub-group gets at most one level <= 0: with two (0 and
    -1, say) and more non-relevant than relevant documents, trec_eval's
    prefs_avgjg_Rnonrel reads past the end of its array of the lowest level
    when that level has fewer documents than the group has relevant ones
    (an undefined value; docs/trec_eval.md).
    """
    pool = [0.0, 0.0, 1.0, 2.0, 3.0, 5.5, -1.0]
    levels = rng.sample(pool, rng.randint(1, 4))
    if one_sub_group:
        low = [v for v in levels if v <= 0]
        levels = [v for v in levels if v > 0] + low[:1]
    return levels


def generate(seed: int) -> dict[str, object]:
    """One random case: files as text and the trec_eval options."""
    rng = random.Random(seed)
    qrels_layout = rng.random() < 0.25
    docs = [f"d{i:02d}" for i in range(rng.randint(3, 14))]
    lines = []
    runs = []
    for t in range(rng.randint(1, 4)):
        qid = f"q{t}"
        for g in range(rng.randint(1, 3)):
            jg = f"g{g}"
            judged = rng.sample(docs, rng.randint(1, min(len(docs), 8)))
            subgroups = 1 if qrels_layout or rng.random() < 0.5 else rng.randint(2, 3)
            levels = _levels(rng, one_sub_group=subgroups == 1)
            hidden = {d: rng.choice(levels) for d in judged}
            for s in range(subgroups):
                members = (
                    judged
                    if subgroups == 1
                    else rng.sample(judged, rng.randint(1, len(judged)))
                )
                for d in members:
                    if qrels_layout:
                        lines.append(f"{qid} {jg} {d} {int(hidden[d])}")
                    else:
                        lines.append(f"{qid} {jg} s{s} {d} {hidden[d]}")
                    # a document listed twice at its level (one sub-group)
                    if subgroups == 1 and not qrels_layout and rng.random() < 0.05:
                        lines.append(f"{qid} {jg} s{s} {d} {hidden[d]}")
        if qrels_layout:
            # a qrels file judges a document once per topic
            seen: set[tuple[str, str]] = set()
            kept = []
            for line in lines:
                q, _, d, _ = line.split()
                if (q, d) not in seen:
                    seen.add((q, d))
                    kept.append(line)
            lines = kept
        if rng.random() < 0.85:
            retrieved = rng.sample(docs + ["x1", "x2", "x3"], rng.randint(0, len(docs)))
            for rank, d in enumerate(retrieved, 1):
                score = rng.choice([1.0, 2.0, 2.0, 3.0, 4.5, rng.random()])
                runs.append(f"{qid} Q0 {d} {rank} {score} run{seed}")
    if not runs:
        runs.append(f"zz Q0 d00 1 1.0 run{seed}")
    rng.shuffle(lines)
    rng.shuffle(runs)
    options = [
        "-q",
        "-c",
        "-m",
        "all_prefs",
        "-R",
        "qrels_prefs" if qrels_layout else "prefs",
    ]
    if rng.random() < 0.3:
        options += [f"-M{rng.randint(1, 6)}"]
    return {
        "seed": seed,
        "options": options,
        "prefs": "\n".join(lines) + "\n",
        "run": "\n".join(runs) + "\n",
    }


def run_trec_eval(binary: str, case: dict[str, object]) -> tuple[int, str]:
    """Run a trec_eval binary on a case: its exit status and output."""
    with tempfile.TemporaryDirectory() as folder:
        prefs = Path(folder) / "prefs"
        run = Path(folder) / "run"
        prefs.write_text(str(case["prefs"]))
        run.write_text(str(case["run"]))
        argv = [binary, *case["options"], str(prefs), str(run)]  # type: ignore[misc]
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, timeout=60
        )
    return done.returncode, done.stdout


def main(binary: str, exact_binary: str) -> None:
    """Store every case with trec_eval's output, as printed and exact."""
    cases = []
    for seed in range(N_CASES):
        case = generate(seed)
        code, stdout = run_trec_eval(binary, case)
        case["code"] = code
        case["expected"] = stdout
        case["exact"] = run_trec_eval(exact_binary, case)[1]
        cases.append(case)
    DATA.write_text(json.dumps(cases, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
