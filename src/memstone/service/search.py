"""Search: mode resolution, the backend's fused channels, and the Graphit pass (priority order, archived versions,
precedence between tiers)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from ..context_query import NeighboursQuery
from ..domain.calibration import FTS_COVERAGE_POWER, Calibration
from ..domain.context import context_anchors, with_context
from ..domain.errors import (
    CapabilityNotSupportedError,
    InvalidInput,
    ProfileMismatchError,
    shown,
)
from ..domain.filters import EntryFilter
from ..domain.ids import EntryId, MemoryId
from ..domain.model import (
    ArtifactRef,
    MemoryHit,
    Revision,
    SearchMode,
    SearchResult,
    Shadowed,
)
from ..domain.records import (
    priority_sorted,
)
from ..domain.rules import (
    check_flag,
    check_ref,
    items_of,
    strings_of,
)
from ..domain.scopes import SlugHolder, parse_scope, shadowing
from ..domain.search import RRF_K, Fusion, archived_scores, candidate_depth, check_query
from ..indexing import VectorIndexer
from ..ports import (
    ArchiveQuery,
    LiveSlugsQuery,
    SearchPage,
    SearchRequest,
    VectorStatusQuery,
)
from .core import (
    MAX_LIMIT,
    MemoryLike,
    Order,
    ServiceCore,
    _memory_id,
)

# Neighbour context is opt-in: through the service it gains R@10 on conversations but displaces gold on MemoryCode
# convention (docs/benchmarks.md, "Neighbour context through the service").
CONTEXT_DEFAULT = False
MODEL_FREE = Calibration()  # immutable, so one instance serves every FTS search


class Search:
    """Search the current heads of selected Memories."""

    def __init__(self, core: ServiceCore) -> None:
        self._core = core

    async def search(
        self,
        query: str,
        *,
        memories: Sequence[MemoryLike | str] = (),
        scopes: Sequence[str] = (),
        limit: int = 8,
        mode: SearchMode = "auto",
        kinds: Sequence[str] = (),
        tags: Sequence[str] = (),
        important: bool | None = None,
        mandatory: bool | None = None,
        exact: bool = False,
        order: Order = "relevance",
        exclude_mandatory: bool = False,
        include_superseded: bool = False,
        precedence: bool = True,
        fusion: Fusion = "convex",
        context: bool = CONTEXT_DEFAULT,
    ) -> SearchResult:
        """Search the current heads of explicit Memories (or scopes) by ``fts``, ``vector``, ``hybrid`` or ``auto``.

        ``auto`` uses hybrid when a model matching the store's profile is loaded and every selected Memory's
        vector projection is complete, else FTS, and reports the mode it used. ``exact=True`` makes the
        vector channel scan exactly instead of using the quantized fast path (the reference it is checked by).

        Graphit options: ``order="priority"`` (mandatory → important → normal, then newest; a score never outranks
        a category), ``exclude_mandatory`` (the recall protocol's contextual pass), ``include_superseded`` (archived
        versions are searched too and collapse onto their entry; archive-only matches come back ``superseded``).
        With several tiers selected, ``precedence`` drops entries a more specific scope shadows and reports them in
        ``result.shadowed``. ``limit`` counts distinct entries after collapse and ordering.
        ``fusion="convex"`` scores every hit in [0, 1] with its per-channel parts; ``"rrf"`` is the RFC's RRF.
        ``context`` (relevance order, ``limit`` > 7): after the first seven hits come the entries written just
        before and after each of them in the same Memory, then the rest (``domain/context.py``).
        An empty query, or one of stopwords only, is refused (:class:`InvalidInput`).
        """
        if not isinstance(query, str):
            raise InvalidInput("query must be a string")
        if fusion not in ("convex", "rrf"):
            raise InvalidInput(f"unknown fusion {shown(fusion)}", hint="use convex or rrf")
        check_query(query)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_LIMIT}, got {shown(limit)}")
        if mode not in ("fts", "vector", "hybrid", "auto"):
            raise InvalidInput(f"unknown search mode {shown(mode)}", hint="use fts, vector, hybrid or auto")
        if order not in ("relevance", "priority"):
            raise InvalidInput(f"unknown search order {shown(order)}", hint="use relevance or priority")
        filters = EntryFilter.of(kinds=kinds, tags=tags, important=important, mandatory=mandatory)
        for name, flag in (("exclude_mandatory", exclude_mandatory), ("include_superseded", include_superseded),
                           ("exact", exact), ("precedence", precedence), ("context", context)):  # fmt: skip
            check_flag(flag, name)
        if exclude_mandatory:
            if filters.mandatory is True:
                raise InvalidInput("exclude_mandatory=True contradicts mandatory=True")
            filters = replace(filters, mandatory=False)
        memories, scopes = items_of(memories, "memories"), strings_of(scopes, "scopes")
        # The store model's query vector is computed (in its worker thread) while the reads below run: a vector
        # channel on the store's own route takes it; any other outcome drops it (an error included).
        early = _early_vector(self._core.indexer, query) if mode != "fts" else None
        refs: dict[MemoryId, ArtifactRef] = {}
        # Memories named by id or scope are searched at their head as the search's own read transaction sees
        # it (issue 12: a writer committing after this resolve must not fail the search); an explicit
        # Revision must still be the head. Their heads are not read before (issue 13: a read of its own, two
        # round trips on PostgreSQL); one named by id that does not exist fails the search's read, and any error
        # of the search is preceded, as before, by that of the first such Memory that does not exist.
        at_head: set[MemoryId] = set()
        unread: list[MemoryId] = []  # named by id (then bound to a scope named), in order, and not read here
        try:
            for m in memories:
                if not isinstance(m, str | Revision):  # a caller's ArtifactRef, or not a Memory at all (tests/fuzz)
                    check_ref(m, "a memory")
                mid = _memory_id(m)
                if mid in unread and not isinstance(m, str):  # named by id and at a Revision: compared with its head
                    refs[mid] = (await self._core.head(mid)).ref
                    unread.remove(mid)
                if isinstance(m, str) and mid not in refs:
                    unread.append(mid)
                    await self._core._may(mid, "read", hidden=f"no memory {mid}")
                    refs[mid] = ArtifactRef(memory_id=mid, revision=0)  # its head: the search's own read (page.heads)
                    at_head.add(mid)
                    continue
                if isinstance(m, str) and mid in unread:
                    continue  # named by id twice
                ref = (
                    (await self._core.head(m)).ref if isinstance(m, str) else (m.ref if isinstance(m, Revision) else m)
                )
                if ref.memory_id in refs and refs[ref.memory_id] != ref:
                    raise InvalidInput(f"{ref.memory_id} is named at two different revisions")
                await self._core._may(ref.memory_id, "read", hidden=f"no memory {ref.memory_id}")
                refs[ref.memory_id] = ref
                if isinstance(m, str):
                    at_head.add(ref.memory_id)
            for scope in scopes:
                bound = await self._core.bound(scope)
                if bound is not None and bound not in refs:
                    refs[bound] = ArtifactRef(memory_id=bound, revision=0)  # its head: the search's own read
                    at_head.add(bound)
                    unread.append(bound)
            if not refs:
                if mode in ("vector", "hybrid"):
                    await self._resolve_mode(mode, ())  # an explicit mode the store cannot serve is refused, not empty
                if memories or scopes:
                    return SearchResult(
                        hits=(), mode="fts" if mode == "auto" else mode, requested_mode=mode, order=order
                    )
                raise InvalidInput(
                    "search needs at least one memory or scope", hint="pass memories=[...] or scopes=[...]"
                )
            ordered_refs = tuple(refs[k] for k in sorted(refs))
            precedence = precedence and await self._tiered(ordered_refs)
            for refreshed in (False, True):
                request, used_mode, fallback = await self._request(
                    query, mode, ordered_refs, at_head, early, limit=limit, exact=exact, fusion=fusion,
                    filters=filters, wide=order == "priority" or include_superseded or precedence,
                )  # fmt: skip
                try:
                    page = await self._searched(request, early)
                    break
                except ProfileMismatchError:
                    # Trigger: an org recorded another embedding profile since this process last read them (the
                    # search routes by the profiles read in its own snapshot and refused the query vector; nothing
                    # was served). Outcome: read the orgs' profiles again and route the query by them, once.
                    if refreshed or not self._core.backend.capabilities.org_embedding:
                        raise
                    await self._core.backend.org_profiles()
        except Exception:
            for mid in unread:
                await self._core.head(mid)  # ArtifactNotFoundError for a Memory that does not exist
            raise
        if page.incomplete:
            # The vector projection of a searched Memory is incomplete in the search's own snapshot: an explicit
            # vector or hybrid search is refused, ``auto`` searches by FTS alone (docs: the mode it used).
            reason = f"the vector projection of {', '.join(sorted(page.incomplete))} is incomplete"
            if mode != "auto":
                if request.query_vector_later is not None and early is not None:
                    await early  # the model's error first, as when the search waited for the vector
                raise _unavailable(mode, reason)
            request = replace(
                request, channels=("fts",), query_vector=None, query_vector_later=None, query_profile=None,
                calibration=MODEL_FREE, check_vectors=False,
            )  # fmt: skip
            used_mode, fallback = "fts", reason
            page = await self._core.backend.search(request)
        hits, shadowed = await self._graphit_pass(
            query,
            page.hits,
            page.heads,
            limit=limit,
            order=order,
            include_superseded=include_superseded,
            precedence=precedence,
            fused_dense=fusion == "convex" and used_mode == "hybrid",
            rrf=fusion == "rrf",
            context=context,
            filters=filters,
        )
        return SearchResult(
            hits=hits, mode=used_mode, requested_mode=mode, fallback_reason=fallback, order=order, shadowed=shadowed
        )

    async def _searched(self, request: SearchRequest, early: asyncio.Future[tuple[float, ...]] | None) -> SearchPage:
        """The backend's page; with a late query vector (``early``'s), a failed embedding fails the search with the
        model's error, as when the search waited for the vector before it began, and a cancelled search stops the
        engine's wait for it."""
        if request.query_vector_later is None or early is None:
            return await self._core.backend.search(request)
        try:
            return await self._core.backend.search(request)
        except asyncio.CancelledError:
            early.cancel()
            raise
        except Exception:
            await early
            raise

    async def _request(
        self,
        query: str,
        mode: SearchMode,
        ordered_refs: tuple[ArtifactRef, ...],
        at_head: set[MemoryId],
        early: asyncio.Future[tuple[float, ...]] | None,
        *,
        limit: int,
        exact: bool,
        fusion: Fusion,
        filters: EntryFilter,
        wide: bool,
    ) -> tuple[SearchRequest, SearchMode, str | None]:
        """The backend's request for this search: its mode resolved on the embedding route of the organizations'
        profiles as last read (the search re-reads them in its own snapshot and refuses a query vector of another
        profile), the query vector, and the check of the vector projection's completeness, which the search makes
        in its own read transaction (``SearchPage.incomplete``) instead of a read of its own."""
        indexer = None  # the model of the searched Memories' embedding route: only a vector channel needs it
        if mode != "fts":
            route = await self._core.routes.one_route(self._core, [r.memory_id for r in ordered_refs])
            indexer = self._core.routes.indexer(self._core, route) if route is not None else None
        used_mode, fallback = await self._resolve_mode(mode, ordered_refs, status=False)
        channels: tuple[Literal["fts", "vector"], ...] = {
            "fts": ("fts",),
            "vector": ("vector",),
            "hybrid": ("fts", "vector"),
        }[used_mode]  # type: ignore[assignment]
        query_vector = later = None
        calibration = MODEL_FREE  # the model-free rules of an FTS search
        if "vector" in channels:
            assert indexer is not None
            try:
                if early is not None and indexer is self._core.indexer:
                    if (
                        channels == ("fts", "vector")
                        and not early.done()
                        and self._core.backend.capabilities.vector_later
                    ):
                        later = _handed(early)  # the engine's reads and FTS statement run while the model embeds
                    else:
                        query_vector = await early
                else:
                    query_vector = await indexer.query_vector(query)  # the model of the searched Memories' profile
                calibration = indexer.calibration
            except Exception:
                # ``auto`` on an incomplete vector projection never needed the model: it searches by FTS
                if mode != "auto" or (fallback := await self._vector_unavailable(ordered_refs)) is None:
                    raise
                used_mode, channels, indexer = "fts", ("fts",), None
        request = SearchRequest(
            query=query,
            memories=tuple(r for r in ordered_refs if r.memory_id not in at_head),
            heads=tuple(r.memory_id for r in ordered_refs if r.memory_id in at_head),
            limit=MAX_LIMIT if wide else limit,
            channels=channels,
            query_vector=query_vector,
            query_vector_later=later,
            query_profile=None if indexer is None or (query_vector is None and later is None) else indexer.profile,
            calibration=calibration,
            exact=exact,
            fusion=fusion,
            filters=filters,
            check_vectors="vector" in channels,
        )
        return request, used_mode, fallback

    async def _resolve_mode(
        self, mode: SearchMode, refs: tuple[ArtifactRef, ...], *, status: bool = True
    ) -> tuple[SearchMode, str | None]:
        """The mode a search runs in, and why ``auto`` fell back to FTS. ``status=False`` leaves the vector
        projection's completeness to the search itself (``SearchRequest.check_vectors``)."""
        if mode == "fts":
            return "fts", None
        reason = await self._vector_unavailable(refs, status=status)
        if mode in ("vector", "hybrid"):
            if reason is not None:
                raise _unavailable(mode, reason)
            return mode, None
        if reason is not None:
            return "fts", reason
        return "hybrid", None

    async def _vector_unavailable(self, refs: tuple[ArtifactRef, ...], *, status: bool = True) -> str | None:
        """Why vector search cannot run on these Memories now (None when it can); ``status=False``: as far as the
        store's profiles and the loaded models say, without reading the vector projection's completeness."""
        routes = self._core.routes
        route = await routes.one_route(self._core, [r.memory_id for r in refs])
        if route is None:
            return "the selected Memories belong to organizations with different embedding profiles"
        recorded = route.profile
        if route.org is not None:
            if routes.indexer(self._core, route) is None:
                name = recorded.profile_id if recorded is not None else "?"
                return f"no model of organization {route.org}'s embedding profile ({name}) runs here"
        elif self._core.indexer is None:
            return "no embedding model is configured"
        elif not self._core.backend.capabilities.vector or recorded is None:
            return "this store has no vector projection"
        elif recorded.canonical() != self._core.indexer.profile.canonical():
            return f"the loaded model ({self._core.indexer.profile.profile_id}) is not the store's profile"
        if not status:
            return None
        found = await self._core.backend.read(VectorStatusQuery(memories=refs))
        incomplete = sorted(m for m, ok in found.items() if not ok)
        if incomplete:
            return f"the vector projection of {', '.join(incomplete)} is incomplete"
        return None

    async def _tiered(self, refs: Sequence[ArtifactRef]) -> bool:
        """Whether the selection spans more than one tier (so precedence can shadow anything)."""
        if len(refs) < 2:
            return False
        scope_of = await self._core._scopes_of([r.memory_id for r in refs])
        return len({parse_scope(scope_of[r.memory_id]).tier for r in refs if r.memory_id in scope_of}) > 1

    async def _shadows(
        self, refs: Sequence[ArtifactRef], scope_of: dict[MemoryId, str]
    ) -> dict[EntryId, tuple[SlugHolder, SlugHolder]]:
        """Precedence among the selected Memories: shadowed entry → (its holder, the most specific shadower)."""
        tiers = {parse_scope(scope_of[r.memory_id]).tier for r in refs if r.memory_id in scope_of}
        if len(tiers) < 2:
            return {}
        found = await self._core.backend.read(LiveSlugsQuery(memory_ids=tuple(r.memory_id for r in refs)))
        holders = {
            eid: SlugHolder(
                scope=parse_scope(scope_of[mid]) if mid in scope_of else None, kind=kind, slug=slug, entry_id=eid
            )
            for mid, eid, kind, slug in found
        }
        return {eid: (holders[eid], winner) for eid, winner in shadowing(holders.values()).items()}

    async def _graphit_pass(
        self,
        query: str,
        hits: Sequence[MemoryHit],
        refs: Sequence[ArtifactRef],
        *,
        limit: int,
        order: Order,
        include_superseded: bool,
        precedence: bool,
        fused_dense: bool,
        rrf: bool,
        context: bool,
        filters: EntryFilter,
    ) -> tuple[tuple[MemoryHit, ...], tuple[Shadowed, ...]]:
        """Collapse archived matches onto their entries, apply precedence, order, then count ``limit`` hits."""
        if not hits and not include_superseded:
            return (), ()
        if include_superseded or (precedence and len(refs) > 1):
            scope_of = await self._core._scopes_of([r.memory_id for r in refs])
            out = [replace(h, scope=scope_of.get(h.memory_ref.memory_id)) for h in hits]
        else:
            # One Memory and no archive: no precedence can apply, and the backend already annotated each hit
            # with its scope in the search's read transaction, so no second round trip is needed.
            scope_of = {h.memory_ref.memory_id: h.scope for h in hits if h.scope is not None}
            out = list(hits)
        if include_superseded and refs:
            seen = {h.entry_id for h in out}
            archived = await self._core.backend.read(
                ArchiveQuery(
                    query=query,
                    memories=tuple(refs),
                    depth=candidate_depth(limit) * 4,
                    filters=filters,
                )
            )
            fresh = []
            for match in archived:
                if match.archived.entry_id in seen:
                    continue  # the current version matched (or a better archived one did): older hits are dropped
                seen.add(match.archived.entry_id)
                fresh.append(match)
            # Archive-only hits are scored as lexical-only head hits of this search would be (RRF keeps its ranks).
            cal = self._core.indexer.calibration if self._core.indexer is not None else None
            scored = archived_scores(
                [(m.bm25, m.coverage) for m in fresh],
                [h.contributions for h in hits],
                coverage_power=cal.coverage_power if fused_dense and cal is not None else FTS_COVERAGE_POWER,
                vector_share=(cal.share() if cal is not None else 0.5) if fused_dense else None,
            )
            for rank, ((old, current, head, *_), (score, parts)) in enumerate(zip(fresh, scored, strict=True), 1):
                c = current.content
                out.append(
                    MemoryHit(
                        memory_ref=ArtifactRef(memory_id=old.memory_id, revision=old.created_in_revision),
                        entry_id=old.entry_id,
                        entry_version_id=old.entry_version_id,
                        text=old.content.text,
                        score=1.0 / (RRF_K + rank) if rrf else score,
                        matched_by=("fts",),
                        kind=c.kind,
                        title=old.content.title,
                        tags=c.tags,
                        important=c.important,
                        mandatory=c.mandatory,
                        entry_content_hash=old.entry_content_hash,
                        updated_at=current.provenance.created_at,
                        ranks={"archive": rank},
                        slug=c.slug,
                        scope=scope_of.get(head.memory_id),
                        superseded=True,
                        current_entry_version_id=current.entry_version_id,
                        contributions={} if rrf else parts,
                    )
                )
        shadowed: list[Shadowed] = []
        shadows: dict[EntryId, tuple[SlugHolder, SlugHolder]] = {}
        if precedence and len(refs) > 1:
            shadows = await self._shadows(refs, scope_of)
            kept = []
            for h in out:
                found = shadows.get(h.entry_id)
                if found is None:
                    kept.append(h)
                    continue
                holder, winner = found
                shadowed.append(
                    Shadowed(
                        memory_ref=h.memory_ref,
                        entry_id=h.entry_id,
                        kind=holder.kind,
                        slug=holder.slug,
                        scope=str(holder.scope),
                        shadowed_by=winner.entry_id,
                        shadowed_by_scope=str(winner.scope),
                    )
                )
            out = kept

        def ids(h: MemoryHit) -> tuple[bytes, bytes, bytes]:
            return (
                h.memory_ref.memory_id.encode("utf-8"),
                h.entry_id.encode("utf-8"),
                h.entry_version_id.encode("utf-8"),
            )

        if order == "priority":
            out = priority_sorted(
                out,
                category_of=lambda h: "mandatory" if h.mandatory else ("important" if h.important else "normal"),
                date_of=lambda h: h.updated_at,
                tiebreak=lambda h: (-h.score, *ids(h)),
            )
        else:
            out.sort(key=lambda h: (-h.score, *ids(h)))
            anchors = context_anchors(out, limit) if context else []
            if anchors:
                anchored = tuple((h.memory_ref, h.entry_id) for h in anchors)
                near = await self._core.backend.read(NeighboursQuery(anchors=anchored, filters=filters))
                out = with_context(out, near, limit, drop=frozenset(shadows))
        return tuple(out[:limit]), tuple(shadowed)


