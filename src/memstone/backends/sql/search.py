"""Search over the head projection, written once: FTS and vector candidates, admission, fusion, collapse onto
the authoritative manifest (every hit is re-checked against the head's manifest and its committed hash)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from itertools import islice
from typing import Literal, NamedTuple

from ...context_query import NeighboursQuery
from ...domain.analyzer import informative_terms, query_terms
from ...domain.calibration import FTS_COVERAGE_POWER
from ...domain.errors import ArtifactNotFoundError, CapabilityNotSupportedError, InvalidInput
from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.model import ArtifactRef, EntryContent, EntryVersion, MemoryHit, Revision
from ...domain.search import (
    Candidate,
    Fused,
    admit_dense,
    candidate_depth,
    convex_fuse,
    dense_bar,
    fts_required_terms,
    l2_to_cosine,
    lexical_fused,
    matched_shares,
    rrf_fuse,
    support_terms,
)
from ...domain.trusted import search_hit
from ...ports import SearchPage, SearchRequest
from .engine import Candidates, FtsRow, ReadEnded
from .parts import StoreParts
from .routes import Route
from .vectors import VectorCandidate, VectorPart, window_depth

# A hit's ``matched_by``: the channels that ranked it ("fts" in ranks, "vector" in ranks), in channel order.
_MATCHED_BY: dict[tuple[bool, bool], tuple[Literal["fts", "vector"], ...]] = {
    (True, True): ("fts", "vector"),
    (True, False): ("fts",),
    (False, True): ("vector",),
    (False, False): (),
}


class HitRow(NamedTuple):
    """What a search hit shows of an entry version, read from its authoritative (append-only) version row.

    It carries the whole hashed content, so the search re-checks the bytes it serves against the hash the
    head's manifest committed to (RFC "Search and reads", condition 3).
    """

    entry_id: EntryId
    entry_version_id: EntryVersionId
    content: EntryContent
    entry_content_hash: str
    created_at: str

    @classmethod
    def of(cls, v: EntryVersion) -> HitRow:
        return cls(v.entry_id, v.entry_version_id, v.content, v.entry_content_hash, v.provenance.created_at)


class _RawHit(NamedTuple):
    """A version row as read for a hit: its content columns still raw, decoded only once they are verified."""

    entry_id: EntryId
    entry_version_id: EntryVersionId
    columns: tuple[object, ...]
    entry_content_hash: str
    created_at: str


class SearchPart:
    def __init__(self, parts: StoreParts, vectors: VectorPart) -> None:
        self.p = parts
        self.vectors = vectors

    def _hit_rows(self, memory_id: MemoryId, version_ids: Sequence[str]) -> list[_RawHit]:
        return [_RawHit(*r) for r in self.p.rows.hit_rows(memory_id, version_ids)]

    def _fts_candidates(
        self, memory_ids: Sequence[str], terms: Sequence[str], depth: int, request: SearchRequest
    ) -> list[FtsRow]:
        """Top ``depth`` head rows matching any of ``terms`` by the engine's ranking, each with its text.

        The text is read for the top rows only: a ranked statement would materialize every matching row's text
        before its LIMIT (a common word matches thousands of long entries).
        """
        rows = self.p.engine.fts.head_candidates(self.p.engine.conn, self._fts_ask(memory_ids, terms, depth, request))
        missing = [r.key for r in rows if r.text is None]
        if not missing:
            return rows
        texts = self.p.proj.head_texts(missing)
        return [r._replace(text=texts.get(r.key, "")) if r.text is None else r for r in rows]

    def _fts_ask(
        self, memory_ids: Sequence[str], terms: Sequence[str], depth: int, request: SearchRequest
    ) -> Candidates:
        where = [f"h.memory_artifact_id IN ({self.p.engine.dialect.marks(len(memory_ids))})"]
        args: list[object] = list(memory_ids)
        self.p.proj.filters(request.filters, where, args)
        # A lexical-only page ranks its candidates by score and matched terms alone (``lexical_fused``, ``rrf_fuse``)
        page = request.limit if request.channels == ("fts",) else None
        return Candidates(memory_ids, terms, depth, where, args, page)

    def _prefetch_fts(self, request: SearchRequest) -> None:
        """Before the search's first statement: let the engine's full-text dialect send its ranking statement with
        it (an optional ``prefetch(conn, ask)``; PostgreSQL saves a round trip), for the Memories the request names
        (the same ``memory_ids`` the heads give, or the search fails before it reads the candidates)."""
        prefetch = getattr(self.p.engine.fts, "prefetch", None)
        informative = informative_terms(query_terms(request.query)) if prefetch is not None else ()
        named = sorted({*(r.memory_id for r in request.memories), *request.heads})
        if prefetch is not None and informative and named:
            prefetch(self.p.engine.conn, self._fts_ask(named, informative, candidate_depth(request.limit), request))

    def _lexical_support(self, memory_ids: Sequence[str], request: SearchRequest) -> bool:
        """Whether a word of the query (or one sharing its first letters) occurs in these Memories, under the
        request's filters: below the no-match bar, that keeps the dense hits of a weak but real query."""
        exact, prefixes = support_terms(
            informative_terms(query_terms(request.query)), request.calibration.support_prefix
        )
        if not exact and not prefixes:
            return False
        where = [f"h.memory_artifact_id IN ({self.p.engine.dialect.marks(len(memory_ids))})"]
        args: list[object] = list(memory_ids)
        self.p.proj.filters(request.filters, where, args)
        fts = self.p.engine.fts
        # An engine's FullText may answer with prefixes too (SQLite's ``head_any``); otherwise exact terms only.
        head_any = getattr(fts, "head_any", None)
        if head_any is not None:
            return bool(head_any(self.p.engine.conn, exact, prefixes, where, args))
        return bool(exact) and bool(
            fts.head_candidates(self.p.engine.conn, Candidates(memory_ids, exact, 1, where, args))
        )

    def heads(self, request: SearchRequest) -> dict[str, Revision]:
        """The head Revision of every Memory searched, read inside the search's own read transaction.

        ``request.memories`` must still be current; ``request.heads`` are taken at whatever their head is now,
        so a writer committing between the caller's resolve and this read never fails the search (issue 12).
        """
        heads: dict[str, Revision] = {}
        for ref in request.memories:
            head = self.p.rows.head(ref.memory_id)
            if head is None:
                raise ArtifactNotFoundError(f"no memory {ref.memory_id}")
            if head.revision != ref.revision:
                raise CapabilityNotSupportedError(
                    "non-head-search",
                    f"{ref} is not the current head of {ref.memory_id} (head is revision {head.revision})",
                    hint="search takes current heads only; read the head and search it",
                )
            heads[ref.memory_id] = head
        for mid in request.heads:
            if mid in heads:
                continue
            head = self.p.rows.head(mid)
            if head is None:
                raise ArtifactNotFoundError(f"no memory {mid}")
            heads[mid] = head
        return heads

    def search_sync(self, request: SearchRequest) -> SearchPage:
        one_trip = getattr(self.p.engine, "read_one_trip", None)
        if one_trip is not None and self._one_trip(request):
            try:
                return self._search(request, one_trip)
            except ReadEnded:
                pass  # it needed more than its first trip (a manifest node not yet read, a filter's ranked join)
        return self._search(request, self.p.engine.read_txn)

    def _one_trip(self, request: SearchRequest) -> bool:
        """Whether a search may end its read transaction with its first trip (an engine's ``read_one_trip``): an FTS
        search of Memories whose head Revisions this process holds (its first trip reads the heads, the ranking and
        the hits' versions; the manifest nodes of a Revision it wrote or read are most likely held too). For a head
        named by id, the newest Revision of it this process has seen: when another process has written since, the
        search runs again."""
        return (
            request.channels == ("fts",)
            and bool(request.memories or request.heads)
            and all(self.p.rows.holds(r.memory_id, r.revision) for r in request.memories)
            and all((n := self.p.rows.newest(m)) is not None and self.p.rows.holds(m, n) for m in request.heads)
        )

    def _search(self, request: SearchRequest, txn: Callable[[], AbstractContextManager[None]]) -> SearchPage:
        request = _given_if_done(request)
        later = request.query_vector_later  # a hybrid search's query vector still being computed
        vector_due = request.query_vector is not None or later is not None
        with txn():
            beside = {"fts", "vector"} <= set(request.channels) and vector_due and not request.exact
            if beside:
                self.vectors.share()  # a hybrid search: its scan may run beside the FTS statement (``begin``)
            if "fts" in request.channels and not (beside and request.query_vector is not None):
                self._prefetch_fts(request)  # with the first statement (a late query vector: while the model embeds)
            elif request.channels == ("vector",) and request.query_vector is not None and not request.exact:
                named = sorted({*(r.memory_id for r in request.memories), *request.heads})
                k = window_depth(_vector_depth(request))
                self.vectors.prefetch(named, request.query_vector, k)  # with the heads' statement, if it can
            heads = self.heads(request)
            memory_ids = sorted(heads)
            if request.check_vectors:
                # In this snapshot, with the heads just read: the org profiles the route is chosen by (and the
                # service's next route, ``state.org_profiles``), and each Memory's vector completeness (cached by
                # head revision and vector generation, so a warm check costs no statement).
                self.p.org_profiles = profiles = self.vectors.routes.org_profiles()
                incomplete = tuple(MemoryId(m) for m in memory_ids if not self.vectors.complete(MemoryId(m), profiles))
                if incomplete:
                    return SearchPage(hits=(), heads=tuple(heads[m].ref for m in memory_ids), incomplete=incomplete)
            depth = candidate_depth(request.limit)
            begun = route = None
            if "vector" in request.channels and vector_due:
                request = _given_if_done(request)  # computed while the reads above ran: the channels run at once
                route = self.vectors.search_route(
                    memory_ids, request.query_vector, request.query_profile
                )  # the org's table, or the store's (a late vector's profile is checked now, its length later)
            if "fts" in request.channels and route is not None and request.query_vector is not None:
                # Hybrid: the vector scan runs while the FTS statement does (both release the GIL; PostgreSQL runs it
                # on a second connection in this transaction's snapshot).
                begun = (
                    None
                    if request.exact
                    else self.vectors.begin(memory_ids, request.query_vector, window_depth(depth), route)
                )
            fts: list[tuple[Candidate, float, float]] | None = None
            if "fts" in request.channels:
                terms = query_terms(request.query)
                informative = informative_terms(terms)
                required = fts_required_terms(terms) / max(1, len(informative))
                fts = []
                if informative:
                    # Only informative terms reach MATCH; each row's matched share is both its admission (the
                    # RFC's coverage) and its per-candidate confidence in the fusion.
                    rows = self._fts_candidates(memory_ids, informative, depth, request)
                    shares = matched_shares(informative, [row.text or "" for row in rows])
                    bar = required - 1e-9
                    fts = [
                        (Candidate(row.memory_id, row.entry_id, row.entry_version_id), row.score, share)
                        for row, share in zip(rows, shares, strict=True)
                        if share >= bar
                    ]
            if route is not None and request.query_vector_later is not None:
                # The FTS statement ran while the model embedded the query: the vector channel waits for it here (its
                # error, or its cancellation, is the search's; nothing was served).
                vector = request.query_vector_later.result()
                self.vectors.check_query(route, vector)
                request = replace(request, query_vector=vector, query_vector_later=None)
            vec: list[tuple[Candidate, float]] | None = None
            more = False
            near = _vector_depth(request)
            if "vector" in request.channels:
                vec, more = self._dense(memory_ids, request, near, fts, begun, route)
            found = self._found(heads, request, fts, vec)
            if more and near < depth and len(found) < request.limit:
                # The nearest windows of a vector search ran out before ``limit`` verified hits while more exist:
                # the channel again at every search's candidate depth (so the hits are those that depth gives).
                vec, _ = self._dense(memory_ids, request, depth, fts, None, route)
                found = self._found(heads, request, fts, vec)
            # Each hit carries its Memory's scope, read here in the search's own read transaction.
            bound = self.p.rows.scopes_of(sorted({f.candidate.memory_id for f, _ in found})) if found else {}
            refs = {mid: heads[mid].ref for mid in memory_ids}
            hits = tuple(
                self._hit(refs[mid], row, f.score, f.ranks, f.parts, bound.get(mid))
                for f, row in found
                for mid in (f.candidate.memory_id,)
            )
            return SearchPage(hits=hits, heads=tuple(refs.values()))

    def _dense(
        self,
        memory_ids: Sequence[str],
        request: SearchRequest,
        depth: int,
        fts: list[tuple[Candidate, float, float]] | None,
        begun: Callable[[], list[VectorCandidate]] | None,
        route: Route | None,
    ) -> tuple[list[tuple[Candidate, float]], bool]:
        """The vector channel's admitted (candidate, cosine) list, nearest first, and whether a deeper read could
        admit more: the nearest windows filled their depth and admission cut none of them (it cuts by a floor on the
        cosine, or all of them for a query that matches nothing: a deeper read would not add any)."""
        if request.query_vector is None:
            raise InvalidInput("vector search needs a query vector")
        cal = request.calibration
        found, more = self.vectors.nearest(memory_ids, request.query_vector, depth, request, begun, route)
        admitted = admit_dense(
            [(Candidate(vc.memory_id, vc.entry_id, vc.entry_version_id), l2_to_cosine(vc.distance)) for vc in found],
            floor=cal.vector_min_cosine,
            min_top=dense_bar(query_terms(request.query), cal.vector_min_top, cal.prose_bar),
            supported=lambda: bool(fts) or self._lexical_support(memory_ids, request),
        )
        return admitted, more and len(admitted) == len(found)

    def _found(
        self,
        heads: dict[str, Revision],
        request: SearchRequest,
        fts: list[tuple[Candidate, float, float]] | None,
        vec: list[tuple[Candidate, float]] | None,
    ) -> list[tuple[Fused, HitRow]]:
        """The first ``limit`` fused candidates that pass the re-check against their head's manifest."""
        fused = iter(self._fuse(request, fts, vec, request.calibration.vector_min_cosine))
        found: list[tuple[Fused, HitRow]] = []
        while len(found) < request.limit:
            batch = list(islice(fused, request.limit))  # the next candidates, verified together
            if not batch:
                break
            verified = self._verified(heads, [f.candidate for f in batch])
            for f in batch:
                row = verified.get(f.candidate)
                if row is None:
                    continue
                found.append((f, row))
                if len(found) >= request.limit:
                    break
        return found

    def _verified(self, heads: dict[str, Revision], cands: Sequence[Candidate]) -> dict[Candidate, HitRow]:
        """The candidates whose version the head's manifest holds, active, with bytes hashing to its commitment.

        A projection row that disagrees with the authoritative manifest never reaches a caller (RFC "Search and
        reads", condition 3): a tampered version row is skipped here; `verify` reports it.
        """
        by_memory: dict[str, list[Candidate]] = {}
        for cand in cands:
            by_memory.setdefault(cand.memory_id, []).append(cand)
        out: dict[Candidate, HitRow] = {}
        for mid, group in by_memory.items():
            loaded: dict[str, _RawHit] = {
                r.entry_version_id: r for r in self._hit_rows(MemoryId(mid), [c.entry_version_id for c in group])
            }
            manifest = self.p.manifests.rows_many(heads[mid].manifest_root, [c.entry_id for c in group])
            for cand in group:
                m = manifest.get(cand.entry_id)  # [entry_id, version_id, content_hash, state]
                raw = loaded.get(cand.entry_version_id)
                if m is None or m[3] != "active" or m[1] != cand.entry_version_id:
                    continue
                if raw is None or raw.entry_id != cand.entry_id or raw.entry_content_hash != m[2]:
                    continue
                content = self.p.verified_content(cand.entry_version_id, raw.columns, m[2])
                if content is not None:
                    out[cand] = HitRow(
                        raw.entry_id, raw.entry_version_id, content, raw.entry_content_hash, raw.created_at
                    )
        return out

    def neighbours_sync(self, query: NeighboursQuery) -> list[tuple[EntryId, MemoryHit]]:
        """The entries written next to each anchor (ports.NeighboursQuery), in the caller's read transaction."""
        heads: dict[str, Revision] = {}
        for ref, _ in query.anchors:
            head = self.p.rows.head(ref.memory_id)
            if head is not None and head.revision == ref.revision:
                heads[ref.memory_id] = head
        found: list[tuple[EntryId, Candidate]] = []
        for ref, anchor in query.anchors:
            if ref.memory_id not in heads:
                continue
            for op, direction in (("<", "DESC"), (">", "ASC")):
                rows = self.p.proj.q(
                    "SELECT entry_id, entry_version_id FROM memory_entry_heads "
                    f"WHERE memory_artifact_id = ? AND entry_id {op} ? ORDER BY entry_id {direction} LIMIT 1",
                    (ref.memory_id, anchor),
                )
                found += [(anchor, Candidate(ref.memory_id, EntryId(e), EntryVersionId(v))) for e, v in rows]
        verified = self._verified(heads, [c for _, c in found])
        out = []
        for anchor, cand in found:
            row = verified.get(cand)
            if row is None or not query.filters.passes(row.content):
                continue
            hit = self._hit(heads[cand.memory_id].ref, row, 0.0, {}, {})
            out.append((anchor, hit))
        return out

    @staticmethod
    def _fuse(
        request: SearchRequest,
        fts: list[tuple[Candidate, float, float]] | None,
        vec: list[tuple[Candidate, float]] | None,
        floor: float,
    ) -> Iterable[Fused]:
        """The request's fusion over the admitted channel lists (domain/search.py holds both rules)."""
        if request.fusion == "rrf":
            channels = {"fts": [c for c, *_ in fts or ()], "vector": [c for c, _ in vec or ()]}
            chosen: dict[str, Sequence[Candidate]] = {k: v for k, v in channels.items() if k in request.channels}
            return [Fused(c, score, ranks, {"fusion": score}) for c, score, ranks in rrf_fuse(chosen)]
        if vec is None:
            return lexical_fused(fts or (), FTS_COVERAGE_POWER)  # convex_fuse's lexical-only order, built as taken
        cal = request.calibration
        hybrid = fts is not None
        return convex_fuse(
            fts,
            vec,
            vector_share=cal.share(),
            coverage_power=cal.coverage_power if hybrid else FTS_COVERAGE_POWER,
            cosine_floor=floor,
        )

    @staticmethod
    def _hit(
        ref: ArtifactRef,
        row: HitRow,
        score: float,
        ranks: dict[str, int],
        parts: dict[str, float],
        scope: str | None = None,
    ) -> MemoryHit:
        return search_hit(
            ref,
            row.entry_id,
            row.entry_version_id,
            row.content,
            score,
            _MATCHED_BY["fts" in ranks, "vector" in ranks],
            row.entry_content_hash,
            row.created_at,
            ranks,
            scope,
            parts,
        )


def _given_if_done(request: SearchRequest) -> SearchRequest:
    """``request`` with its late query vector as if given up front once it is computed; a failed one stays late, so
    its error is raised where the vector channel waits for it (after the completeness check, as the service would)."""
    later = request.query_vector_later
    if later is None or not later.done() or later.cancelled() or later.exception() is not None:
        return request
    return replace(request, query_vector=later.result(), query_vector_later=None)


def _vector_depth(request: SearchRequest) -> int:
    """The entries the vector channel fetches first. A vector search with no filter ranks its entries by their
    nearest window alone, so its first ``limit`` entries are the first ``limit`` of a deeper list (``_found`` goes
    deeper when verification leaves fewer); fusion (hybrid) and filters need every search's candidate depth."""
    if request.channels == ("vector",) and not request.exact and not request.filters.active:
        return request.limit
    return candidate_depth(request.limit)


__all__ = ["HitRow", "SearchPart"]
