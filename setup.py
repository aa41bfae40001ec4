"""Build the optional C tokenizer of TREC text (``ireval_df/io/_ctrec.c``).

Everything else is declared in ``pyproject.toml``. The extension is optional:
where it cannot be compiled (no C compiler, a platform without POSIX threads
and ``mmap``), the package installs without it and reads TREC text with
polars alone, with the same results.
"""

import os

from setuptools import Extension, setup

TOKENIZER = Extension(
    "ireval_df.io._ctrec",
    sources=["ireval_df/io/_ctrec.c"],
    extra_compile_args=["-O2"],
    optional=True,
)

setup(ext_modules=[TOKENIZER] if os.name == "posix" else [])
