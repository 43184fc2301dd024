"""An embedding profile: the fixed configuration a store (or an organization) records for its vectors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .fields import field_dict


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
        """Every field, as declared: what a store records and hashes for its profile."""
        return field_dict(self)


__all__ = ["EmbeddingProfile"]
