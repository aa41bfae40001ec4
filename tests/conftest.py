"""Test setup: a deterministic hypothesis profile and the tests' import path.

Hypothesis runs derandomized (the examples depend only on the test's code),
without a deadline (the machine is shared) and without an example database,
so every run of the suite sees the same inputs. ``HYPOTHESIS_PROFILE=dev``
gives a randomized, longer run for local bug hunting.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

# ``tests/`` on sys.path so that ``import strategies`` and
# ``from reference import oracle`` work from any test module.
TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=500,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
