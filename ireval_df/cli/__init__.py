"""``ireval-df``: the command line, one module per subcommand, over the public API.

Data goes to stdout or ``-o``, messages to stderr. Exit 0 on success, 1 for
bad data (the same messages as the API), 2 for bad usage, 130 on Ctrl-C and
143 on SIGTERM.
"""

from __future__ import annotations

from ireval_df.cli.main import main

__all__ = ["main"]
