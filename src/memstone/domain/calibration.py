"""Search calibration as typed fields: the vector channel's admission and hybrid's convex fusion (issue 15).

A :class:`Calibration` belongs to one embedding profile (``indexing.CALIBRATIONS``); a search request carries the
one in force (``ports.SearchRequest.calibration``), so every engine reads named, typed numbers instead of a
string-keyed map. Each fitted number records where it was fitted (:attr:`Calibration.fitted`): the benchmark
command, and that only the dev halves of its families were read (the held-out halves are reported, never fitted).
"""

from __future__ import annotations

from dataclasses import dataclass

# How an FTS-only search weighs a candidate's matched share of the query terms. Model-independent, so `fts` scores
# mean the same with or without a model; hybrid's own power is part of the profile's calibration.
FTS_COVERAGE_POWER = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """One profile's search calibration; the defaults are the model-free rules (what an FTS search uses).

    Vector admission:

    - ``vector_min_cosine``: a vector candidate below it is not admitted; its dense score is 0 at this floor.
    - ``vector_min_top``: when the query's best cosine is below it and the query has no lexical support in the
      searched Memories, the dense channel admits nothing (the calibrated "no match"); -1 disables the bar.
    - ``vector_min_top_prose``: that bar for a query written as prose (it holds a stopword); None: the same as
      ``vector_min_top`` (see :attr:`prose_bar`).
    - ``support_prefix``: lexical support also counts a stored word sharing the first ``support_prefix`` letters
      of a query term (0: exact terms only).

    Hybrid convex fusion, ``(1 - a) * lexical + a * dense``: the dense share ``a`` follows the lexical channel's
    confidence in the query (``domain/search.py`` ``query_share``): ``share_low`` when the query's words are all
    found, ``share_high`` when few are, a logistic step of ``share_width`` at ``share_pivot`` between.
    ``coverage_power``: how strongly a lexical candidate's score follows the share of the query's informative
    terms it matches.
    """

    vector_min_cosine: float = 0.2
    vector_min_top: float = -1.0
    vector_min_top_prose: float | None = None
    support_prefix: int = 0
    share_low: float = 0.5
    share_high: float = 0.5
    share_pivot: float = 0.5
    share_width: float = 0.05
    coverage_power: float = FTS_COVERAGE_POWER
    fitted: str = "not fitted: the model-free defaults"

    def __post_init__(self) -> None:
        for name in ("share_low", "share_high", "share_pivot"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"calibration {name} must be in [0, 1], got {value}")
        if self.share_width < 0 or self.coverage_power < 0 or self.support_prefix < 0:
            raise ValueError("calibration share_width, coverage_power and support_prefix must be >= 0")

    @property
    def prose_bar(self) -> float:
        """The no-match bar of a prose query (``vector_min_top_prose``, or ``vector_min_top`` when unset)."""
        return self.vector_min_top if self.vector_min_top_prose is None else self.vector_min_top_prose

    def share(self) -> tuple[float, float, float, float]:
        """(low, high, pivot, width) of the dense share, as ``domain/search.py`` ``convex_fuse`` takes it."""
        return (self.share_low, self.share_high, self.share_pivot, self.share_width)


__all__ = ["FTS_COVERAGE_POWER", "Calibration"]
