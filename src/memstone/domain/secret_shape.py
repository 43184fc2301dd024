"""Secrets told by the value's shape and its place, with no slot, no credential word and no introduction (issue 16).

The other finders need something beside the value: a format's prefix, a name that says what it is, a credential
word in its clause, "here it is". A developer also pastes a value in passing: "usa surfops y u8jzPde0IgxL, lo
cambio el lunes", "ops / tPKR0CsTy4Qw で入れます", a key split over two lines, a token in a URL query under a
one-letter name, a header of the team's own naming. What is left to read is the value itself and where it stands:

- **a generated value standing alone**: a run of 10 to 64 letters and digits that mixes upper case, lower case
  and digits in many runs and is not made of words (:func:`memstone.domain.secret_clause.generated`), standing as
  a word of its own in a sentence or on its own line (not part of a name, a path, a URL, an identifier or an
  expression, on a line that is not code), not in a clause about a shape ("tokens begin with", "e.g."), and not
  base64 that decodes to text or to a file's header (test data) nor a placeholder;
- **a generated value in a URL query**, whatever the parameter's name, unless the name says it is an id, a
  version, a digest or a page.

A third finder, four or more lower-case words joined by hyphens after a credential word (``copper-walrus-meadow-
tundra``), was measured and removed (stop 35): on unseen data it refused a durable rule for a kebab-case package
name after "auth" (``angular-auth-oidc-client``) and caught no secret; kebab-case names are too common in code.

Not secrets (tested): commit SHAs, hex digests, UUIDs, ULIDs, ids with a prefix (``cus_…``), base64 test data,
versions, ports, CSS colours, SKUs and invoice numbers, file names, code names (``getUser2Id``), kebab-case names.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .secret_clause import generated, password_shaped, shape_talk
from .secret_formats import file_magic, text_base64

__all__ = ["SHAPE_KINDS", "shape_secrets"]

SHAPE_KINDS = ("generated_value", "query_value")
Span = tuple[str, int, int]
Check = Callable[[str], bool]


# A URL query parameter, and the names that say its value is an id, a version, a digest or a page.
_QUERY = re.compile(r"[?&;](?P<name>[A-Za-z][\w.\-]{0,30})=(?P<value>[A-Za-z0-9_\-.~]{16,256})(?![A-Za-z0-9_\-.~%])")
_NOT_SECRET_PARAM = re.compile(
    r"(?i)(?:^|[_\-.])(?:ids?|v|ver|version|rev|ref|sha\d*|hash|digest|commit|etag|page|cursor|offset|q|query"
    r"|search|lang|locale|utm\w*|state|nonce)$|ids?$"
)
_NAME_PART = re.compile(r"[A-Z][a-z]+|(?<![A-Za-z])[a-z]+")
_HEX_LITERAL = re.compile(r"0x[0-9A-Fa-f]+")
# A line of code: a call or a subscript, an assignment or comparison, a union type, an import or a definition, an
# element of a list or a dict literal ('Base64UrlStr',).
_CODE_LINE = re.compile(
    r"\w[(\[]|\s[=|]=?\s|^\s*(?:import|from|class|def|return|@)\b|\bimport\b|[{}]|^\s*(['\"])[^'\"]*\1\s*[,:]"
)


def _name_of_words(value: str) -> bool:
    """A name made of words and a number (IPv6Address, PKCS7PaddingContext, ChaCha20Poly1305): half or more of its
    letters are in parts that start a word (a capital or the start) and hold a vowel after their first letter."""
    parts = [p for p in _NAME_PART.findall(value) if len(p) >= 3 and any(c in "aeiouy" for c in p[1:])]
    return sum(map(len, parts)) >= 0.5 * sum(c.isalpha() for c in value)


def _lone_value(value: str, is_placeholder: Check) -> bool:
    has_classes = (
        any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)
    )
    if not has_classes or _HEX_LITERAL.fullmatch(value) or _name_of_words(value):
        return False
    return generated(value) and not text_base64(value) and not file_magic(value) and not is_placeholder(value)


def _line_of(text: str, start: int, end: int) -> str:
    return text[text.rfind("\n", 0, start) + 1 : len(text) if (e := text.find("\n", end)) < 0 else e]


# A word of its own: not glued to a name, a path, a URL, an option, an assignment or an expression on either side;
# the lookaheads ask for a digit, a capital and a small letter in the run before any Python runs on it.
_STANDALONE = re.compile(
    r"(?<![A-Za-z0-9_\-./:=@#$%&+\\~*^|<\[{?!])(?=[A-Za-z]*\d)(?=[a-z\d]*[A-Z])(?=[A-Z\d]*[a-z])([A-Za-z0-9]{10,64})"
    r"(?![A-Za-z0-9_\-/@#$%&+=\\~*^|>\[({])(?![.:,][A-Za-z0-9_])"
)


def generated_values(text: str, is_placeholder: Check) -> list[Span]:
    """A generated value standing alone on a line that is not code, not in a clause about a value's shape (see the
    module doc). Each line is read for code once, however many candidates it holds: a long line of many values
    costs its length, not its length times their number."""
    out: list[Span] = []
    code_lines: dict[int, bool] = {}  # a line's start -> whether it is a line of code
    for m in _STANDALONE.finditer(text):
        if not _lone_value(m[1], is_placeholder):
            continue
        line_start = text.rfind("\n", 0, m.start(1)) + 1
        if line_start not in code_lines:
            code_lines[line_start] = _CODE_LINE.search(_line_of(text, m.start(1), m.end(1))) is not None
        if not code_lines[line_start] and not shape_talk(text, m.start(1)):
            out.append(("generated_value", m.start(1), m.end(1)))
    return out


def query_values(text: str, is_placeholder: Check) -> list[Span]:
    """A generated value of a URL query parameter whose name does not say it is an id, a version or a page."""
    out: list[Span] = []
    if "=" not in text:
        return out
    for m in _QUERY.finditer(text):
        if not _NOT_SECRET_PARAM.search(m.group("name")) and _lone_value(m["value"], is_placeholder):
            out.append(("query_value", m.start("value"), m.end("value")))
    return out


# A password alone on its line, bare or in quotes or backticks ("here:\nKQHul62t1*65"): capitals, small letters, a
# digit and a symbol, a mix no identifier, path, number or word has.
_LONE_LINE = re.compile(r"(?m)^[ \t]*[`'\"]?([A-Za-z0-9!#$%&*@^~?]{8,64})[`'\"]?[ \t]*$")


def lone_passwords(text: str, is_placeholder: Check) -> list[Span]:
    """A password-shaped value (:func:`~memstone.domain.secret_clause.password_shaped`) with both cases, on a line
    of its own."""
    if "\n" not in text:
        return []
    return [
        ("generated_value", m.start(1), m.end(1))
        for m in _LONE_LINE.finditer(text)
        if any(c.isupper() for c in m[1]) and any(c.islower() for c in m[1]) and password_shaped(m[1])
        if not is_placeholder(m[1])
    ]


def shape_secrets(text: str, is_placeholder: Check) -> list[Span]:
    """Every finder of this module."""
    return [
        *generated_values(text, is_placeholder),
        *query_values(text, is_placeholder),
        *lone_passwords(text, is_placeholder),
    ]
