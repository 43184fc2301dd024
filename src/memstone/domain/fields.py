"""A dataclass value's fields as a dict: the ``to_dict`` of the values whose dict is their fields (as they are,
or JSON-ready)."""

from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar, Protocol


class DataclassValue(Protocol):
    """Any dataclass instance."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[object]]]


@functools.cache
def _names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names in declaration order (``dataclasses.fields`` rebuilds the tuple on every call)."""
    return tuple(f.name for f in dataclasses.fields(cls))


def field_dict(value: DataclassValue) -> dict[str, object]:
    """The fields of ``value`` by name, in declaration order; shallow (a nested value is kept as it is)."""
    return {name: getattr(value, name) for name in _names(type(value))}


class FieldDict:
    """The base of a dataclass whose ``to_dict`` is its fields as they are (:func:`field_dict`)."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[object]]]

    def to_dict(self) -> dict[str, object]:
        return field_dict(self)


_SCALARS = (str, int, float, type(None))


def plain(value: object) -> object:
    """``value`` JSON-ready: a value with a ``to_dict`` as that dict, a tuple or list as a list of plain values."""
    if isinstance(value, _SCALARS):  # the common case, answered before the ``to_dict`` lookup
        return value
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def plain_dict(value: DataclassValue) -> dict[str, object]:
    """The fields of ``value`` by name, in declaration order, each :func:`plain` (nested values as their dicts)."""
    return {name: plain(getattr(value, name)) for name in _names(type(value))}


class PlainDict:
    """The base of a dataclass whose ``to_dict`` is its fields, JSON-ready (:func:`plain_dict`)."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[object]]]

    def to_dict(self) -> dict[str, object]:
        return plain_dict(self)


__all__ = ["DataclassValue", "FieldDict", "PlainDict", "field_dict", "plain", "plain_dict"]
