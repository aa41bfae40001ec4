"""Online evaluation: what users did with the results they were shown.

:func:`fit_click_model` fits a click model (PBM, cascade, UBM, DCM, SDBN,
DBN) to a flat click log and returns a :class:`ClickModel` whose parameters,
predictions and click-derived judgments are frames.
"""

from ireval_df.online.click_models import MODELS, ClickModel, fit_click_model

__all__ = ["MODELS", "ClickModel", "fit_click_model"]
