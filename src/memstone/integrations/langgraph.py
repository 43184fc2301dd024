"""A LangGraph ``BaseStore`` on memstone: items are versioned entries, so an agent gets history and revert.

>>> from memstone.integrations.langgraph import MemstoneStore       # doctest: +SKIP
>>> with MemstoneStore("sqlite:///memories.db") as store:
...     graph = builder.compile(store=store)
...     store.put(("users", "alice", "memories"), "food", {"text": "Alice is vegetarian"})
...     store.search(("users", "alice"), query="what does alice eat?")

Needs the ``langgraph`` extra (``pip install 'memstone[langgraph]'``). Mapping:

- a namespace maps to a scope: ``("users", u, ...)`` → ``memstone://users/<u>``; ``("orgs", o, "projects", p, ...)``
  → that project; ``("orgs", o, ...)`` → that org; anything else → ``default_scope``. Pass ``scope_of`` to choose.
- an item is one entry of kind ``kind`` (default ``fact``), tagged ``langgraph``, titled by its key, whose slug is a
  hash of (namespace, key) and whose text is ``{"key", "namespace", "value"}`` as JSON (strings are stored
  NFC-normalized, as every memstone text). ``put`` of a new key adds an entry; of an existing key, a new version
  (last writer wins, as LangGraph expects); after a ``delete``, the same entry is reactivated and revised, so one
  key keeps one history. ``delete`` is a forget.
- ``search`` with ``query`` runs memstone's search (``auto``: hybrid when the model and vectors are there, else
  full-text), without it lists newest first; ``filter`` matches value fields (``$eq $ne $gt $gte $lt $lte``).
- ``index`` is ignored (memstone indexes every entry) and TTLs are not supported.

The store owns a private event-loop thread with its own service, so its sync methods work from any thread and its
async ones from any event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Coroutine, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from ..domain.errors import InvalidInput, NotFound
from ..domain.ids import EntryId
from ..domain.model import EntryInput
from ..domain.scopes import ANONYMOUS
from ..domain.search import searchable
from ..sync import ServiceFacade

if TYPE_CHECKING:
    from ..domain.records import Record

T = TypeVar("T")
TAG = "langgraph"
_ID = re.compile(r"[^a-z0-9._\-]+")
MAX_SCAN = 1000


def _segment(value: str) -> str | None:
    clean = _ID.sub("-", value.lower()).strip("-._")[:128]
    return clean or None


def default_scope_of(namespace: tuple[str, ...], default: str = ANONYMOUS) -> str:
    """The scope a namespace maps to by default (see the module docstring)."""
    ns = namespace
    if len(ns) >= 2 and ns[0] == "users" and (user := _segment(ns[1])):
        return f"memstone://users/{user}"
    if len(ns) >= 2 and ns[0] == "orgs" and (org := _segment(ns[1])):
        if len(ns) >= 4 and ns[2] == "projects" and (project := _segment(ns[3])):
            return f"memstone://orgs/{org}/projects/{project}"
        return f"memstone://orgs/{org}"
    return default


def item_slug(namespace: tuple[str, ...], key: str) -> str:
    """The entry slug that identifies (namespace, key)."""
    digest = hashlib.sha256(json.dumps([list(namespace), key], ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"lg-{digest[:32]}"


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _field(value: dict[str, Any], path: str) -> Any:
    current: Any = value
    for part in path.split("."):
        if not isinstance(current, dict):
            return None
        current = current.get(part)
    return current


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict) and any(str(k).startswith("$") for k in wanted):
        return all(_operator(actual, op, operand) for op, operand in wanted.items())
    if isinstance(wanted, dict):
        return isinstance(actual, dict) and all(_compare(actual.get(k), v) for k, v in wanted.items())
    return bool(actual == wanted)


def _operator(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if not isinstance(actual, (int, float)) or isinstance(actual, bool):
            return False
        a, b = float(actual), float(operand)
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
    raise InvalidInput(f"unsupported filter operator {op!r}", hint="use $eq, $ne, $gt, $gte, $lt or $lte")


def _matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    return all(p == "*" or n == p for n, p in pairs)


class MemstoneStore(BaseStore, ServiceFacade):
    """LangGraph's ``BaseStore`` over a memstone store (sync and async)."""

    def __init__(
        self,
        url: str | None = None,
        *,
        default_scope: str = ANONYMOUS,
        scope_of: Callable[[tuple[str, ...]], str] | None = None,
        kind: str = "fact",
        author: str | None = None,
        **options: Any,
    ) -> None:
        self._default = default_scope
        self._scope_of = scope_of or (lambda ns: default_scope_of(ns, self._default))
        self._kind = kind
        ServiceFacade.__init__(
            self,
            url,
            thread_name="memstone-langgraph",
            author=author or "langgraph",
            surface="agent-session",
            **options,
        )

    # ------------------------------------------------------------------ lifecycle (close, with: ServiceFacade)
    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coro)

    # ------------------------------------------------------------------ BaseStore
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self._run(self._batch(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        future = asyncio.run_coroutine_threadsafe(self._batch(list(ops)), self._runner.loop)
        return await asyncio.wrap_future(future)

    async def _batch(self, ops: Sequence[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op.namespace, op.key))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._namespaces(op))
            else:
                raise InvalidInput(f"unknown store operation {type(op).__name__}")
        return results

    # ------------------------------------------------------------------ operations
    async def _record(self, namespace: tuple[str, ...], key: str) -> Record | None:
        try:
            return await self.service.lookup(
                self._scope_of(namespace), kind=self._kind, slug=item_slug(namespace, key), include_inactive=True
            )
        except NotFound:
            return None

    async def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        rec = await self._record(namespace, key)
        if rec is None or rec.state != "active":
            return None
        return self._item(rec)

    def _item(self, rec: Record, score: float | None = None, *, search: bool = False) -> Item:
        doc = json.loads(rec.text)
        fields = {
            "namespace": tuple(doc["namespace"]),
            "key": doc["key"],
            "value": doc["value"],
            "created_at": _time(rec.created_at),
            "updated_at": _time(rec.version.provenance.created_at),
        }
        return SearchItem(score=score, **fields) if search else Item(**fields)

    async def _put(self, op: PutOp) -> None:
        svc = self.service
        scope = self._scope_of(op.namespace)
        rec = await self._record(op.namespace, op.key)
        if op.value is None:
            if rec is not None and rec.state == "active":
                head = await svc.head(rec.memory_ref.memory_id)
                await svc.forget(head, entries=[rec.entry_id], reason="langgraph delete")
            return
        if op.ttl is not None:
            raise InvalidInput("memstone's LangGraph store does not support TTLs", hint="put without ttl")
        text = json.dumps(
            {"key": op.key, "namespace": list(op.namespace), "value": dict(op.value)},
            ensure_ascii=False,
            sort_keys=True,
        )
        item = EntryInput(
            kind=self._kind,
            text=text,
            title=op.key if op.key.strip() else None,
            tags=(TAG,),
            slug=item_slug(op.namespace, op.key),
            entry=EntryId(rec.entry_id) if rec is not None else None,
            reason="langgraph put",
        )
        if rec is not None and rec.state != "active":
            head = await svc.head(rec.memory_ref.memory_id)
            await svc.reactivate(head, entries=[rec.entry_id], reason="langgraph put")
        await svc.remember(None, entries=[item], scope=scope)

    async def _scopes(self) -> list[str]:
        return [s for s, _ in await self.service.scopes()]

    def _wanted(self, namespace: tuple[str, ...], value: dict[str, Any], op: SearchOp) -> bool:
        prefix = op.namespace_prefix
        if tuple(namespace[: len(prefix)]) != tuple(prefix):
            return False
        return all(_compare(_field(value, k), v) for k, v in (op.filter or {}).items())

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        svc = self.service
        scopes = await self._scopes()
        if not scopes:
            return []
        scored: list[tuple[EntryId, float | None]]
        by_id: dict[EntryId, Record] = {}
        if op.query and not searchable(op.query):
            return []  # a query of stopwords only matches nothing (the service refuses it)
        if op.query:
            depth = MAX_SCAN if op.filter or op.namespace_prefix else min(MAX_SCAN, max(8, op.offset + op.limit))
            result = await svc.search(
                op.query, scopes=scopes, kinds=[self._kind], tags=[TAG], limit=depth, precedence=False
            )
            scored = [(h.entry_id, h.score) for h in result.hits]
        else:
            records = await svc.list(scopes=scopes, kinds=[self._kind], tags=[TAG], precedence=False)
            ordered = sorted(records, key=lambda r: r.version.provenance.created_at, reverse=True)
            scored = [(r.entry_id, None) for r in ordered]
            by_id = {r.entry_id: r for r in ordered}
        found: list[SearchItem] = []
        skipped = 0
        for entry_id, score in scored:
            rec = by_id[entry_id] if not op.query else (await svc.records([entry_id]))[0]
            doc = json.loads(rec.text)
            if not self._wanted(tuple(doc["namespace"]), doc["value"], op):
                continue
            if skipped < op.offset:
                skipped += 1
                continue
            item = self._item(rec, score, search=True)
            assert isinstance(item, SearchItem)
            found.append(item)
            if len(found) >= op.limit:
                break
        return found

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        scopes = await self._scopes()
        records = (
            await self.service.list(scopes=scopes, kinds=[self._kind], tags=[TAG], precedence=False) if scopes else ()
        )
        names: set[tuple[str, ...]] = set()
        for rec in records:
            ns = tuple(json.loads(rec.text)["namespace"])
            if all(_matches(ns, c) for c in op.match_conditions or ()):
                names.add(ns[: op.max_depth] if op.max_depth is not None else ns)
        return sorted(names)[op.offset : op.offset + op.limit]


__all__ = ["MemstoneStore", "default_scope_of", "item_slug"]
