"""Run-vs-run similarity: how alike two systems' rankings are, without judgments.

:mod:`.rankings` turns runs into the paired, tie-aware rankings that every
similarity measure reads; :mod:`.correlation` (Kendall's tau-b, tau_AP) and
:mod:`.overlap` (Jaccard, overlap at k) compute one value per comparison.
"""
