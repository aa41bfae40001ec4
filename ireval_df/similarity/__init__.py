"""Run-vs-run similarity: how alike two systems' rankings are, without judgments.

:mod:`.rankings` turns runs into the paired, tie-aware rankings that every
similarity measure reads.
"""
