"""An embedding profile: the fixed configuration a store (or an organization) records for its vectors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingProfile:
    """The one fixed embedding configuration of a store (or of an organization's Memories): model, dimension, L2 on
    unit vectors."""

    profile_id: str
    model: str
    dimension: int
    distance: Literal["l2"] = "l2"
    normalization: str = "unit"

    def canonical(self) -> dict[str, object]:
        return {
            "profile_id": self.profile_id,
            "model": self.model,
            "dimension": self.dimension,
            "distance": self.distance,
            "normalization": self.normalization,
        }


__all__ = ["EmbeddingProfile"]
