"""Hypothesis over the library's verbs (issue 12): a call succeeds or raises a MemstoneError with a known code.

Each test draws the arguments of one verb, valid and hostile mixed (``fuzz_strategies``), against one store per
module that the successful writes keep growing; after each test the canaries are unchanged and ``verify`` is
clean (``conftest.store_intact``). The rule itself is ``memstone.testing.fuzzing.library_failure``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from fuzz_strategies import (
    JUNK,
    SCOPES,
    Deep,
    Known,
    Pair,
    arguments,
    entry_ids,
    flags,
    hostile_text,
    kinds,
    memories,
    mostly,
    numbers,
    relation_kinds,
    scopes,
    slugs,
    tags,
    valid_entry,
    valid_entry_ref,
    valid_flag,
    valid_kind,
    valid_memory,
    valid_number,
    valid_reason,
    valid_relations,
    valid_scope,
    valid_slug,
    valid_tags,
    valid_text,
)
from fuzz_world import FUZZ, World
from hypothesis import event, example, given
from hypothesis import strategies as st

from memstone.domain.model import ArtifactRef, Citation, EntryInput, EntryPatch, Relation, Revision
from memstone.testing.fuzzing import library_failure


def attempt(world: World, call: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``call`` on the world's loop; an allowed refusal is None, anything else fails the example."""

    async def body() -> Any:
        return await call()

    try:
        done = world.run(body())
    except Exception as exc:
        failure = library_failure(exc)
        if failure is not None:
            raise AssertionError(failure) from exc
        event(str(getattr(exc, "code", "")))
        return None
    event("ok")
    return done


relations = st.one_of(st.lists(st.tuples(relation_kinds(), entry_ids()), max_size=3), JUNK)
ENTRY: dict[str, Pair] = {
    "title": (st.one_of(st.none(), valid_text), st.one_of(st.none(), hostile_text())),
    "tags": (valid_tags, tags()),
    "slug": (valid_slug, slugs()),
    "important": (valid_flag, flags()),
    "mandatory": (valid_flag, flags()),
    "relations": (valid_relations, relations),
    "entry": (st.one_of(st.none(), valid_entry), st.one_of(st.none(), entry_ids())),
    "reason": (valid_reason, st.one_of(st.none(), hostile_text())),
}
entry_fields = arguments({"kind": (valid_kind, kinds()), "text": (valid_text, hostile_text())}, ENTRY)


def built(fields: dict[str, Any], cls: type[Any]) -> Any:
    """``cls(**fields)``, with relations given as (kind, target) pairs made Relations."""
    rel = fields.get("relations")
    if isinstance(rel, list) and all(isinstance(r, tuple) for r in rel):
        fields = {**fields, "relations": [Relation(kind=k, target=t) for k, t in rel]}
    return cls(**fields)


# Found by the long run (docs/benchmarks.md): an error message that showed the value failed itself, with
# ValueError for an integer past str()'s 4300 digits and RecursionError for a deeply nested one.
@example(entries=[{"kind": 10**4300, "text": "deploy."}], memory=None, options={"scope": SCOPES[0]})
@example(entries=[{"kind": "fact", "text": "deploy.", "important": Deep(3000)}], memory=None, options={})
@example(entries=[{"kind": "fact", "text": "deploy."}], memory=None, options={"sources": [10**4300]})
@example(entries=[{"kind": "fact", "text": "deploy."}], memory=None, options={"author": {"a": 1}})  # TypeError
@FUZZ
@given(
    entries=mostly(st.lists(entry_fields, min_size=1, max_size=3), JUNK),
    memory=mostly(st.none(), memories(), odds=3),
    options=arguments(
        {},
        {
            "scope": (valid_scope, scopes()),
            "mode": (st.sampled_from(["append", "auto"]), st.sampled_from(["extract", "x", ""])),
            "sources": (st.lists(valid_text, max_size=1), st.one_of(st.lists(hostile_text(), max_size=2), JUNK)),
            "author": (st.sampled_from(["alice", "bob"]), hostile_text()),
            "rebase": (valid_flag, flags()),
        },
    ),
)
def test_remember(world: World, entries: Any, memory: Any, options: dict[str, Any]) -> None:
    async def call() -> Revision | None:
        items = await world.resolve(entries)
        if isinstance(items, list) and all(isinstance(i, dict) for i in items):
            items = [built(i, EntryInput) for i in items]
        rev = await world.svc.remember(await world.resolve(memory), entries=items, **await world.resolve(options))
        world.note(rev)
        return rev

    if memory is None and "scope" not in options:
        options = {**options, "scope": SCOPES[0]}
    attempt(world, call)


