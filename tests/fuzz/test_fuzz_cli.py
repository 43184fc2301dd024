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
    entry_ids,
    hostile_text,
    kinds,
    memories,
    numbers,
    relation_kinds,
    scopes,
    slugs,
)
from fuzz_world import FUZZ, World
from hypothesis import event, given
from hypothesis import strategies as st

from memstone.cli.main import cli
from memstone.testing.fuzzing import cli_failure

text = st.one_of(hostile_text(), JUNK)
FLAG = st.just("FLAG")  # an option that takes no value
memory = memories(junk=False).filter(lambda m: not hasattr(m, "what") or m.what == "memory")
OPTIONS: dict[str, list[tuple[str, st.SearchStrategy[Any]]]] = {
    "remember": [("--kind", kinds()), ("--text", text), ("--title", text), ("--tag", text), ("--tag", text),
                 ("--slug", slugs()), ("--important", FLAG), ("--not-mandatory", FLAG),
                 ("--memory", memory), ("--reason", text)],
    "revise": [("--revise", entry_ids()), ("--text", text), ("--kind", kinds()), ("--tag", text),
               ("--expected-version", numbers()), ("--title", text), ("--slug", slugs())],
    "search": [("--limit", numbers()), ("--mode", st.sampled_from(["fts", "auto", "vector", "x"])),
               ("--kind", kinds()), ("--tag", text), ("--scope", scopes()), ("--memory", memory),
               ("--order", st.sampled_from(["priority", "x"])), ("--include-superseded", FLAG)],
    "show": [("--revision", numbers()), ("--memory", memory)],
    "history": [],
    "cite": [("--revision", numbers()), ("--memory", memory)],
    "list": [("--revision", numbers()), ("--memory", memory), ("--since", numbers())],
    "forget": [("--reason", text), ("--memory", memory)],
    "reactivate": [("--reason", text)],
    "relate": [("--kind", relation_kinds())],
}  # fmt: skip
POSITIONAL: dict[str, st.SearchStrategy[list[Any]]] = {
    "search": st.lists(text, min_size=1, max_size=1),
    "show": st.lists(entry_ids(), min_size=1, max_size=1),
    "history": st.lists(entry_ids(), min_size=1, max_size=1),
    "cite": st.lists(entry_ids(), min_size=1, max_size=1),
    "forget": st.lists(entry_ids(), max_size=3),
    "reactivate": st.lists(entry_ids(), max_size=3),
    "relate": st.lists(entry_ids(), min_size=0, max_size=3),
}


def arg(value: Any) -> str:
    """``value`` as argv carries it: a string without NUL (``str`` of anything else, as a shell would pass it)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
        return "9" * 5000  # str() of it is refused past 4300 digits; the CLI still gets a number that size
    return (value if isinstance(value, str) else str(value)).replace("\x00", "")


@FUZZ
@given(data=st.data())
def test_commands(world: World, data: st.DataObject) -> None:
    command = data.draw(st.sampled_from(sorted(OPTIONS)), label="command")
    argv: list[Any] = ["remember"] if command == "revise" else [command]
    argv += data.draw(POSITIONAL.get(command, st.just([])), label="positional")
    for option, values in OPTIONS[command]:
        if data.draw(st.booleans(), label=option):
            value = data.draw(values, label=option)
            argv += [option] if values is FLAG else [option, value]
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
