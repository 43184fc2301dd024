"""Gates read off the patterns they guard (issue 13, 16): the analysis, and every pattern of the secret scan.

The soundness check generates, from the same parse tree ``re`` makes of a pattern, random strings meant to match
it (case variants and the letters ``(?i)`` folds to ASCII included), keeps those ``pattern.search`` really
matches, and asserts each passes the pattern's gate.
"""

from __future__ import annotations

import importlib
import importlib.util
import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from memstone.domain import (
    secret_clause,
    secret_context,
    secret_formats,
    secret_generic,
    secret_named,
    secret_shape,
    secrets,
)
from memstone.domain.regex_gate import Gate, minimal, required_factors, required_literals

_parser: Any = importlib.import_module("re._parser")
_const: Any = importlib.import_module("re._constants")
_EXTRA: dict[int, tuple[int, ...]] = importlib.import_module("re._compiler")._EXTRA_CASES

MODULES = (secrets, secret_formats, secret_generic, secret_context, secret_named, secret_clause, secret_shape)


# ------------------------------------------------------------------------------ the analysis
@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"password", {"password"}),
        (r"pass(?:word|wd)?s?", {"pass"}),
        (r"\bpin\b|code", {"pin", "code"}),
        (r"cl[ée]s?", {"clé", "cle"}),
        (r"[a-z]+=\d+", {"="}),  # a small factor when nothing longer is required
        (r"(?<![a-z])token(?=[:=])", {"token"}),  # lookarounds consume nothing: the literal stays whole
        (r"key|\w+", None),  # one branch requires nothing
        (r"(?:secret)?[A-Z]{4}", None),  # optional part, large class
        (r"x{0,3}y?", None),
        (r"(?:ab){2,}", {"abab"}),  # a repeat of at least n requires its first n copies
        (r"(?<![A-Z])A{20,22}[A-Z]+", {"A" * 20}),
        (r"(?:x[a-z]+y)+", {"x"}),  # a repeat of at least one keeps its inner requirement
        (r"(?:ab|cd){2}", {"abab", "abcd", "cdab", "cdcd"}),
        (r"[^a]bc", {"bc"}),
        (r"(a)\1zz", {"zz"}),
        (r"api[ _-]?key", {"api key", "api_key", "api-key", "apikey"}),
        (r"\d{4}", None),  # \d is a category (Unicode digits): no literal
    ],
)
def test_required_literals_of_case_sensitive_patterns(pattern: str, expected: set[str] | None) -> None:
    found = required_literals(re.compile(pattern))
    assert found == (None if expected is None else frozenset(expected))


def test_case_folding_gives_lowered_literals_and_refuses_unsure_letters() -> None:
    assert required_literals(re.compile(r"(?i)Secret|TOKEN")) == {"secret", "token"}
    assert required_literals(re.compile(r"(?i:Key)s?")) == {"key"}
    # An exact gate cannot hold a case-folded letter; a folded one lowers the case-sensitive parts too.
    assert required_literals(re.compile(r"(?i)key"), folded=False) is None
    assert required_literals(re.compile(r"AK|(?i:sk)")) == {"ak", "sk"}
    # σ shows as σ or ς in lower() depending on the next letter: no literal across it.
    assert required_literals(re.compile(r"(?i)ab\u03c3cde")) == {"cde"}


def test_sequence_prefers_the_longest_factor() -> None:
    assert required_literals(re.compile(r"\w+=\w*secret\w*")) == {"secret"}
    assert required_literals(re.compile(r"(?:door|gate)\s+takes\s+")) == {"takes"}


def test_minimal_keeps_the_strings_no_other_is_part_of() -> None:
    assert minimal(["pass", "password", "pw", "pwd", "key"]) == {"pass", "pw", "key"}


def test_a_folded_gate_admits_the_letters_ignorecase_folds_to_ascii() -> None:
    gate = Gate.of(re.compile(r"(?i)user|kind"))
    for text in ("Uſer: admin", "USER", "KİND", "\u212aind"):  # ſ, İ, the Kelvin sign
        assert re.search(r"(?i)user|kind", text)
        assert gate.admits(text.lower()), text
    assert not gate.admits("nothing here")


# ------------------------------------------------------------------------------ a generator of matching strings
_WORD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_éüßſıİ\u212a密码ー"
_SPACE = " \t\n"
_OTHER = "!#$%&*+-./:;<=>?@[]^{}|~'\"`,()"
_POOL = _WORD + _SPACE + _OTHER