patch_fields = arguments(
    {},
    {
        "kind": (valid_kind, kinds()),
        "text": (valid_text, hostile_text()),
        "title": (valid_text, hostile_text()),
        "tags": (valid_tags, tags()),
        "slug": (valid_slug, slugs()),
        "important": (valid_flag, flags()),
        "mandatory": (valid_flag, flags()),
        "relations": (valid_relations, relations),
        "reason": (valid_reason, hostile_text()),
    },
)


@example(call_args={"entry": Known("entry", 0), "patch": ("fields", {}), "expected_version": 10**4300})
@FUZZ
@given(
    call_args=arguments(
        {
            "entry": (valid_entry_ref, entry_ids()),
            "patch": (
                patch_fields.map(lambda f: ("fields", f)),
                mostly(patch_fields.map(lambda f: ("fields", f)), JUNK.map(lambda junk: ("raw", junk)), odds=1),
            ),
            "expected_version": (st.one_of(st.none(), valid_number), st.one_of(numbers(), entry_ids())),
        },
        {},
    )
)
def test_update(world: World, call_args: dict[str, Any]) -> None:
    async def call() -> Any:
        given_args = await world.resolve(call_args)
        how, fields = given_args["patch"]
        done = await world.svc.update(
            given_args["entry"],
            built(fields, EntryPatch) if how == "fields" else fields,
            expected_version=given_args["expected_version"],
        )
        world.note(done.revision)
        return done

    attempt(world, call)


# Found by the long run: important=2**64 reached SQLite (OverflowError); important=5 filtered silently.
@example(query="deploy", options={"scopes": [SCOPES[0]], "important": 2**64})
@example(query="deploy", options={"scopes": [SCOPES[0]], "mandatory": 5})
@example(query="deploy", options={"memories": [[0]]})  # a list as a Memory: AttributeError
@example(query="deploy", options={"memories": [Known("stale", 0)], "limit": 3})
@FUZZ
@given(
    query=mostly(valid_text, hostile_text(), odds=2),
    options=arguments(
        {},
        {
            "scopes": (st.lists(valid_scope, min_size=1, max_size=3), st.one_of(st.lists(scopes(), max_size=3), JUNK)),
            "memories": (st.lists(valid_memory, max_size=2), st.one_of(st.lists(memories(), max_size=2), JUNK)),
            "limit": (st.integers(1, 50), st.one_of(st.integers(-1, 60), numbers())),
            "mode": (
                st.sampled_from(["fts", "auto"]),
                st.one_of(st.sampled_from(["vector", "hybrid", "FTS", ""]), JUNK),
            ),
            "kinds": (st.lists(valid_kind, max_size=2), st.one_of(st.lists(kinds(), max_size=3), JUNK)),
            "tags": (valid_tags, st.one_of(tags(), JUNK)),
            "fusion": (st.sampled_from(["convex", "rrf"]), st.one_of(st.just("sum"), JUNK)),
            "order": (st.sampled_from(["relevance", "priority"]), st.one_of(st.just("newest"), JUNK)),
            "important": (st.one_of(st.none(), valid_flag), flags()),
            "mandatory": (st.one_of(st.none(), valid_flag), flags()),
            "exclude_mandatory": (valid_flag, flags()),
            "include_superseded": (valid_flag, flags()),
            "context": (valid_flag, flags()),
            "precedence": (valid_flag, flags()),
        },
    ),
)
def test_search(world: World, query: Any, options: dict[str, Any]) -> None:
    if "scopes" not in options and "memories" not in options:
        options = {**options, "scopes": [SCOPES[0]]}

    async def call() -> Any:
        return await world.svc.search(await world.resolve(query), **await world.resolve(options))

    attempt(world, call)


