"""Online evaluation: what users did with the results they were shown.

:func:`read_log` reads and checks a search log (:mod:`.log`); the
``online`` family of the measure registry (:mod:`.measures`) defines each
metric as a ratio of sums over the rows of one grain, built once per call
(:mod:`.derive`); :func:`metrics` computes them per experiment arm and
slice, and :func:`unit_table` gives the per-unit sums behind them.
:func:`fit_click_model` fits a click model (PBM, cascade, UBM, DCM, SDBN,
DBN) to a flat click log (or a log: :func:`click_frame`) and returns a :class:`ClickModel` whose
parameters, predictions and click-derived judgments are frames.
:func:`interleave` merges rankings for an interleaving experiment,
:func:`interleaving_outcomes` credits each search's clicks and
:func:`interleaving_test` tests the preferences. :func:`ab_test`,
:func:`srm`, :func:`power` and :func:`aa_test` analyse an A/B test per
randomisation unit (:mod:`.ab`, on :mod:`ireval_df.stats.experiments`),
with the unit-level specs :func:`mean`, :func:`ratio`, :func:`proportion`.
:func:`propensities` estimates examination by position and
:func:`counterfactual` the click metrics of a new ranking from logged clicks.

The registry imports this package to register the online measures, so the
modules that need numpy (click models, interleaving, A/B tests) are imported on first
use only: evaluating offline metrics loads no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ireval_df._utils.lazy import lazy_names
from ireval_df.online.log import SearchLog, example_log, read_log
from ireval_df.online.metrics import metrics
from ireval_df.online.units import unit_columns, unit_table

if TYPE_CHECKING:
    from ireval_df.online.ab import (
        aa_test,
        ab_test,
        mean,
        power,
        proportion,
        ratio,
        srm,
    )
    from ireval_df.online.agreement import agreement_by_query
    from ireval_df.online.click_models import MODELS, ClickModel, fit_click_model
    from ireval_df.online.flat import click_frame
    from ireval_df.online.interleaving import (
        interleave,
        interleaving_outcomes,
        interleaving_test,
    )
    from ireval_df.online.propensity import counterfactual, propensities

__all__ = [
    "MODELS",
    "ClickModel",
    "SearchLog",
    "aa_test",
    "ab_test",
    "agreement_by_query",
    "click_frame",
    "counterfactual",
    "example_log",
    "fit_click_model",
    "interleave",
    "interleaving_outcomes",
    "interleaving_test",
    "mean",
    "metrics",
    "power",
    "proportion",
    "ratio",
    "propensities",
    "read_log",
    "srm",
    "unit_columns",
    "unit_table",
]

_LAZY = {
    "aa_test": "ireval_df.online.ab",
    "ab_test": "ireval_df.online.ab",
    "mean": "ireval_df.online.ab",
    "power": "ireval_df.online.ab",
    "proportion": "ireval_df.online.ab",
    "ratio": "ireval_df.online.ab",
    "srm": "ireval_df.online.ab",
    "MODELS": "ireval_df.online.click_models",
    "ClickModel": "ireval_df.online.click_models",
    "fit_click_model": "ireval_df.online.click_models",
    "agreement_by_query": "ireval_df.online.agreement",
    "click_frame": "ireval_df.online.flat",
    "counterfactual": "ireval_df.online.propensity",
    "propensities": "ireval_df.online.propensity",
    "interleave": "ireval_df.online.interleaving",
    "interleaving_outcomes": "ireval_df.online.interleaving",
    "interleaving_test": "ireval_df.online.interleaving",
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