def _variant(ch: str, flags: int, rng: random.Random) -> str:
    if not flags & re.IGNORECASE:
        return ch
    low = ch.lower()
    options = [ch, low, ch.upper(), *map(chr, _EXTRA.get(ord(low), ()))] if len(low) == 1 else [ch]
    if low == "i":
        options.append("İ")
    if low == "k":
        options.append("\u212a")
    return rng.choice([o for o in options if len(o) == 1])


def _category(cat: Any, rng: random.Random) -> str:
    name = str(cat)
    if "NOT" in name:
        return rng.choice(_OTHER + (_WORD if "DIGIT" in name else "") + (_SPACE if "SPACE" not in name else ""))
    if "DIGIT" in name:
        return rng.choice("0123456789٣")
    if "SPACE" in name:
        return rng.choice(_SPACE)
    return rng.choice(_WORD)


def _class(items: list[tuple[Any, Any]], flags: int, rng: random.Random) -> str:
    if items and items[0][0] is _const.NEGATE:
        return rng.choice(_POOL)  # usually outside the class; pattern.search decides
    op, av = rng.choice(items)
    if op is _const.LITERAL:
        return _variant(chr(av), flags, rng)
    if op is _const.RANGE:
        return _variant(chr(rng.randint(av[0], av[1])), flags, rng)
    if op is _const.CATEGORY:
        return _category(av, rng)
    return rng.choice(_POOL)


