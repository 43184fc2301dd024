"""Hypothesis strategies for the inputs of memstone's verbs: valid values mixed with hostile ones.

Every strategy draws sometimes a value the verb accepts (so the success paths run and the store grows), and
sometimes a hostile one: wrong types, control characters, lone surrogates, oversize strings, huge integers,
deep nesting, unknown and malformed ids. An id of something the store holds is drawn as :class:`Known` (a
placeholder) and resolved by the fixture's world at call time, since the store exists only then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import strategies as st

SCOPES = ("memstone://orgs/fuzz/projects/web", "memstone://orgs/fuzz", "memstone://users/fuzzer")
KINDS = ("fact", "decision", "convention", "constraint", "preference", "correction", "lesson")
WORDS = ("deploy", "uv", "retry", "cache", "schema", "token", "release", "backoff", "note", "ünïcode", "the", "日本")
HUGE_INTS = (2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**4300)  # 10**4300: past int->str's digit limit


class Deep(list[Any]):
    """A list nested ``depth`` deep, with a short repr (hypothesis prints failing examples)."""

    def __init__(self, depth: int) -> None:
        value: list[Any] = []
        for _ in range(depth - 1):
            value = [value]
        super().__init__([value])
        self.depth = depth

    def __repr__(self) -> str:
        return f"Deep({self.depth})"


@dataclass(frozen=True)
class Known:
    """Something the store holds, by index: an entry id, a version id (``ver_…``), ``ent_…@N``, a memory id, the
    head Revision of a Memory, or a stale reference to it (its revision 1)."""

    what: Literal["entry", "version", "entry@", "memory", "head", "stale"]
    index: int


class Opaque:
    """An object no front end knows."""

    def __repr__(self) -> str:
        return "Opaque()"


def kept(value: Any) -> Any:
    return value


def one_of(*options: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``st.one_of`` as one branch: hypothesis flattens nested one_of into equally likely branches, which would
    let a wide hostile pool crowd out the valid values beside it."""
    return st.one_of(*options).map(kept)


JUNK: st.SearchStrategy[Any] = one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(HUGE_INTS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=8),
    st.lists(st.integers(-2, 2), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-2, 2), max_size=2),
    st.sampled_from([Deep(3000), {"a": Deep(50)}]),
    st.builds(Opaque),
)

sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(lambda w: " ".join(w) + ".")
odd_char = st.one_of(
    st.characters(max_codepoint=0x1F),  # control characters, NUL included
    st.sampled_from(["\ud800", "\udfff", "\udc80", "\u202e", "\ufeff", "\u2028", "\x7f"]),  # lone surrogates…
)


def hostile_text(*, junk: bool = True) -> st.SearchStrategy[Any]:
    """A text field's value: words, any unicode, odd characters spliced in, the edges of the size limits, things
    that look like secrets, and (``junk``) values of the wrong type."""
    options = [
        sentence,
        sentence,
        st.text(max_size=60),
        st.tuples(sentence, odd_char, sentence).map("".join),
        st.sampled_from(["", " ", "\n", "\x00", "a\x00b", "retry\n", "x" * 8192, "x" * 8193, "é" * 4097]),
        st.sampled_from(
            ["x" * 300_000, "ghp_" + "A" * 36, "-----BEGIN RSA PRIVATE KEY-----\nMIIEow", "AKIA" + "Q" * 16]
        ),
    ]
    if junk:
        options.append(JUNK)
    return one_of(*options)


MALFORMED_IDS = (
    "ent_",
    "ent_x\n",
    "ent_01J00000000000000000000000",  # well formed, unknown
    "ent_01J00000000000000000000000\n",
    "ver_01J00000000000000000000000",
    "mem_01J00000000000000000000000",
    "ent_" + "Z" * 26,
    "ent_" + "A" * 10_000,
    "../../etc/passwd",
    "ent_\ud800",
    "ent_01J0000000000000000000000@99999999999999999999",
    "",
)


def entry_ids(*, junk: bool = True) -> st.SearchStrategy[Any]:
    known = st.builds(Known, st.sampled_from(["entry", "entry", "version", "entry@"]), st.integers(0, 10**6))
    options = [known, known, st.sampled_from(MALFORMED_IDS), hostile_text(junk=False)]
    return one_of(*options, JUNK) if junk else one_of(*options)


def memories(*, junk: bool = True) -> st.SearchStrategy[Any]:
    """A Memory argument: a head, a stale ref, a memory id, a scope, or something else."""
    known = st.builds(Known, st.sampled_from(["head", "head", "stale", "memory"]), st.integers(0, 10**6))
    options = [known, known, st.sampled_from(SCOPES), st.sampled_from(MALFORMED_IDS)]
    return one_of(*options, JUNK) if junk else one_of(*options)


