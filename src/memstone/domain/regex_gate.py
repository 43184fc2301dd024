"""Required literals of a regular expression: a cheap gate derived from the pattern it guards (issue 13, 16).

A finder that runs a costly pattern over every text first asks whether the text can hold a match at all: "does it
contain one of these words?". When those words are a second, hand-kept copy of the pattern's, a word later added to
the pattern but not to the list silently lets that secret through. Here the words are read off the pattern itself,
from the tree ``re``'s own parser makes of it, so a gate cannot drift from its pattern.

:func:`required_literals` gives a set of strings one of which every match of the pattern contains, or None (no
gate). It is sound by construction and deliberately small:

- a literal is itself; a character class of at most ``_MAX_CLASS`` characters is the set of them;
- a sequence is the best of its factors: a run of adjacent parts with finite sets (their concatenations), or the
  requirement of one part; the best factor is the one whose shortest string is longest (then the fewest strings);
- an alternation is the union of its branches' requirements (no gate if one branch has none);
- a repeat of at least one keeps its inner requirement; an optional part, a lookaround, a backreference, a
  category (``\\w``, ``\\d``), a negated or large class, or anything unknown has none, and breaks a run (except
  zero-width assertions, which consume nothing and so keep their neighbours adjacent).

A gate is **exact** (its strings are looked for in the string the pattern runs on) unless the pattern folds case:
then it is **folded**, its strings being what the matched characters show in :func:`fold_ascii` of the subject's
``lower()``; a character whose case variants may show as more than one character there (``σ``/``ς``) breaks a run.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["Gate", "fold_ascii", "minimal", "required_factors", "required_literals"]

_parser: Any = importlib.import_module("re._parser")
_const: Any = importlib.import_module("re._constants")
_EXTRA_CASES: dict[int, tuple[int, ...]] = importlib.import_module("re._compiler")._EXTRA_CASES

_MAX_CLASS = 12  # most characters a class stands for in a gate
_MAX_SET = 64  # most strings a factor keeps
_MAX_COPIES = 4  # a bounded repeat's finite set is kept up to this many copies
_MAX_HEAD = 32  # a repeat of at least n copies requires its first min(n, 32) copies
_GATE_CHARS = 8  # a gate looks for the first 8 characters of a literal: as selective, and fewer strings to try
_FOLD_UNSURE = frozenset("\u03c3\u03a3\u03c2\u0307")  # σ Σ ς: lower() depends on the next letter; a combining dot

Strings = frozenset[str]
_Result = tuple[Strings | None, Strings | None]  # (every string a match may consume, a factor every match holds)


def fold_ascii(lower: str) -> str:
    """``lower`` (a text's lower()) with every character a ``(?i)`` pattern matches to an ASCII letter made that
    letter, so a literal test on it never misses a case-insensitive match: ``ſ`` (long s) and ``ı`` (dotless i)
    match ``s`` and ``i`` in re's case folding but stay themselves in lower(); the Kelvin sign lowers to k; İ lowers
    to i and a combining dot, made i here."""
    if lower.isascii():
        return lower
    return lower.replace("ſ", "s").replace("ı", "i").replace("i\u0307", "i")


def minimal(strings: Iterable[str]) -> Strings:
    """The strings none of the others is a substring of: a text holds one of ``strings`` iff it holds one of these."""
    kept: list[str] = []
    for s in sorted(set(strings), key=len):
        if not any(k in s for k in kept):
            kept.append(s)
    return frozenset(kept)


@functools.cache
def _key(ch: str, ignorecase: bool, folded: bool) -> str | None:
    """What a character matched against ``ch`` shows in the gate's subject, or None when it may show several."""
    if not folded:
        cased = ch.lower() != ch or ch.upper() != ch or ord(ch.lower()) in _EXTRA_CASES
        return None if ignorecase and cased else ch
    if ch in _FOLD_UNSURE:
        return None
    low = ch.lower()
    variants = {low}
    if ignorecase and len(low) == 1:
        variants |= {ch, ch.upper(), *map(chr, _EXTRA_CASES.get(ord(low), ()))}
    keys = {fold_ascii(v.lower()) for v in variants}
    if len(keys) != 1 or any(v in _FOLD_UNSURE for v in variants):
        return None
    key = keys.pop()
    return key if len(key) == 1 else None


def _product(a: Strings, b: Strings) -> Strings | None:
    if len(a) * len(b) > _MAX_SET:
        return None
    return frozenset(x + y for x in a for y in b)


def _better(a: Strings | None, b: Strings | None) -> Strings | None:
    """The more selective of two factors (None: no factor); a set holding "" is no factor."""
    if b is None or "" in b:
        return a
    if a is None:
        return b
    return b if (min(map(len, b)), -len(b)) > (min(map(len, a)), -len(a)) else a


def _sequence(
    items: Iterable[tuple[Any, Any]], flags: int, folded: bool, found: list[Strings] | None = None
) -> _Result:
    """(every string the sequence may consume, its best factor); each factor considered is added to ``found``."""
    best: Strings | None = None
    run: Strings = frozenset({""})
    whole: Strings | None = frozenset({""})

    def consider(factor: Strings | None) -> None:
        nonlocal best
        best = _better(best, factor)
        if found is not None and factor is not None and "" not in factor:
            found.append(minimal(factor))

    for item in _joined_literals(items, flags, folded):
        exact, factor = (frozenset({item[1]}),) * 2 if item[0] is None else _node(item, flags, folded)
        consider(factor)
        whole = _product(whole, exact) if whole is not None and exact is not None else None
        if exact is None:
            consider(run)
            run = frozenset({""})
            continue
        joined = _product(run, exact)
        if joined is None:  # too many strings: close the run, start a new one here
            consider(run)
            joined = exact
        run = joined
    consider(run)
    return whole, best


def _joined_literals(items: Iterable[tuple[Any, Any]], flags: int, folded: bool) -> Iterable[tuple[Any, Any]]:
    """The items, each run of literals with known keys made one ``(None, string)`` item (fewer products)."""
    ignorecase, text = bool(flags & re.IGNORECASE), ""
    for op, av in items:
        key = _key(chr(av), ignorecase, folded) if op is _const.LITERAL else None
        if key is not None:
            text += key
            continue
        if text:
            yield None, text
            text = ""
        yield op, av
    if text:
        yield None, text


def _node(item: tuple[Any, Any], flags: int, folded: bool) -> _Result:
    op, av = item
    ignorecase = bool(flags & re.IGNORECASE)
    if op is _const.LITERAL:
        key = _key(chr(av), ignorecase, folded)
        one = None if key is None else frozenset({key})
        return one, one
    if op is _const.IN:
        chars = _class_chars(av, ignorecase, folded)
        return chars, chars
    if op is _const.BRANCH:
        branches = [_sequence(b, flags, folded) for b in av[1]]
        exact = None if any(e is None for e, _ in branches) else frozenset().union(*(e for e, _ in branches if e))
        factors = [f for _, f in branches]
        return exact, (None if any(f is None for f in factors) else frozenset().union(*(f for f in factors if f)))
    if op is _const.SUBPATTERN:
        _group, add, remove, sub = av
        return _sequence(sub, (flags | add) & ~remove, folded)
    if op is _const.ATOMIC_GROUP:
        return _sequence(av, flags, folded)
    if op in (_const.MAX_REPEAT, _const.MIN_REPEAT, _const.POSSESSIVE_REPEAT):
        low, high, sub = av
        exact, factor = _sequence(sub, flags, folded)
        if low < 1:
            return _repeated(exact, low, high), None
        head = _repeated(exact, min(low, _MAX_HEAD), min(low, _MAX_HEAD)) if exact is not None else None
        return _repeated(exact, low, high), _better(factor, head)  # the first copies are contiguous
    if op in (_const.AT, _const.ASSERT, _const.ASSERT_NOT):
        return frozenset({""}), None  # zero-width: consumes nothing, requires nothing here
    return None, None  # ANY, NOT_LITERAL, CATEGORY, GROUPREF, GROUPREF_EXISTS, …: no requirement


def _repeated(exact: Strings | None, low: int, high: int) -> Strings | None:
    if exact is None or high > max(low, _MAX_COPIES):
        return None
    out: set[str] = set()
    power: Strings | None = frozenset({""})
    for n in range(high + 1):
        if power is None:
            return None
        if n >= low:
            out |= power
        power = _product(power, exact)
    return frozenset(out) if len(out) <= _MAX_SET else None


def _class_chars(items: list[tuple[Any, Any]], ignorecase: bool, folded: bool) -> Strings | None:
    chars: list[str] = []
    for op, av in items:
        if op is _const.LITERAL:
            chars.append(chr(av))
        elif op is _const.RANGE and av[1] - av[0] < _MAX_CLASS:
            chars.extend(map(chr, range(av[0], av[1] + 1)))
        else:
            return None  # NEGATE, CATEGORY, a large range
    keys = [_key(c, ignorecase, folded) for c in chars]
    if any(k is None for k in keys) or len(set(keys)) > _MAX_CLASS:
        return None
    return frozenset(k for k in keys if k is not None)


def _folds(tree: Any) -> bool:
    """Whether any part of a parsed pattern matches ignoring case."""
    if tree.state.flags & re.IGNORECASE:
        return True
    return any(op is _const.SUBPATTERN and av[1] & re.IGNORECASE for op, av in _walk(tree.data))


def _walk(items: Iterable[tuple[Any, Any]]) -> Iterable[tuple[Any, Any]]:
    for op, av in items:
        yield op, av
        if op is _const.BRANCH:
            for branch in av[1]:
                yield from _walk(branch)
        elif op is _const.SUBPATTERN:
            yield from _walk(av[3])
        elif op in (_const.MAX_REPEAT, _const.MIN_REPEAT, _const.POSSESSIVE_REPEAT):
            yield from _walk(av[2])
        elif op in (_const.ASSERT, _const.ASSERT_NOT):
            yield from _walk(av[1])
        elif op is _const.ATOMIC_GROUP:
            yield from _walk(av)


@functools.lru_cache(maxsize=8)
def _tree(source: str, flags: int) -> Any:
    return _parser.parse(source, flags)


@functools.cache
def _pattern_folds(source: str, flags: int) -> bool:
    return _folds(_tree(source, flags))


@functools.cache
def _analysed(source: str, flags: int, folded: bool | None) -> tuple[bool, Strings | None, tuple[Strings, ...]]:
    """(folded, the best factor, every factor of the top-level sequence) of a pattern, parsed once."""
    tree = _tree(source, flags)
    if folded is None:
        folded = _pattern_folds(source, flags)
    found: list[Strings] = []
    best = _sequence(tree.data, tree.state.flags, folded, found)[1]
    return folded, (None if best is None else minimal(best)), tuple(found)


def required_factors(pattern: re.Pattern[str], *, folded: bool | None = None) -> list[Strings]:
    """Every factor of the pattern's top-level sequence: each a set one of which every match contains."""
    return list(_analysed(pattern.pattern, pattern.flags, folded)[2])


def required_literals(pattern: re.Pattern[str], *, folded: bool | None = None) -> Strings | None:
    """Strings one of which every match of ``pattern`` contains, or None; folded (see the module doc) when the
    pattern folds case, unless ``folded`` says otherwise (a folded gate of a case-sensitive pattern is also sound)."""
    return _analysed(pattern.pattern, pattern.flags, folded)[1]


class Gate:
    """A cheap necessary condition for a match of some patterns: one of ``literals`` occurs in the subject.

    ``literals`` None: no gate (every text is admitted). An exact gate is asked about the string the patterns run
    on; a folded one about the text's ``lower()`` (it folds ``ſ``, ``ı``, ``i̇`` itself). A gate is derived on its
    first use, not when its module loads: a process that never scans (a hook that only reads) pays nothing."""

    def __init__(self, derive: Callable[[], tuple[tuple[str, ...] | None, bool]]) -> None:
        self._derive = derive

    @functools.cached_property
    def _value(self) -> tuple[tuple[str, ...] | None, bool]:
        return self._derive()

    @property
    def literals(self) -> tuple[str, ...] | None:
        return self._value[0]

    @property
    def folded(self) -> bool:
        return self._value[1]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Gate) and self._value == other._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"Gate(literals={self.literals!r}, folded={self.folded!r})"

    @classmethod
    def of(cls, *patterns: re.Pattern[str], folded: bool | None = None) -> Gate:
        """The gate of a finder that runs all of ``patterns`` (the union of their literals)."""
        return cls(functools.partial(_derive, patterns, folded))

    @classmethod
    def of_words(cls, words: Iterable[str], *, folded: bool) -> Gate:
        """The gate of a finder that keeps only a match holding one of ``words``."""
        literals = tuple(sorted(minimal(w[:_GATE_CHARS] for w in words)))
        return cls(lambda: (literals, folded))

    def admits(self, subject: str) -> bool:
        """Whether ``subject`` may hold a match (exact gate: the patterns' subject; folded: the text's lower())."""
        if self.literals is None:
            return True
        if self.folded:
            subject = fold_ascii(subject)
        return any(map(subject.__contains__, self.literals))  # C calls, no generator frame: ~200 a write


def _derive(patterns: tuple[re.Pattern[str], ...], folded: bool | None) -> tuple[tuple[str, ...] | None, bool]:
    """(literals, folded) of :meth:`Gate.of`."""
    if folded is None:
        folded = any(_pattern_folds(p.pattern, p.flags) for p in patterns)
    sets = [required_literals(p, folded=folded) for p in patterns]
    if any(s is None for s in sets):
        return None, folded
    chosen = [s for s in sets if s is not None]
    # A factor of one pattern that the other patterns' strings already cover adds none of its own.
    for i, p in enumerate(patterns if len(patterns) > 1 else ()):
        others = [x for j, s in enumerate(chosen) if j != i for x in s]
        for factor in required_factors(p, folded=folded):
            if all(any(o in x for o in others) for x in factor):
                chosen[i] = factor
                break
    return tuple(sorted(minimal(x[:_GATE_CHARS] for s in chosen for x in s))), folded
