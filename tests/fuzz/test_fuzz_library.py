"""Hypothesis over the library's verbs (issue 12): a call succeeds or raises a MemstoneError with a known code.

Each test draws the arguments of one verb, valid and hostile mixed (``fuzz_strategies``), against one store per
module that the successful writes keep growing; after each test the canaries are unchanged and ``verify`` is
clean (``conftest.store_intact``). The rule itself is ``memstone.testing.fuzzing.library_failure``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fuzz_strategies import (
    JUNK,
    entry_ids,
    flags,
    hostile_text,
    kinds,
    memories,
    numbers,
    relation_kinds,
    scopes,
    slugs,
    tags,
)
from fuzz_world import FUZZ, World
from hypothesis import given
from hypothesis import strategies as st

from memstone.domain.model import ArtifactRef, Citation, EntryInput, EntryPatch, Relation, Revision
from memstone.testing.fuzzing import library_failure


def attempt(world: World, call: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``call`` on the world's loop; an allowed refusal is None, anything else fails the example."""

    async def body() -> Any:
        return await call()

    try:
        return world.run(body())
    except Exception as exc:
        failure = library_failure(exc)
        if failure is not None:
            raise AssertionError(failure) from exc
        return None


relations = st.one_of(st.lists(st.tuples(relation_kinds(), entry_ids()), max_size=3), JUNK)
ENTRY_FIELDS = {
    "title": st.one_of(st.none(), hostile_text()),
    "tags": tags(),
    "slug": slugs(),
    "important": flags(),
    "mandatory": flags(),
    "relations": relations,
    "entry": st.one_of(st.none(), st.none(), entry_ids()),
    "reason": st.one_of(st.none(), hostile_text()),
}
entry_fields = st.fixed_dictionaries({"kind": kinds(), "text": hostile_text()}, optional=ENTRY_FIELDS)


def built(fields: dict[str, Any], cls: type[Any]) -> Any:
    """``cls(**fields)``, with relations given as (kind, target) pairs made Relations."""
    rel = fields.get("relations")
    if isinstance(rel, list) and all(isinstance(r, tuple) for r in rel):
        fields = {**fields, "relations": [Relation(kind=k, target=t) for k, t in rel]}
    return cls(**fields)


@FUZZ
@given(
    entries=st.one_of(st.lists(entry_fields, min_size=1, max_size=3), JUNK),
    memory=st.one_of(st.none(), st.none(), memories()),
    options=st.fixed_dictionaries(
        {},
        optional={
            "scope": scopes(),
            "mode": st.sampled_from(["append", "auto", "extract", "x", ""]),
            "sources": st.one_of(st.lists(hostile_text(), max_size=2), JUNK),
            "author": hostile_text(),
            "rebase": flags(),
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
        options = {**options, "scope": "memstone://orgs/fuzz/projects/web"}
    attempt(world, call)


patch_fields = st.fixed_dictionaries(
    {},
    optional={
        "kind": kinds(),
        "text": hostile_text(),
        "title": hostile_text(),
        "tags": tags(),
        "slug": slugs(),
        "important": flags(),
        "mandatory": flags(),
        "relations": relations,
        "reason": hostile_text(),
    },
)


@FUZZ
@given(
    entry=entry_ids(),
    patch=st.one_of(patch_fields.map(lambda fields: ("fields", fields)), JUNK.map(lambda junk: ("raw", junk))),
    expected=st.one_of(st.none(), numbers(), entry_ids()),
)
def test_update(world: World, entry: Any, patch: Any, expected: Any) -> None:
    async def call() -> Any:
        how, fields = await world.resolve(patch)
        done = await world.svc.update(
            await world.resolve(entry),
            built(fields, EntryPatch) if how == "fields" else fields,
            expected_version=await world.resolve(expected),
        )
        world.note(done.revision)
        return done

    attempt(world, call)


@FUZZ
@given(
    query=hostile_text(),
    options=st.fixed_dictionaries(
        {},
        optional={
            "scopes": st.one_of(st.lists(scopes(), max_size=3), JUNK),
            "memories": st.one_of(st.lists(memories(), max_size=2), JUNK),
            "limit": st.one_of(st.integers(-1, 60), numbers()),
            "mode": st.one_of(st.sampled_from(["fts", "auto", "vector", "hybrid", "FTS", ""]), JUNK),
            "kinds": st.one_of(st.lists(kinds(), max_size=3), JUNK),
            "tags": st.one_of(tags(), JUNK),
            "fusion": st.one_of(st.sampled_from(["convex", "rrf", "sum"]), JUNK),
            "order": st.one_of(st.sampled_from(["relevance", "priority", "newest"]), JUNK),
            "important": flags(),
            "mandatory": flags(),
            "exclude_mandatory": flags(),
            "include_superseded": flags(),
            "context": flags(),
        },
    ),
)
def test_search(world: World, query: Any, options: dict[str, Any]) -> None:
    if "scopes" not in options and "memories" not in options:
        options = {**options, "scopes": ["memstone://orgs/fuzz/projects/web"]}

    async def call() -> Any:
        return await world.svc.search(await world.resolve(query), **await world.resolve(options))

    attempt(world, call)


@FUZZ
@given(
    op=st.sampled_from(["forget", "forget", "reactivate", "reactivate", "purge"]),
    memory=memories(),
    entries=st.one_of(st.lists(entry_ids(), min_size=1, max_size=3), st.lists(entry_ids(), max_size=0), JUNK),
    reason=st.one_of(st.none(), hostile_text()),
)
def test_forget_reactivate_purge(world: World, op: str, memory: Any, entries: Any, reason: Any) -> None:
    async def call() -> Any:
        names = await world.resolve(entries)
        if op == "purge":
            first = names[0] if isinstance(names, list) and names else names
            return await world.svc.purge(first, reason=reason, versions=None)
        verb = world.svc.forget if op == "forget" else world.svc.reactivate
        rev = await verb(await world.resolve(memory), entries=names, reason=reason)
        world.note(rev)
        return rev

    attempt(world, call)


@FUZZ
@given(
    op=st.sampled_from(["get", "history", "revision", "source", "version", "diff", "records", "verify_citation"]),
    entry=entry_ids(),
    other=entry_ids(),
    memory=st.one_of(st.none(), memories()),
    number=numbers(),
)
def test_reads(world: World, op: str, entry: Any, other: Any, memory: Any, number: Any) -> None:
    async def call() -> Any:
        svc = world.svc
        e, o, m = await world.resolve(entry), await world.resolve(other), await world.resolve(memory)
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
