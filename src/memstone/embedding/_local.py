"""What the in-process models (MiniLM, USE) share: their integer options, their profile, threads and repr."""

from __future__ import annotations

from typing import ClassVar

from ..domain.errors import InvalidInput
from ..ports import EmbeddingProfile


def int_option(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` if it is an integer in ``low..high`` (no upper bound when ``high`` is None), else InvalidInput."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in {low}..{high}"
        raise InvalidInput(f"{name} must be an integer {bound}, got {value!r}")
    return value


class LocalModel:
    """An in-process model of one fixed ``profile``, run on ``threads`` threads in batches of ``batch_size``."""

    profile: ClassVar[EmbeddingProfile]
    _threads: int
    _batch_size: int

    @property
    def threads(self) -> int:
        return self._threads

    def __repr__(self) -> str:
        return f"{type(self).__name__}(threads={self._threads}, batch_size={self._batch_size})"


__all__ = ["LocalModel", "int_option"]