def _gen(items: Any, flags: int, rng: random.Random, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, av in items:
        if op is _const.LITERAL:
            out.append(_variant(chr(av), flags, rng))
        elif op is _const.NOT_LITERAL or op is _const.ANY:
            out.append(rng.choice(_POOL))
        elif op is _const.IN:
            out.append(_class(av, flags, rng))
        elif op is _const.CATEGORY:
            out.append(_category(av, rng))
        elif op is _const.BRANCH:
            out.append(_gen(rng.choice(av[1]), flags, rng, groups))
        elif op is _const.SUBPATTERN:
            group, add, remove, sub = av
            text = _gen(sub, (flags | add) & ~remove, rng, groups)
            if group is not None:
                groups[group] = text
            out.append(text)
        elif op is _const.ATOMIC_GROUP:
            out.append(_gen(av, flags, rng, groups))
        elif op in (_const.MAX_REPEAT, _const.MIN_REPEAT, _const.POSSESSIVE_REPEAT):
            low, high, sub = av
            n = rng.randint(low, min(high, low + 3))
            out.extend(_gen(sub, flags, rng, groups) for _ in range(n))
        elif op is _const.GROUPREF:
            out.append(groups.get(av, ""))
        # AT, ASSERT, ASSERT_NOT, GROUPREF_EXISTS: nothing (pattern.search decides)
    return "".join(out)


def matching_strings(pattern: re.Pattern[str], n: int, seed: int = 0) -> list[str]:
    """Up to ``n`` texts that ``pattern`` finds a match in, generated from its parse tree (some in context)."""
    tree = _parser.parse(pattern.pattern, pattern.flags)
    rng = random.Random(seed)
    out = []
    for i in range(n):
        s = _gen(tree.data, tree.state.flags, rng, {})
        text = s if i % 2 else f"note: {s} end"
        if pattern.search(text):
            out.append(text)
    return out


def scan_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """Every compiled pattern of the secret scan: module attributes, tuples of them, the format rules."""
    found: dict[str, re.Pattern[str]] = {}
    for module in MODULES:
        for name, value in vars(module).items():
            values = value if isinstance(value, tuple) else (value,)
            for i, v in enumerate(values):
                if isinstance(v, re.Pattern) and isinstance(v.pattern, str):
                    found[f"{module.__name__.rsplit('.', 1)[1]}.{name}[{i}]"] = v
                elif isinstance(v, secret_formats.CaseFree):
                    found[f"{module.__name__.rsplit('.', 1)[1]}.{name}[{i}]"] = v.pattern
    for rule in secret_formats.FORMAT_RULES:
        found[f"FORMAT_RULES.{rule.kind}:{rule.source[:30]}"] = rule.pattern
    return sorted(found.items())


def test_the_generator_makes_matching_strings() -> None:
    pattern = re.compile(r"(?i)(?<![a-z])pass(?:word|wd)?\s*[:=]\s*(?P<v>[A-Za-z0-9]{8,})")
    texts = matching_strings(pattern, 50)
    assert len(texts) >= 40
    assert any(not t.isascii() or ("PASS" in t.upper() and "pass" not in t) for t in texts)  # case variants appear


def test_every_pattern_of_the_scan_lets_each_generated_match_through_its_gate() -> None:
    patterns = scan_patterns()
    assert len(patterns) > 150
    gated = matched = 0
    for name, pattern in patterns:
        gate = Gate.of(pattern)
        if gate.literals is None:
            continue
        gated += 1
        texts = matching_strings(pattern, 60, seed=len(name))
        matched += bool(texts)
        for text in texts:
            assert gate.admits(text.lower() if gate.folded else text), (name, text, gate.literals)
    assert gated > 100 and matched >= 0.9 * gated  # the generator reaches nearly every gated pattern


# ------------------------------------------------------------------------------ the finders' gates
def test_each_finder_gate_is_its_patterns_gate() -> None:
    assert Gate.of(secret_clause._CUE) == secret_clause._CUE_GATE
    assert Gate.of(secret_clause._PASSWORD) == secret_clause._APP_GATE
    otp = (secret_clause._OTP_WORD, secret_clause._SENT_CODE, secret_clause._AUTHENTICATOR)
    assert Gate.of(*otp) == secret_clause._OTP_GATE
    assert Gate.of(secret_context._CODE_WORD) == secret_context._CODE_GATE
    assert Gate.of(secret_named._NAME, secret_named._NAME_CI) == secret_named._NAME_GATE
    assert Gate.of(secret_named._OPENS) == secret_named._OPENS_GATE
    assert Gate.of(secret_named._QUESTION) == secret_named._QUESTION_GATE
    assert Gate.of(secret_generic._SEED_WORD) == secret_generic._SEED_GATE
    assert Gate.of(secret_clause._INTRO) == secret_clause._INTRO_GATE
    slot_shapes = (secret_clause._ASSIGN, secret_clause._PAIR, secret_clause._BLOCK)
    assert Gate.of(*slot_shapes) == secret_clause._SLOT_SHAPE_GATE
    assert Gate.of(secret_generic._SUFFIX_NAME) == secret_generic._SUFFIX_GATE
    assert Gate.of(secret_generic._PAIR) == secret_generic._PAIR_GATE
    assert Gate.of(secret_generic._PAIR_CJK) == secret_generic._PAIR_CJK_GATE
    assert Gate.of(re.compile(secret_generic._PAIR_TAIL)) == secret_generic._TAIL_GATE
    assert Gate.of(secret_generic._PREFIXED) == secret_generic._PREFIXED_GATE
    assert Gate.of(secret_generic._PASSPHRASE) == secret_generic._PASSPHRASE_GATE
    for gate in (secret_clause._CUE_GATE, secret_named._NAME_GATE, secret_context._CODE_GATE, *_shape_gates()):
        assert gate.literals  # a derivation that gave up would silently turn a gate off


def _shape_gates() -> tuple[Gate, ...]:
    return (secret_clause._SLOT_SHAPE_GATE, secret_generic._TAIL_GATE, secret_generic._PREFIXED_GATE)


def test_the_hand_written_digit_gates_hold_for_their_patterns() -> None:
    """one_time_codes and generated_in_clause skip a text with no digit (\\d): every value pattern they take a code
    from holds one (no literal can say so: \\d is a category)."""
    for pattern in (secret_clause._OTP_VALUE, secret_clause._SIX_DIGITS):
        texts = matching_strings(pattern, 200)
        assert len(texts) > 50
        assert all(re.search(r"\d", t) for t in texts)
    assert secret_clause.one_time_codes("the verification code is four eight two one") == []


def test_each_format_rules_hand_kept_anchors_cover_its_pattern() -> None:
    """A rule's anchors are hand-kept: some factor derived from its pattern must have each of its strings hold an
    anchor (else a text matching the pattern but holding none of the anchors would skip the rule)."""
    checked = 0
    for rule in secret_formats.FORMAT_RULES:
        if not rule.anchors:
            continue
        factors = required_factors(rule.pattern, folded=True)
        if any(all(any(a in d for a in rule.anchors) for d in factor) for factor in factors):
            checked += 1
            continue
        for text in matching_strings(rule.pattern, 100):  # no factor to compare with: generated matches must pass
            assert any(a in secret_formats.fold_ascii(text.lower()) for a in rule.anchors), (rule.kind, text)
    assert checked > 50


def test_a_json_key_ending_in_credential_is_a_credential_slot() -> None:
    # _CREDENTIAL_PARTS holds "credential"; the hand-kept slot anchors did not, so this value was let through.
    text = '{"service_credential": "hk50Jf2EUZEH"}'
    assert [f.kind for f in secrets.find_secrets(text)] == ["credential_slot"]


def test_a_keystore_password_after_a_tab_is_refused() -> None:
    # The rule's hand-kept anchor was "pass " (a space), its pattern -storepass\s+: a tab let the password through.
    text = "keytool -list -keystore app.jks -storepass\tHk50Jf2EUZEH9x"
    assert "cli_password" in {f.kind for f in secrets.find_secrets(text)}


# One literal tested on the text itself (case-sensitive) before a pattern: each must be a factor of it.
SINGLE_LITERAL_CHECKS = [
    (secrets._ENV_LINE, ("=",)),
    (secrets._TWILIO_SID, ("AC",)),
    (secret_generic._QUERY, ("=",)),
    (secret_generic._AK_SK, ("AK", "SK")),
    (secret_context._SECRET_KIND, ("Secret",)),
    (secret_context._ENV_VALUE_LINE, ("=",)),
    (secret_context._NAME_VALUE, ("value",)),
    (secret_named._PIN_CAPS, ("PIN",)),
    (secret_named._AUTH_LITERAL, ("uth", ".login(", ".sign")),
]


@pytest.mark.parametrize(("pattern", "literals"), SINGLE_LITERAL_CHECKS)
def test_each_hand_literal_is_a_factor(pattern: re.Pattern[str], literals: tuple[str]) -> None:
    factors = required_factors(pattern, folded=False)
    assert any(all(any(a in d for a in literals) for d in f) for f in factors), (pattern.pattern, factors)


@pytest.mark.parametrize(
    ("finder", "text"),
    [
        (lambda t: secret_named.basic_credentials(t, lambda v: False), "Authorization: bAsIc ZGVwbG95Ym90OnNlY3JldDQy"),
        (lambda t: secret_generic.named_literals(t, bool, bool), '<ADD KEY="ClearTextPassword" VALUE="Xk29!mPq77zR"/>'),
    ],
)
def test_a_case_folded_name_passes_its_derived_gate(finder: Any, text: str) -> None:
    # The hand-kept checks were "asic" or "ASIC", and "value", on the text itself: neither holds for these.
    assert finder(text)


# ------------------------------------------------------------------------------ a word added to a pattern
def _module_with(module: Any, old: str, new: str, tmp: Path) -> Any:
    """``module`` loaded anew from its source with ``old`` replaced by ``new`` (no other edit)."""
    source = Path(module.__file__).read_text("utf-8")
    assert source.count(old) == 1
    name = f"{module.__name__}_edited"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    edited = importlib.util.module_from_spec(spec)
    edited.__package__ = "memstone.domain"
    edited.__file__ = module.__file__
    sys.modules[name] = edited
    try:
        exec(compile(source.replace(old, new), str(tmp / "edited.py"), "exec"), edited.__dict__)
    finally:
        del sys.modules[name]
    return edited


@pytest.mark.parametrize(
    ("module", "old", "new", "finder", "text"),
    [
        (secret_clause, "|root|admin|", "|root|zorblat|admin|", "generated_in_clause", "the zorblat: hk50Jf2EUZEH"),
        (secret_clause, "|2fa|mfa|", "|2fa|zorblat|mfa|", "one_time_codes", "the zorblat code 483920"),
        (secret_named, r"|combination\b|", r"|combination\b|zorblat\b|", "named_values", "zorblat: 4839"),
    ],
)
def test_a_word_added_to_a_pattern_is_gated_with_no_other_edit(
    module: Any, old: str, new: str, finder: str, text: str, tmp_path: Path
) -> None:
    assert not getattr(module, finder)(*_args(finder, text))
    edited = _module_with(module, old, new, tmp_path)
    assert getattr(edited, finder)(*_args(finder, text))


def _args(finder: str, text: str) -> tuple[Any, ...]:
    return (text,) if finder == "one_time_codes" else (text, lambda v: False)
