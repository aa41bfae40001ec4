"""The C tokenizer built with AddressSanitizer and UBSan, on every input we have.

``_ctrec.c`` is compiled here with ``-fsanitize=address,undefined`` into a
temporary folder, and a fresh Python (libasan preloaded, every Python
allocation through ``malloc`` so that each input buffer has ASan's red
zones) runs, with that build in place of the installed one:

* ``tests/unit/io/test_tokenize.py``: trec_eval's conformance inputs
  (``tests/conformance/trec_eval``: runs, qrels, prefs, Z-scores), whole and
  tiled past 1 MiB over several threads, and generated text, each compared
  with the Python tokenizer (:func:`ireval_df.io.tokenize.split_fields`);
* ``tests/unit/io/test_trec_native.py``: lines, numbers and large files
  against the careful reader, over 1 to 7 threads;
* the TREC reader fuzzers of ``tests/fuzz/test_fuzz_readers.py`` (random
  text and bytes included) and the trec_eval reader's tests.

Any sanitizer report fails the run. The output buffers are anonymous
mappings, which ASan does not guard byte by byte; reads of the input, the
stack, ``malloc``'d memory and every arithmetic step are checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
SOURCE = REPO / "ireval_df" / "io" / "_ctrec.c"
TESTS = [
    "tests/unit/io/test_tokenize.py",
    "tests/unit/io/test_trec_native.py",
    "tests/unit/trec_eval/test_trec_eval_reader.py",
    "tests/fuzz/test_fuzz_readers.py::test_trec_run_follows_the_reading_rules",
    "tests/fuzz/test_fuzz_readers.py::test_trec_qrels_follow_the_reading_rules",
    "tests/fuzz/test_fuzz_readers.py::test_random_bytes_in_every_format",
    "tests/fuzz/test_fuzz_readers.py::test_random_text_in_every_text_format",
]
# run in the child: put the sanitized build where ``from ireval_df.io import
# _ctrec`` finds it, check that the tokenizer uses it, run the tests
RUNNER = """
import importlib.util, sys
import pytest
so, *args = sys.argv[1:]
spec = importlib.util.spec_from_file_location("ireval_df.io._ctrec", so)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
sys.modules["ireval_df.io._ctrec"] = module
from ireval_df.io import tokenize
assert tokenize._ctrec is module, tokenize._ctrec
code = pytest.main(args)
assert tokenize._ctrec is module
sys.exit(code)
"""


def _compiler() -> str:
    name = (sysconfig.get_config_var("CC") or "cc").split()[0]
    for candidate in (name, "cc"):
        if shutil.which(candidate):
            return candidate
    pytest.skip(f"no C compiler ({name} or cc) on this machine")


def _libasan(compiler: str) -> str:
    found = subprocess.run(
        [compiler, "-print-file-name=libasan.so"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if not found or not Path(found).is_absolute() or not Path(found).exists():
        pytest.skip(f"{compiler} has no libasan.so (install libasan, e.g. gcc's)")
    return found


def _build(compiler: str, folder: Path) -> Path:
    target = folder / f"_ctrec{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    command = [
        compiler,
        "-shared",
        "-fPIC",
        "-O1",
        "-g",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=undefined",
        "-fno-omit-frame-pointer",
        f"-I{sysconfig.get_paths()['include']}",
        str(SOURCE),
        "-o",
        str(target),
        "-lpthread",
    ]
    built = subprocess.run(command, capture_output=True, text=True, check=False)
    if (
        built.returncode
        and "sanitize" in built.stderr
        and "not supported" in built.stderr
    ):
        pytest.skip(f"{compiler} cannot build with the sanitizers: {built.stderr}")
    assert built.returncode == 0, f"{' '.join(command)}\n{built.stderr}"
    return target


def test_the_sanitized_tokenizer_reads_every_input_cleanly(tmp_path: Path) -> None:
    if os.name != "posix" or sys.platform == "darwin":
        pytest.skip("the sanitized build is checked on Linux only")
    compiler = _compiler()
    libasan = _libasan(compiler)
    extension = _build(compiler, tmp_path)
    # pytest captures the child's stderr: the sanitizers write to files
    logs = tmp_path / "sanitizer"
    env = {
        **os.environ,
        "LD_PRELOAD": libasan,
        "ASAN_OPTIONS": f"detect_leaks=0:exitcode=97:log_path={logs}",
        "UBSAN_OPTIONS": f"halt_on_error=1:print_stacktrace=1:log_path={logs}",
        "PYTHONMALLOC": "malloc",
    }
    args = [*TESTS, "-q", "-x", "-p", "no:cacheprovider", "--no-header"]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(extension), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    found = "".join(log.read_text() for log in tmp_path.glob("sanitizer*"))
    report = f"{found[:8000]}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert not found, report
    assert done.returncode == 0, report
    assert " passed" in done.stdout, report
