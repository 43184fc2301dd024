"""Neighbour context in search (issue 15, ``domain/context.py``): the entries written next to a strong hit in its
Memory come right after the first seven hits, cited exactly, on every backend."""

from __future__ import annotations

from ..domain.model import EntryPatch, Revision
from ..service import MemoryService
from .record_fixtures import PROJECT, USER, RecordFixtures, by_text, entry

# A conversation: the answer shares no word with the question it answers, so only its neighbour finds it.
TURNS = [
    "we should book the venue for the offsite soon",
    "which weekend did the committee pick for the lighthouse excursion?",
    "yes, the second Saturday of March",
    "ok noted, thanks",
    "the printer on floor three jams again",
    "I will file a ticket with facilities",
]
QUESTION, ANSWER = TURNS[1], TURNS[2]


class SearchContextConformance(RecordFixtures):
    """Neighbour context (needs the ``svc`` fixture)."""

    async def _turns(self, svc: MemoryService, *, one_by_one: bool = True, scope: str = PROJECT) -> Revision:
        head: Revision | None = None
        if one_by_one:
            for text in TURNS:
                head = await svc.remember(head, scope=scope if head is None else None, entries=[entry(text, "note")])
        else:
            head = await svc.remember(None, scope=scope, entries=[entry(t, "note") for t in TURNS])
        assert head is not None
        return head

    async def test_a_turn_is_found_through_the_question_it_answers(self, svc: MemoryService) -> None:
        for one_by_one, scope in ((True, PROJECT), (False, USER)):
            head = await self._turns(svc, one_by_one=one_by_one, scope=scope)
            ids = await by_text(svc, head)
            plain = await svc.search("lighthouse excursion weekend", memories=[head], mode="fts")
            assert [h.text for h in plain.hits] == [QUESTION]
            result = await svc.search(
                "lighthouse excursion weekend", memories=[head], mode="fts", limit=10, context=True
            )
            # The question keeps rank 1; the turns written just before and after it follow, in that order.
            assert [h.text for h in result.hits] == [QUESTION, TURNS[0], ANSWER]
            question, before, answer = result.hits
            assert question.matched_by == ("fts",) and "context" not in question.contributions
            for h in (before, answer):
                assert h.matched_by == ("context",) and h.ranks == {"context": 1}
                assert h.contributions == {"context": question.score}
                assert h.memory_ref == head.ref and h.scope == scope
            assert 1.0 >= question.score > before.score > answer.score > 0.0
            # The neighbour's text and citation are its own, exactly.
            (version,) = await svc.expand([answer])
            assert version.entry_id == ids[ANSWER] == answer.entry_id and version.text == ANSWER
            assert version.entry_version_id == answer.entry_version_id

    async def test_no_context_within_the_first_seven_or_under_a_filter(self, svc: MemoryService) -> None:
        head = await self._turns(svc)
        for limit in (1, 7):
            result = await svc.search(
                "lighthouse excursion weekend", memories=[head], mode="fts", limit=limit, context=True
            )
            assert [h.text for h in result.hits] == [QUESTION]
        ids = await by_text(svc, head)
        head = (await svc.update(ids[TURNS[0]], EntryPatch(kind="decision"))).revision
        result = await svc.search(
            "lighthouse excursion weekend", memories=[head], mode="fts", kinds=["note"], limit=10, context=True
        )
        assert [h.text for h in result.hits] == [QUESTION, ANSWER]  # the decision before it is filtered out
        result = await svc.search(
            "lighthouse excursion weekend", memories=[head], mode="fts", order="priority", limit=10, context=True
        )
        assert [h.text for h in result.hits] == [QUESTION]  # priority order ranks categories, not context

    async def test_a_deleted_neighbour_gives_way_to_the_next_written_entry(self, svc: MemoryService) -> None:
        head = await self._turns(svc)
        ids = await by_text(svc, head)
        head = await svc.forget(head, entries=[ids[ANSWER]])
        result = await svc.search("lighthouse excursion weekend", memories=[head], mode="fts", limit=10, context=True)
        assert [h.text for h in result.hits] == [QUESTION, TURNS[0], TURNS[3]]
        assert ANSWER not in [h.text for h in result.hits]

    async def test_a_matching_neighbour_moves_up_and_keeps_its_channels(self, svc: MemoryService) -> None:
        head: Revision | None = None
        texts = [f"lighthouse logbook page {i}" for i in range(12)]
        for t in texts:
            head = await svc.remember(head, scope=PROJECT if head is None else None, entries=[entry(t, "note")])
        assert head is not None
        plain = await svc.search("lighthouse logbook", memories=[head], mode="fts", limit=10)
        result = await svc.search("lighthouse logbook", memories=[head], mode="fts", limit=10, context=True)
        assert [h.entry_id for h in result.hits[:7]] == [h.entry_id for h in plain.hits[:7]]
        assert len(result.hits) == 10 and len({h.entry_id for h in result.hits}) == 10
        scores = [h.score for h in result.hits]
        assert scores == sorted(scores, reverse=True) and all(0.0 < s <= 1.0 for s in scores)
        for h in result.hits[7:]:
            if "context" in h.matched_by:
                assert h.matched_by == ("fts", "context") and h.contributions["bm25"] > 0
