"""Hypothesis over the CLI's arguments (issue 12), in process through click's runner (as tests/cli do).

Each example draws a command (remember, remember --revise, search, show, history, cite, list, forget, reactivate,
relate) and its options from ``fuzz_strategies`` rendered as the strings argv carries (no NUL: argv cannot hold
one; lone surrogates stay: that is how undecodable bytes arrive), with or without ``--json``. The property: no
exception escapes the command, the exit code is documented, no traceback, and with ``--json`` a failure prints
the project's error object (``memstone.testing.fuzzing.cli_failure``). The store is checked after the test.
"""

from __future__ import annotations

import os
from typing import Any

from click.testing import CliRunner
from fuzz_strategies import (
    JUNK,
    MALFORMED_IDS,
    Known,
    Pair,
    arguments,
    entry_ids,
    hostile_text,
    kinds,
    numbers,
    one_of,
    relation_kinds,
    scopes,
    slugs,
    valid_entry_ref,
    valid_kind,
    valid_number,
    valid_scope,
    valid_slug,
    valid_text,
)
from fuzz_world import FUZZ, World
from hypothesis import event, given
from hypothesis import strategies as st

from memstone.cli.main import cli
from memstone.testing.fuzzing import cli_failure

text: Pair = (valid_text, one_of(hostile_text(), JUNK))
FLAG: Pair = (st.just("FLAG"), st.just("FLAG"))  # an option that takes no value
memory: Pair = (st.builds(Known, st.just("memory"), st.integers(0, 10**6)), st.sampled_from(MALFORMED_IDS))
entry: Pair = (valid_entry_ref, entry_ids())
number: Pair = (valid_number, numbers())
OPTIONS: dict[str, dict[str, Pair]] = {
    "remember": {"--kind": (valid_kind, kinds()), "--text": text, "--title": text, "--tag": text,
                 "--slug": (valid_slug.map(str), slugs()), "--important": FLAG, "--not-mandatory": FLAG,
                 "--memory": memory, "--reason": text},
    "revise": {"--revise": entry, "--text": text, "--kind": (valid_kind, kinds()), "--tag": text,
               "--expected-version": number, "--title": text},
    "search": {"--limit": (st.integers(1, 50), numbers()),
               "--mode": (st.sampled_from(["fts", "auto"]), st.sampled_from(["vector", "x"])),
               "--kind": (valid_kind, kinds()), "--tag": text, "--scope": (valid_scope, scopes()),
               "--memory": memory, "--order": (st.just("priority"), st.just("x")), "--include-superseded": FLAG},
    "show": {"--revision": number, "--memory": memory},
    "history": {},
    "cite": {"--revision": number, "--memory": memory},
    "list": {"--revision": number, "--memory": memory, "--since": (st.integers(0, 4), numbers())},
    "forget": {"--reason": text},
    "reactivate": {"--reason": text},
    "relate": {"--kind": (st.sampled_from(["supersedes", "relates-to"]), relation_kinds())},
}  # fmt: skip
REQUIRED = {"remember": ("--kind", "--text"), "revise": ("--revise",)}
POSITIONAL: dict[str, tuple[int, int]] = {  # how many entry ids (or, for search, queries) a command takes
    "search": (1, 1), "show": (1, 1), "history": (1, 1), "cite": (1, 1), "forget": (1, 3), "reactivate": (1, 3),
    "relate": (2, 2),
}  # fmt: skip


def arg(value: Any) -> str:
    """``value`` as argv carries it: a string without NUL (``str`` of anything else, as a shell would pass it)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
        return "9" * 5000  # str() of it is refused past 4300 digits; the CLI still gets a number that size
    return (value if isinstance(value, str) else str(value)).replace("\x00", "")


@FUZZ
@given(data=st.data())
def test_commands(world: World, data: st.DataObject) -> None:
    command = data.draw(st.sampled_from(sorted(OPTIONS)), label="command")
    low, high = POSITIONAL.get(command, (0, 0))
    spec = {f"#{n}": text if command == "search" else entry for n in range(data.draw(st.integers(low, high)))}
    spec |= {o: p for o, p in OPTIONS[command].items() if o in REQUIRED.get(command, ()) or data.draw(st.booleans())}
    if data.draw(st.integers(0, 19), label="drop one") == 19 and spec:
        spec.pop(data.draw(st.sampled_from(sorted(spec))))
    drawn = data.draw(arguments(spec, {}), label="arguments")
    argv: list[Any] = ["remember"] if command == "revise" else [command]
    for name, value in drawn.items():
        argv += [value] if name.startswith("#") else [name] if spec[name] is FLAG else [name, value]
    as_json = data.draw(st.sampled_from([True, True, False]), label="--json")
    scope = data.draw(st.one_of(st.just("memstone://orgs/fuzz/projects/web"), scopes()), label="--scope")
    args = [arg(a) for a in world.run(world.resolve([*argv, scope]))]
    full = ["--url", world.url, "--scope", args.pop(), *args, *(["--json"] if as_json else [])]
    env = {"MEMSTONE_EMBEDDING": "none", "HOME": str(world.path), "MEMSTONE_CONFIG": str(world.path / "none.toml")}
    result = CliRunner().invoke(cli, full, env={**os.environ, **env}, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{command}: the command raised") from result.exception
    event(f"{command}: exit {result.exit_code}")
    failure = cli_failure(result.exit_code, result.stdout, result.stderr, as_json=as_json)
    assert failure is None, f"{' '.join(full)[:300]!r}: {failure}"


# Found by the long run: an empty entry id was read as "no entry given", and forget/reactivate then hit an
# assert (a traceback) instead of refusing the id.
def test_an_empty_entry_id_is_refused(world: World) -> None:
    for command in ("forget", "reactivate"):
        result = CliRunner().invoke(cli, ["--url", world.url, "--scope", "memstone://orgs/new", command, "", "--json"])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code == 2 and '"invalid_input"' in result.stdout, (command, result.stdout)
