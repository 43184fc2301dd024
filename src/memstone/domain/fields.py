"""A dataclass value's fields as a dict: the ``to_dict`` of the values whose dict is their fields as they are."""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Protocol


class DataclassValue(Protocol):
    """Any dataclass instance."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[object]]]


def field_dict(value: DataclassValue) -> dict[str, object]:
    """The fields of ``value`` by name, in declaration order; shallow (a nested value is kept as it is)."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


class FieldDict:
    """The base of a dataclass whose ``to_dict`` is its fields as they are (:func:`field_dict`)."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[object]]]

    def to_dict(self) -> dict[str, object]:
        return field_dict(self)


__all__ = ["DataclassValue", "FieldDict", "field_dict"]
