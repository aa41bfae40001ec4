"""The online family's metric names, read from the registry.

Tests that run "every online metric" take their list from here, so a
metric added to the registry joins them without editing each test.
"""

from __future__ import annotations

from ireval_df.measures.registry import REGISTRY
from ireval_df.online.derive import named_measures


def online_names(*, means: bool = False, by_position: bool = True) -> list[str]:
    """Every online metric's registry name, in registry order.

    ``means``: a median metric as its mean (``TimeToFirstClick(stat=mean)``),
    for the calls that refuse medians; ``by_position=False`` leaves out the
    metrics with one value per position (``PositionCTR``).
    """
    names = [name for name, info in REGISTRY.items() if info.family == "online"]
    out = []
    for named in named_measures(names):
        if named.measure.by_position and not by_position:
            continue
        mean = means and named.measure.median is not None
        out.append(f"{named.name}(stat=mean)" if mean else named.name)
    return out
