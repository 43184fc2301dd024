"""The initial recall protocol: the mandatory tier in full, then what the task needs, within a token budget, with
the cross-links of what was recalled (links to entries the actor cannot read carry no content)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..domain.errors import (
    InvalidInput,
    NotFound,
    shown,
)
from ..domain.ids import EntryId
from ..domain.model import (
    ArtifactRef,
    EntryState,
    EntryVersion,
    MemoryHit,
    Relation,
    Revision,
    SearchMode,
)
from ..domain.records import (
    CrossLink,
    Omission,
    RecallBundle,
    Record,
    budget_note,
    cost,
    recall_text,
)
from ..domain.search import searchable
from ..ports import (
    LinksQuery,
    VersionsQuery,
)
from .core import (
    Order,
    ServiceCore,
)
from .records import Records
from .search import Search


def _link(
    direction: Literal["outgoing", "incoming"],
    source: EntryVersion,
    relation: Relation,
    other: EntryVersion | None,
    state: EntryState | Literal["missing"],
) -> CrossLink:
    """``source``'s relation as a cross-link; ``other`` is the entry at the far end from the recalled one."""
    return CrossLink(
        direction=direction,
        kind=relation.kind,
        source=source.entry_id,
        target=relation.target,
        other_title=other.content.title if other else None,
        other_kind=other.content.kind if other else None,
        other_state=state,
    )


class Recall:
    """Recall for a session or a task."""

    def __init__(self, core: ServiceCore, search: Search, records: Records) -> None:
        self._core = core
        self._search = search
        self._records = records

    async def recall(
        self,
        context: str | None = None,
        *,
        scopes: Sequence[str] = (),
        memories: Sequence[Revision | ArtifactRef | str] = (),
        budget_tokens: int | None = None,
        budget_chars: int | None = None,
        limit: int = 8,
        mode: SearchMode = "auto",
        order: Order = "priority",
    ) -> RecallBundle:
        """Session start in one call: every mandatory memory in full, then the contextual search (excluding the
        mandatory ones), within a token or character budget, in a deterministic order, saying what was left out.

        >>> bundle = await svc.recall("editing the docs", scopes=[project, user], budget_tokens=2000)  # doctest: +SKIP
        """
        if budget_tokens is not None and budget_chars is not None:
            raise InvalidInput("give a token budget or a character budget, not both")
        budget = budget_tokens if budget_tokens is not None else budget_chars
        unit: Literal["tokens", "chars"] = "chars" if budget_chars is not None else "tokens"
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 0):
            raise InvalidInput(f"a budget is a non-negative integer, got {shown(budget)}")
        if context is not None and not isinstance(context, str):
            raise InvalidInput("context must be a string")
        refs, _ = await self._core._select(scopes, memories, what="recall")
        omitted: list[Omission] = []
        used = 0

        def admit(x: Record | MemoryHit, section: Literal["mandatory", "contextual"]) -> bool:
            """Spend the budget on ``x`` if what is left holds it; else note it as left out for the budget."""
            nonlocal used
            spend = cost(recall_text(x.kind, x.title, x.text), unit)
            if budget is None or used + spend <= budget:
                used += spend
                return True
            omitted.append(Omission(entry_id=x.entry_id, section=section, reason="budget", cost=spend))
            return False

        loaded: list[Record] = []
        for record in await self._records.mandatory(memories=refs) if refs else ():
            if record.shadowed_by is not None:
                omitted.append(Omission(entry_id=record.entry_id, section="mandatory", reason="shadowed", cost=0))
            elif admit(record, "mandatory"):
                loaded.append(record)
        contextual: list[MemoryHit] = []
        used_mode = "none"
        if context is not None and searchable(context) and refs:  # a context of stopwords only matches nothing
            result = await self._search.search(
                context, memories=refs, limit=limit, mode=mode, order=order, exclude_mandatory=True
            )
            used_mode = result.mode
            contextual = [hit for hit in result.hits if admit(hit, "contextual")]
            for s in result.shadowed:
                omitted.append(Omission(entry_id=s.entry_id, section="contextual", reason="shadowed", cost=0))
        links = await self._links([r.version for r in loaded], contextual, refs)
        return RecallBundle(
            mandatory=tuple(loaded),
            contextual=tuple(contextual),
            links=links,
            omitted=tuple(omitted),
            budget=budget,
            unit=unit,
            used=used,
            mode=used_mode,
            note=budget_note(omitted, budget, unit, used),
        )

    async def _links(
        self, versions: Sequence[EntryVersion], hits: Sequence[MemoryHit], refs: Sequence[ArtifactRef]
    ) -> tuple[CrossLink, ...]:
        """Cross-links of recalled entries: their outgoing relations and the live entries that point at them."""
        current = {v.entry_id: v for v in versions}
        wanted = [h.current_entry_version_id or h.entry_version_id for h in hits]
        if wanted:
            found = await self._core.backend.read(VersionsQuery(memory_id=None, version_ids=tuple(wanted)))
            current.update({v.entry_id: v for v in found})
        links: list[CrossLink] = []
        for v in current.values():
            for r in v.content.relations:
                other, state = await self._peek(r.target)
                links.append(_link("outgoing", v, r, other, state))
        if current and refs:
            incoming = await self._core.backend.read(
                LinksQuery(memory_ids=tuple(r.memory_id for r in refs), targets=tuple(sorted(current)))
            )
            for _, v in incoming:
                for r in v.content.relations:
                    if r.target in current:
                        links.append(_link("incoming", v, r, v, "active"))
        unique = {(x.direction, x.kind, x.source, x.target): x for x in links}
        return tuple(unique[k] for k in sorted(unique))

    async def _peek(self, entry_id: EntryId) -> tuple[EntryVersion | None, EntryState | Literal["missing"]]:
        try:
            v = await self._core.get(entry_id)
        except NotFound:
            return None, "missing"
        head = await self._core.head(v.memory_id)
        return v, (await self._core._manifest_entry(head, entry_id)).state


__all__ = ["Recall"]