@FUZZ
@given(
    op=st.sampled_from(["forget", "forget", "reactivate", "reactivate", "purge"]),
    call_args=arguments(
        {
            "memory": (st.builds(Known, st.just("head"), st.integers(0, 10**6)), memories()),
            "entries": (
                st.lists(valid_entry, min_size=1, max_size=2),
                st.one_of(st.lists(entry_ids(), max_size=3), JUNK),
            ),
            "reason": (valid_reason, st.one_of(st.none(), hostile_text())),
        },
        {},
    ),
)
def test_forget_reactivate_purge(world: World, op: str, call_args: dict[str, Any]) -> None:
    async def call() -> Any:
        a = await world.resolve(call_args)
        names, reason = a["entries"], a["reason"]
        if op == "purge":
            first = names[0] if isinstance(names, list) and names else names
            return await world.svc.purge(first, reason=reason, versions=None)
        verb = world.svc.forget if op == "forget" else world.svc.reactivate
        if isinstance(a["memory"], Revision) and isinstance(names, list) and names and isinstance(names[0], str):
            with contextlib.suppress(Exception):  # the head of the entry's own Memory: the call that can succeed
                a["memory"] = await world.svc.head((await world.svc.get(names[0])).memory_id)
        rev = await verb(a["memory"], entries=names, reason=reason)
        world.note(rev)
        return rev

    attempt(world, call)


@example(op="get", call_args={"entry": 10**4300, "other": None, "memory": None, "number": None})
# verify_citation took a Citation's fields unchecked: a list as memory id (TypeError), 2**64 (OverflowError).
@example(
    op="verify_citation",
    call_args={"entry": Known("entry", 0), "other": Known("version", 0), "memory": [0], "number": 1},
)
@example(
    op="verify_citation",
    call_args={"entry": Known("entry", 0), "other": Known("version", 0), "memory": Known("memory", 0), "number": 2**64},
)
@example(op="revision", call_args={"entry": Deep(3000), "other": None, "memory": None, "number": Deep(3000)})
@FUZZ
@given(
    op=st.sampled_from(["get", "history", "revision", "source", "version", "diff", "records", "verify_citation"]),
    call_args=arguments(
        {
            "entry": (valid_entry_ref, entry_ids()),
            "other": (valid_entry_ref, entry_ids()),
            "memory": (st.one_of(st.none(), valid_memory), memories()),
            "number": (st.one_of(st.none(), valid_number), numbers()),
        },
        {},
    ),
)
def test_reads(world: World, op: str, call_args: dict[str, Any]) -> None:
    async def call() -> Any:
        svc = world.svc
        a = await world.resolve(call_args)
        e, o, m, number = a["entry"], a["other"], a["memory"], a["number"]
        if op == "get":
            return await svc.get(e, memory=m)
        if op == "history":
            return await svc.history(e, reasons=bool(number))
        if op == "revision":
            return await svc.revision(m if m is not None else e, number)
        if op == "source":
            return await svc.source(e, memory=m)
        if op == "version":
            return await svc.version(e)
        if op == "diff":
            return await svc.diff(e, o)
        if op == "records":
            return await svc.records([e, o], memory=m)
        memory_id = m.memory_id if isinstance(m, Revision | ArtifactRef) else m
        ref = ArtifactRef(memory_id=memory_id, revision=number)
        return await svc.verify_citation(Citation(memory_ref=ref, entry_id=e, entry_version_id=o))

    attempt(world, call)
