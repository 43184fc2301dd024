"""PostgreSQL array literals built by the engine and bound as one text parameter each (the statement casts them:
``?::text[]``, ``?::int[]``, ``?::bytea[]``). psycopg dumps a Python list parameter element by element in Python,
which cost a write's client more instructions than the statement it fed (issue 13); a literal is a few ``join``s.
The server reads each back exactly: every text element is quoted with its backslashes and double quotes escaped,
and bytes travel as bytea's hex form."""

from __future__ import annotations

from collections.abc import Iterable


def text_array(values: Iterable[str]) -> str:
    """``values`` as a ``text[]`` literal (the empty string and ``NULL`` as text too)."""
    values = list(values)
    if not values:
        return "{}"
    joined = '","'.join(values)
    if "\\" not in joined and '"' not in joined:  # nothing to escape (the analyzer's tokens): one join
        return '{"' + joined + '"}'
    quoted = ['"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values]
    return "{" + ",".join(quoted) + "}"


def int_array(values: Iterable[int]) -> str:
    """``values`` as an ``int[]`` / ``bigint[]`` literal."""
    return "{" + ",".join(map(str, values)) + "}"


def bytea_array(values: Iterable[bytes]) -> str:
    """``values`` as a ``bytea[]`` literal: each element bytea's hex input (``\\x…``), its backslash escaped."""
    return "{" + ",".join(['"\\\\x' + v.hex() + '"' for v in values]) + "}"


__all__ = ["bytea_array", "int_array", "text_array"]
