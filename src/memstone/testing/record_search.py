"""Sections 4–7 of the record-surface suite: Graphit search and precedence, the initial recall, history you can
use, relations and aliases."""

from __future__ import annotations

import pytest

from ..domain.errors import AlreadyExists, InvalidInput, NotFound
from ..domain.ids import EntryId
from ..domain.model import ArtifactRef
from ..service import MemoryService
from .record_fixtures import (
    ORG,
    OTHER_ORG,
    PROJECT,
    USER,
    RecordFixtures,
    by_text,
    entry,
)


class SearchHistoryConformance(RecordFixtures):
    """Sections 4–7 of the record-surface suite (needs the ``svc`` and ``store_url`` fixtures)."""

    # ---------------------------------------------------------------- 4. search, the Graphit way, and precedence
    async def _three_tiers(self, svc: MemoryService) -> dict[str, EntryId]:
        """Every tier at once; one write per entry, so each has its own ``updated_at`` (t1 … t9)."""
        plan = [
            (ORG, entry("deploy deploy deploy deploy", "fact")),  # t1: the best text match, but normal
            (ORG, entry("deploy checklist", "convention", slug="deploy-checklist", mandatory=True)),  # t2
            (ORG, entry("deploy window is monday", "decision", slug="deploy-window", important=True)),  # t3
            (PROJECT, entry("deploy with uv", "convention", slug="deploy-tool")),  # t4
            (PROJECT, entry("deploy window is friday", "decision", slug="deploy-window")),  # t5 shadows t3
            (PROJECT, entry("never deploy on friday", "constraint", mandatory=True, important=True)),  # t6
            (USER, entry("I deploy with make", "convention", slug="deploy-tool", important=True)),  # t7 shadows t4
            (USER, entry("my own deploy checklist", "convention", slug="deploy-checklist")),  # t8 shadows t2
            (OTHER_ORG, entry("deploy window is sunday", "decision", slug="deploy-window", important=True)),  # t9
        ]
        ids: dict[str, EntryId] = {}
        for scope, item in plan:
            rev = await svc.remember(None, scope=scope, entries=[item])
            assert rev is not None
            ids[item.text] = rev.changes[0].entry_id
        return ids

    async def test_priority_order_and_precedence_exactly_as_the_seeds_state(self, store_url: str) -> None:
        async with self.ticking(store_url) as svc:
            ids = await self._three_tiers(svc)
            tiers = [ORG, PROJECT, USER, OTHER_ORG]
            result = await svc.search("deploy", scopes=tiers, mode="fts", order="priority", limit=20)
            # Category first (mandatory → important → normal), then updated_at descending; score never outranks.
            assert [h.text for h in result.hits] == [
                "never deploy on friday",  # mandatory (t6)
                "deploy window is sunday",  # important (t9)
                "I deploy with make",  # important (t7)
                "my own deploy checklist",  # normal (t8)
                "deploy window is friday",  # normal (t5)
                "deploy deploy deploy deploy",  # normal (t1), the best score
            ]
            # Most-specific-wins: user over project over org of the same kind and slug; reported, not dropped.
            assert {(s.entry_id, s.shadowed_by) for s in result.shadowed} == {
                (ids["deploy window is monday"], ids["deploy window is friday"]),
                (ids["deploy with uv"], ids["I deploy with make"]),
                (ids["deploy checklist"], ids["my own deploy checklist"]),
            }
            assert sorted((s.scope, s.shadowed_by_scope) for s in result.shadowed) == [
                (ORG, PROJECT),
                (ORG, USER),
                (PROJECT, USER),
            ]
            # top_k counts distinct memories after collapse and ordering: the best-scoring normal entry cannot
            # push out a mandatory or important one.
            top = await svc.search("deploy", scopes=tiers, mode="fts", order="priority", limit=3)
            assert [h.text for h in top.hits] == [
                "never deploy on friday",
                "deploy window is sunday",
                "I deploy with make",
            ]
            relevance = await svc.search("deploy", scopes=tiers, mode="fts", limit=1)
            assert [h.text for h in relevance.hits] == ["deploy deploy deploy deploy"]
            no_mandatory = await svc.search(
                "deploy", scopes=tiers, mode="fts", order="priority", exclude_mandatory=True
            )
            assert "never deploy on friday" not in [h.text for h in no_mandatory.hits]
            assert [h.text for h in no_mandatory.hits][:2] == ["deploy window is sunday", "I deploy with make"]
            # Without precedence every tier's entry comes back.
            everything = await svc.search("deploy", scopes=tiers, mode="fts", precedence=False, limit=20)
            assert len(everything.hits) == 9 and everything.shadowed == ()
            # Two tiers: only the project shadows its own org, never another org.
            two = await svc.search("window", scopes=[ORG, PROJECT, OTHER_ORG], mode="fts", limit=20)
            assert sorted(h.text for h in two.hits) == ["deploy window is friday", "deploy window is sunday"]
            # The catalogue keeps shadowed records and says by whom.
            listed = {r.text: r for r in await svc.list(scopes=tiers)}
            assert len(listed) == 9
            assert listed["deploy window is monday"].shadowed_by == ids["deploy window is friday"]
            assert listed["deploy window is monday"].shadowed_by_scope == PROJECT
            assert listed["deploy with uv"].shadowed_by_scope == USER
            assert listed["deploy checklist"].shadowed_by == ids["my own deploy checklist"]
            assert listed["deploy window is sunday"].shadowed_by is None
            assert [r.text for r in await svc.mandatory(scopes=tiers)] == ["never deploy on friday", "deploy checklist"]

    async def test_same_tier_scopes_never_shadow_each_other(self, svc: MemoryService) -> None:
        for scope in (PROJECT, "memstone://orgs/acme/projects/api", ORG, OTHER_ORG):
            await svc.remember(None, scope=scope, entries=[entry(f"tooling for {scope}", "convention", slug="tool")])
        both = await svc.search("tooling", scopes=[PROJECT, "memstone://orgs/acme/projects/api"], mode="fts")
        assert len(both.hits) == 2 and both.shadowed == ()
        orgs = await svc.search("tooling", scopes=[ORG, OTHER_ORG], mode="fts")
        assert len(orgs.hits) == 2 and orgs.shadowed == ()

    async def test_include_superseded_collapses_archived_versions_onto_their_entry(self, store_url: str) -> None:
        async with self.ticking(store_url) as svc:
            rev = await svc.remember(
                None, scope=PROJECT, entries=[entry("we deploy with fabric"), entry("builds use make")]
            )
            assert rev is not None
            ids = await by_text(svc, rev)
            rev = await svc.remember(rev, entries=[entry("we deploy with uv", entry=ids["we deploy with fabric"])])
            assert rev is not None
            rev = await svc.remember(
                rev, entries=[entry("we deploy with uv, always", entry=ids["we deploy with fabric"])]
            )
            assert rev is not None
            rev = await svc.remember(
                rev, entries=[entry("builds use just", entry=ids["builds use make"], important=True)]
            )
            assert rev is not None
            # Only the current version is searched by default.
            assert len(await svc.search("fabric", scopes=[PROJECT], mode="fts")) == 0
            # Only an archived version matched: one hit, superseded, carrying the current version.
            (hit,) = await svc.search("fabric", scopes=[PROJECT], mode="fts", include_superseded=True)
            current = await svc.get(hit.entry_id)
            assert hit.superseded and hit.text == "we deploy with fabric"
            # It is scored by the engine's BM25 like a lexical head hit (every engine ranks its archive).
            assert hit.contributions["bm25"] > 0 and 0 < hit.score <= 1
            assert hit.current_entry_version_id == current.entry_version_id != hit.entry_version_id
            (v,) = await svc.expand([hit])  # its anchor is exact: the Revision that wrote that version
            assert v.text == "we deploy with fabric"
            # The current version matched as well: the older hits are dropped.
            hits = await svc.search("deploy uv", scopes=[PROJECT], mode="fts", include_superseded=True)
            assert [(h.text, h.superseded) for h in hits] == [("we deploy with uv, always", False)]
            # Classification (and filters) use the current entry: make → just is important now.
            (make,) = await svc.search("make", scopes=[PROJECT], mode="fts", include_superseded=True, important=True)
            assert make.superseded and make.important and make.text == "builds use make"
            ordered = await svc.search(
                "deploy make", scopes=[PROJECT], mode="fts", include_superseded=True, order="priority", limit=1
            )
            assert [h.text for h in ordered] == ["builds use make"]  # important outranks normal, superseded or not
            # A forgotten entry's archive never matches (search returns only entries live at the head).
            rev = await svc.forget(rev, entries=[ids["we deploy with fabric"]])
            assert len(await svc.search("fabric", scopes=[PROJECT], mode="fts", include_superseded=True)) == 0
            assert (await svc.verify()).ok

    # ---------------------------------------------------------------- 5. the initial recall protocol
    async def test_recall_is_one_call_mandatory_in_full_then_context_within_a_budget(self, store_url: str) -> None:
        async with self.ticking(store_url) as svc:
            await self._three_tiers(svc)
            tiers = [ORG, PROJECT, USER]
            full = await svc.recall("deploy", scopes=tiers, mode="fts")
            assert [r.text for r in full.mandatory] == ["never deploy on friday"]
            assert {o.entry_id for o in full.omitted if o.reason == "shadowed"}  # the org checklist, reported
            assert "never deploy on friday" not in [h.text for h in full.contextual]  # exclude_mandatory
            assert [h.text for h in full.contextual][:1] == ["I deploy with make"]  # priority order
            assert full.budget is None and full.note.startswith("no budget")
            again = await svc.recall("deploy", scopes=tiers, mode="fts")
            assert again.to_dict() == full.to_dict()  # deterministic
            tight = await svc.recall("deploy", scopes=tiers, mode="fts", budget_chars=60)
            assert tight.used <= 60 and tight.unit == "chars"
            assert [r.text for r in tight.mandatory] == ["never deploy on friday"]
            left = [o for o in tight.omitted if o.reason == "budget"]
            assert left and all(o.section == "contextual" for o in left)
            assert "left out" in tight.note and left[0].entry_id in tight.note
            starved = await svc.recall("deploy", scopes=tiers, mode="fts", budget_tokens=1)
            assert starved.mandatory == () and starved.contextual == ()
            assert any(o.section == "mandatory" and o.reason == "budget" for o in starved.omitted)
            no_context = await svc.recall(scopes=tiers)
            assert [r.text for r in no_context.mandatory] == ["never deploy on friday"] and no_context.contextual == ()
            with pytest.raises(InvalidInput):
                await svc.recall("x", scopes=tiers, budget_chars=5, budget_tokens=5)
            with pytest.raises(InvalidInput):
                await svc.recall("x", scopes=tiers, budget_chars=-1)

    # ---------------------------------------------------------------- 6. history you can use
    async def test_chain_walk_marks_current_superseded_and_deleted(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, entries=[entry("one")], author="alice")
        assert rev is not None
        eid = rev.changes[0].entry_id
        rev2 = await svc.remember(rev, entries=[entry("two", entry=eid)], author="bob")
        assert rev2 is not None
        chain = await svc.history(eid)
        assert [(h.status, h.version.created_in_revision, h.version.provenance.author) for h in chain] == [
            ("superseded", 1, "alice"),
            ("current", 2, "bob"),
        ]
        await svc.forget(rev2, entries=[eid])
        chain = await svc.history(eid)
        assert [h.status for h in chain] == ["superseded", "deleted"] and chain[-1].next_version_id is None
        assert all(len(h.version.entry_content_hash) == 64 for h in chain)

    async def test_diff_revert_and_blame(self, svc: MemoryService) -> None:
        r1 = await svc.remember(
            None, scope=PROJECT, entries=[entry("line a\nline b", "fact", title="T", tags=["x"])], author="alice"
        )
        assert r1 is not None
        eid = r1.changes[0].entry_id
        r2 = await svc.remember(
            r1, entries=[entry("line a\nline c", "fact", title="T", tags=["x", "y"], entry=eid)], author="bob"
        )
        assert r2 is not None
        r3 = await svc.flag(r2, eid, mandatory=True)
        d = await svc.diff(f"{eid}@1", f"{eid}@3")
        assert {c.field for c in d.changes} == {"text", "tags", "mandatory"}
        tags = next(c for c in d.changes if c.field == "tags")
        assert tags.added == ("y",) and tags.removed == ()
        assert "-line b" in d.text_diff and "+line c" in d.text_diff
        assert (await svc.diff(eid)).to_dict()["changes"] == [{"field": "mandatory", "old": False, "new": True}]
        assert (await svc.diff(f"{eid}@1")).identical  # the first version against itself
        backwards = {c.field: (c.old, c.new) for c in (await svc.diff(f"{eid}@3", f"{eid}@1")).changes}
        assert backwards["text"] == ("line a\nline c", "line a\nline b") and backwards["mandatory"] == (True, False)
        other = await svc.remember(r3, entries=[entry("unrelated")])
        assert other is not None
        with pytest.raises(InvalidInput, match="different entries"):
            await svc.diff(eid, other.changes[0].entry_id)
        with pytest.raises(NotFound):
            await svc.diff(f"{eid}@9")
        blame = {b.field: b for b in await svc.blame(eid)}
        assert (blame["text"].version, blame["text"].author) == (2, "bob")
        assert (blame["title"].version, blame["title"].author) == (1, "alice")
        assert blame["mandatory"].version == 3 and blame["mandatory"].value is True
        assert {b.field: b.version for b in await svc.blame(f"{eid}@1")}["text"] == 1
        r4 = await svc.revert(other, eid, 1)
        now = await svc.get(eid)
        assert now.version == 4 and now.text == "line a\nline b" and now.content.tags == ("x",)
        assert now.entry_content_hash == (await svc.version(f"{eid}@1")).entry_content_hash  # same content exactly
        assert r4.changes[0].reason == "revert" and len(await svc.history(eid)) == 4  # history only grows
        assert await svc.revert(r4, eid, 4) == r4  # reverting to the current content is a no-op

    async def test_point_in_time_reads_of_a_memory_at_any_revision(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, scope=PROJECT, entries=[entry("alpha"), entry("beta")])
        assert r1 is not None
        ids = await by_text(svc, r1)
        r2 = await svc.remember(r1, entries=[entry("alpha 2", entry=ids["alpha"])])
        assert r2 is not None
        r3 = await svc.forget(r2, entries=[ids["beta"]])
        at = {
            n: sorted(r.text for r in await svc.list(memories=[ArtifactRef(memory_id=r1.memory_id, revision=n)]))
            for n in (1, 2, 3)
        }
        assert at == {1: ["alpha", "beta"], 2: ["alpha 2", "beta"], 3: ["alpha 2"]}
        then = await svc.list(memories=[r1], include_inactive=True)
        assert all(r.memory_ref == r1.ref for r in then)
        assert (await svc.get(ids["alpha"], memory=r1)).text == "alpha"
        assert sorted(v.text for v in await svc.entries(r3, include_inactive=True)) == ["alpha 2", "beta"]

    # ---------------------------------------------------------------- 7. relations and aliases
    async def test_relations_are_versioned_content_and_recall_surfaces_cross_links(self, svc: MemoryService) -> None:
        rev = await svc.remember(
            None,
            scope=PROJECT,
            entries=[
                entry("retry only idempotent calls", "lesson", slug="retry", mandatory=True),
                entry("wrap calls in a retry helper", "pattern", slug="retry-helper"),
                entry("the user said: never retry payments", "correction", slug="no-payment-retry"),
            ],
        )
        assert rev is not None
        ids = await by_text(svc, rev)
        lesson, pattern, correction = (
            ids["retry only idempotent calls"],
            ids["wrap calls in a retry helper"],
            ids["the user said: never retry payments"],
        )
        r2 = await svc.relate(rev, pattern, lesson, "relates-to")
        r3 = await svc.relate(r2, correction, lesson, "clarifies")
        assert [c.reason for c in r3.changes] == ["relate"]
        assert (await svc.get(pattern)).version == 2  # a relation is content: a new version
        assert await svc.relate(r3, correction, lesson, "clarifies") == r3  # already there: no-op
        with pytest.raises(InvalidInput):
            await svc.relate(r3, lesson, lesson)
        with pytest.raises(InvalidInput):
            await svc.relate(r3, lesson, pattern, "Not Kebab")
        with pytest.raises(NotFound):
            await svc.relate(r3, lesson, "ent_00000000000000000000000000")
        bundle = await svc.recall(scopes=[PROJECT])
        assert [r.entry_id for r in bundle.mandatory] == [lesson]
        assert {(x.direction, x.kind, x.source, x.target) for x in bundle.links} == {
            ("incoming", "relates-to", pattern, lesson),
            ("incoming", "clarifies", correction, lesson),
        }
        hits = await svc.recall("helper", scopes=[PROJECT], mode="fts")
        assert ("outgoing", "relates-to", pattern, lesson) in {
            (x.direction, x.kind, x.source, x.target) for x in hits.links
        }
        r4 = await svc.unrelate(r3, pattern, lesson, "relates-to")
        assert (await svc.get(pattern)).content.relations == ()
        assert r4.revision == r3.revision + 1

    async def test_supersedes_can_deactivate_its_target_in_the_same_revision(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, scope=PROJECT, entries=[entry("deploy with fabric"), entry("deploy with uv")])
        assert rev is not None
        ids = await by_text(svc, rev)
        r2 = await svc.relate(
            rev, ids["deploy with uv"], ids["deploy with fabric"], "supersedes", deactivate_target=True
        )
        assert r2.revision == rev.revision + 1
        assert sorted((c.op, c.reason) for c in r2.changes) == [("deactivate", "superseded"), ("revise", "relate")]
        assert [h.text for h in await svc.search("deploy", scopes=[PROJECT], mode="fts")] == ["deploy with uv"]
        with pytest.raises(InvalidInput, match="supersedes"):
            await svc.relate(r2, ids["deploy with uv"], ids["deploy with fabric"], "clarifies", deactivate_target=True)
        elsewhere = await svc.remember(None, scope=USER, entries=[entry("mine")])
        assert elsewhere is not None
        with pytest.raises(InvalidInput, match="not"):
            await svc.relate(
                r2, ids["deploy with uv"], elsewhere.changes[0].entry_id, "supersedes", deactivate_target=True
            )
        cross = await svc.relate(r2, ids["deploy with uv"], elsewhere.changes[0].entry_id, "relates-to")
        assert cross.revision == r2.revision + 1  # relations may cross Memories (Xema: scoped to the org)

    async def test_a_renamed_slug_leaves_an_alias_that_redirects_reads(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, scope=PROJECT, entries=[entry("retry with backoff", "lesson", slug="retry")])
        assert rev is not None
        eid = rev.changes[0].entry_id
        r2 = await svc.rename(rev, eid, "retry-backoff")
        assert r2.changes[0].reason == "rename"
        assert (await svc.lookup(PROJECT, kind="lesson", slug="retry")).entry_id == eid
        assert (await svc.lookup(PROJECT, kind="lesson", slug="retry-backoff")).slug == "retry-backoff"
        # A live entry that takes the old slug wins over the alias.
        r3 = await svc.remember(r2, entries=[entry("a new retry lesson", "lesson", slug="retry")])
        assert r3 is not None
        assert (await svc.lookup(PROJECT, kind="lesson", slug="retry")).text == "a new retry lesson"
        r4 = await svc.rename(r3, eid, None)
        assert (await svc.get(eid)).content.slug is None
        assert (await svc.lookup(PROJECT, kind="lesson", slug="retry-backoff")).entry_id == eid
        with pytest.raises(AlreadyExists):
            await svc.rename(r4, eid, "retry")


__all__ = ["SearchHistoryConformance"]