def scopes(*, junk: bool = True) -> st.SearchStrategy[Any]:
    hostile = st.sampled_from(
        ["memstone://orgs/", "memstone://orgs/fuzz/projects/web\n", "orgs/fuzz", "memstone://users/anonymous",
         "http://x", "memstone://orgs/" + "a" * 300, "memstone://orgs/fuzz/../canary", "memstone://orgs/\ud800", ""]
    )  # fmt: skip
    options = [st.sampled_from(SCOPES), st.sampled_from(SCOPES), hostile, hostile_text(junk=False)]
    return one_of(*options, JUNK) if junk else one_of(*options)


def kinds(*, junk: bool = True) -> st.SearchStrategy[Any]:
    odd = st.sampled_from(["Fact", "LESSON", " fact ", "x" * 65, "", "a b", "fact\n", "relates-to"])
    return one_of(st.sampled_from(KINDS), st.sampled_from(KINDS), odd, hostile_text(junk=junk))


def tags(*, junk: bool = True) -> st.SearchStrategy[Any]:
    one = st.one_of(st.sampled_from(["ops", "db", "ci", "Ops", "a b", "x" * 80, "", "t\n"]), hostile_text(junk=junk))
    options = [st.lists(one, max_size=5), st.just(["t"] * 300), st.just([f"t{n}" for n in range(300)])]
    return one_of(*options, JUNK) if junk else one_of(*options)


def slugs() -> st.SearchStrategy[Any]:
    odd = st.sampled_from(["retry", "retry\n", "Retry", "a-b", "-a", "a--b", "a" * 65, "", "ré"])
    return one_of(st.none(), st.none(), odd, hostile_text())


def numbers() -> st.SearchStrategy[Any]:
    """A revision or version number, or something in its place."""
    return one_of(
        st.integers(-2, 6), st.integers(-2, 6), st.sampled_from(HUGE_INTS), st.sampled_from(["1", "2", "", "ver_x"]),
        st.booleans(), st.none(), st.floats(allow_nan=True),
    )  # fmt: skip


def flags() -> st.SearchStrategy[Any]:
    return one_of(st.booleans(), st.booleans(), st.none(), JUNK)


def relation_kinds() -> st.SearchStrategy[Any]:
    odd = st.sampled_from(["Bad Kind", "relates-to\n", "x" * 65, "", "-a"])
    return one_of(st.sampled_from(["supersedes", "clarifies", "relates-to"]), odd, hostile_text())


# ---------------------------------------------------------------------------------------------- valid values
# A call is drawn in one of three regimes, so that success paths run as often as refusals: every argument valid,
# exactly one hostile (each validation rule on its own), or each argument either (the mix that finds surprises).
Pair = tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]
REGIMES = ("valid", "one-hostile", "mixed")
valid_text = sentence
valid_reason = st.one_of(st.none(), sentence)
valid_kind = st.sampled_from(KINDS)
valid_tags = st.lists(st.sampled_from(["ops", "db", "ci", "release"]), max_size=3)
valid_slug = st.one_of(st.none(), st.none(), st.sampled_from(["retry-policy", "deploy-steps"]))
valid_flag = st.booleans()
valid_entry = st.builds(Known, st.just("entry"), st.integers(0, 10**6))
valid_entry_ref = st.builds(Known, st.sampled_from(["entry", "entry", "version", "entry@"]), st.integers(0, 10**6))
valid_memory = st.builds(Known, st.sampled_from(["head", "memory"]), st.integers(0, 10**6))
valid_scope = st.sampled_from(SCOPES)
valid_number = st.integers(1, 4)
valid_relations = st.lists(
    st.tuples(st.sampled_from(["supersedes", "clarifies", "relates-to"]), valid_entry), max_size=1
)


@st.composite
def arguments(draw: st.DrawFn, required: dict[str, Pair], optional: dict[str, Pair]) -> dict[str, Any]:
    """Keyword arguments: every ``required`` name and some ``optional`` ones, each (valid, hostile) pair drawn
    in one of the :data:`REGIMES`."""
    regime = draw(st.sampled_from(REGIMES))
    spec = {**required, **optional}
    names = [*required, *(n for n in sorted(optional) if draw(st.booleans()))]
    bad = draw(st.sampled_from(names)) if names and regime == "one-hostile" else None
    out: dict[str, Any] = {}
    for name in names:
        good, hostile = spec[name]
        if regime == "mixed":
            out[name] = draw(st.one_of(good, hostile))
        else:
            out[name] = draw(hostile if name == bad else good)
    return out


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], odds: int = 4) -> st.SearchStrategy[Any]:
    """``good`` ``odds`` times out of ``odds + 1``, else ``bad`` (``st.one_of`` weighs its branches by itself)."""
    return st.integers(0, odds).flatmap(lambda n: bad if n == odds else good)
