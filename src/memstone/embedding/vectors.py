"""Validation and normalisation of embedding vectors (standard library only)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ..domain.errors import InvalidInput, ProfileMismatchError
from ..ports import EmbeddingProfile

#: How far from 1.0 the L2 norm of a stored vector may be.
UNIT_TOLERANCE = 1e-3


def _finite_floats(vector: Iterable[object], where: str) -> list[float]:
    values: list[float] = []
    for j, x in enumerate(vector):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise InvalidInput(f"{where}: component {j} is {type(x).__name__}, not a number")
        f = float(x)
        if not math.isfinite(f):
            raise InvalidInput(f"{where}: component {j} is {f!r}; vectors must be finite")
        values.append(f)
    return values


def normalize(vector: Iterable[object], *, where: str = "vector") -> tuple[float, ...]:
    """``vector`` scaled to unit L2 length; refuses non-numbers, NaN/Infinity, empty and zero vectors."""
    values = _finite_floats(vector, where)
    if not values:
        raise InvalidInput(f"{where} is empty")
    norm = math.hypot(*values)  # scales internally, so huge components do not overflow
    if norm == 0.0 or not math.isfinite(norm):
        raise InvalidInput(f"{where} is a zero vector and cannot be normalised")
    return tuple(v / norm for v in values)


def check_vectors(
    vectors: Sequence[Sequence[float]],
    profile: EmbeddingProfile,
    *,
    count: int | None = None,
) -> tuple[tuple[float, ...], ...]:
    """Check that ``vectors`` can be stored under ``profile`` and return them as tuples of floats.

    Every vector must be finite, have the profile's dimension, be non-zero and have unit L2 length within
    :data:`UNIT_TOLERANCE` (the profile's ``normalization`` is ``"unit"``). With ``count``, the number of vectors
    must match too. A wrong dimension raises :class:`ProfileMismatchError`; anything else :class:`InvalidInput`.
    """
    if count is not None and len(vectors) != count:
        raise InvalidInput(f"expected {count} vectors for profile {profile.profile_id}, got {len(vectors)}")
    out: list[tuple[float, ...]] = []
    for i, vector in enumerate(vectors):
        where = f"vector {i}"
        if len(vector) != profile.dimension:
            raise ProfileMismatchError(
                f"{where} has dimension {len(vector)}; profile {profile.profile_id} expects {profile.dimension}"
            )
        values = _finite_floats(vector, where)
        norm = math.hypot(*values)
        if norm == 0.0:
            raise InvalidInput(f"{where} is a zero vector")
        if abs(norm - 1.0) > UNIT_TOLERANCE:
            raise InvalidInput(
                f"{where} has L2 norm {norm:.6g}; profile {profile.profile_id} stores unit vectors "
                f"(|norm - 1| <= {UNIT_TOLERANCE})"
            )
        out.append(tuple(values))
    return tuple(out)


def check_profile(expected: EmbeddingProfile, actual: EmbeddingProfile) -> None:
    """Raise :class:`ProfileMismatchError` unless ``actual`` (a model's profile) equals ``expected`` (a store's)."""
    if expected.canonical() != actual.canonical():
        diffs = [
            f"{key}: store {value!r}, model {actual.canonical()[key]!r}"
            for key, value in expected.canonical().items()
            if actual.canonical()[key] != value
        ]
        raise ProfileMismatchError(
            f"embedding model profile {actual.profile_id} does not match the store's profile "
            f"{expected.profile_id} ({'; '.join(diffs)})",
            hint="vectors from different models must never share an index; use the store's model or rebuild",
        )
