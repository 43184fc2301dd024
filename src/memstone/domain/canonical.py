"""RFC 8785 JSON Canonicalization Scheme (JCS), and the hashes built on it."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence

from .errors import InvalidInput, shown

JsonValue = None | bool | int | float | str | Sequence["JsonValue"] | Mapping[str, "JsonValue"]


_SURROGATE = re.compile("[\ud800-\udfff]")
_encode_basestring: Callable[[str], str] = json.encoder.encode_basestring


def _string(value: str) -> str:
    # json.dumps with ensure_ascii=False escapes exactly what RFC 8785 escapes (", \\, control characters,
    # with the short forms \\b \\f \\n \\r \\t and lowercase \\u00xx otherwise); for a str it returns
    # encode_basestring's result, called here without building an encoder per string (a write encodes ~150).
    if _SURROGATE.search(value):
        raise InvalidInput("text contains a lone surrogate code point; send valid Unicode")
    return _encode_basestring(value)


def _number(value: float) -> str:
    # ECMAScript Number.prototype.toString, as RFC 8785 §3.2.2.3 requires.
    if math.isnan(value) or math.isinf(value):
        raise InvalidInput("NaN and Infinity are not allowed in canonical JSON")
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text and "E" not in text:
        return text
    mantissa, exp_text = text.lower().split("e")
    exponent = int(exp_text)
    digits = mantissa.replace(".", "").lstrip("-")
    sign = "-" if value < 0 else ""
    point = (mantissa.lstrip("-").find(".") if "." in mantissa else len(mantissa.lstrip("-"))) + exponent
    digits = digits.rstrip("0") or "0"
    if 0 < point <= 21:
        if len(digits) <= point:
            return sign + digits + "0" * (point - len(digits))
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exp = point - 1
    body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{body}e{'+' if exp > 0 else '-'}{abs(exp)}"


def _encode(value: object, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_number(value))
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, Mapping):
        out.append("{")
        items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be"))
        for i, (key, item) in enumerate(items):
            if not isinstance(key, str):
                raise InvalidInput(f"canonical JSON keys must be strings, got {shown(key)}")
            if i:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _encode(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise InvalidInput(f"value of type {type(value).__name__} cannot be canonical JSON")


def canonical_json(value: object) -> str:
    """Serialize ``value`` as RFC 8785 canonical JSON text."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out)


def canonical_json_floatless(value: object) -> str:
    """RFC 8785 canonical JSON for values with no floats and only ASCII keys (entry content), at C speed.

    For such values JCS equals ``json.dumps`` with sorted keys, compact separators and no ASCII escaping;
    a property test pins the two encoders to the same bytes.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)


# The JSON string canonical_json_floatless writes for a str (json's C encoder: RFC 8785's escapes, no ASCII escaping).
json_string: Callable[[str], str] = json.encoder.encode_basestring


def canonical_bytes(value: object) -> bytes:
    """UTF-8 bytes of the canonical JSON of ``value``."""
    return canonical_json(value).encode("utf-8")


def tagged_sha256(tag: str, payload: bytes) -> str:
    """SHA-256 of ``tag + NUL + payload`` as 64 lowercase hex characters."""
    return hashlib.sha256(tag.encode("ascii") + b"\0" + payload).hexdigest()


ENTRY_CONTENT_TAG = "memstone:entry-content:v1"
REVISION_CONTENT_TAG = "memstone:memory-content:v1"
MANIFEST_NODE_TAG = "memstone:manifest-node:v1"
SOURCE_CONTENT_TAG = "memstone:source-content:v1"
EMBEDDING_CONTENT_TAG = "memstone:embedding-content:v1"