def _unavailable(mode: SearchMode, reason: str) -> CapabilityNotSupportedError:
    return CapabilityNotSupportedError(
        mode,
        f"{mode} search is unavailable: {reason}",
        hint="use mode='fts' or 'auto', or run `memstone embed --backfill` to complete the vectors",
    )


def _handed(task: asyncio.Future[tuple[float, ...]]) -> concurrent.futures.Future[tuple[float, ...]]:
    """``task``'s vector, error or cancellation, for an engine's worker thread to wait on (the event loop that
    computes it stays free: it only awaits that worker)."""
    handed: concurrent.futures.Future[tuple[float, ...]] = concurrent.futures.Future()

    def copy(done: asyncio.Future[tuple[float, ...]]) -> None:
        if done.cancelled():
            handed.cancel()
        elif (error := done.exception()) is not None:
            handed.set_exception(error)
        else:
            handed.set_result(done.result())

    task.add_done_callback(copy)
    return handed


def _early_vector(indexer: VectorIndexer | None, query: str) -> asyncio.Future[tuple[float, ...]] | None:
    """The query's vector under ``indexer``, started now; its error, if no one awaits it, is dropped with it."""
    if indexer is None:
        return None
    task = asyncio.ensure_future(indexer.query_vector(query))
    task.add_done_callback(lambda t: None if t.cancelled() else t.exception())
    return task


__all__ = ["Search"]
