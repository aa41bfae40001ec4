"""``python -m ireval_df``: the same as the ``ireval-df`` command."""

from __future__ import annotations

import sys

from ireval_df.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
