"""Applying one proposal through the service's normal write path (the path agents write through).

Each proposal is one Revision (``merge``, ``forget``, ``rename``, ``flag``, an update, or for a summary a new
entry written by ``remember``), so the service's validation,
secret refusal, grants, hashes, embeddings and audit apply unchanged, and a crash leaves a proposal either
wholly applied or not at all. Before it writes, the proposal's content hashes are compared with the entries'
current ones: any difference is ``SKIPPED_HASH_MISMATCH``, final for that proposal (the next run lists the
changed entries again). A lost race with another writer re-reads the head and re-checks (the service's retry).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..domain.ids import EntryId
from ..domain.maintenance import STALE_TAG, Proposal
from ..domain.model import EntryInput, EntryPatch, ManifestEntry, Relation, Revision
from .evidence import SUMMARIZES

if TYPE_CHECKING:
    from ..service import MemoryService

BARE_DELETE_REFUSED = "a bare delete never removes an important or mandatory entry"


async def apply_proposal(
    svc: MemoryService, proposal: Proposal, *, at: str, resumed: bool = False
) -> tuple[Proposal, dict[EntryId, str]]:
    """Write one proposal; returns it decided (APPLIED, SKIPPED_HASH_MISMATCH or REJECTED) and the content hashes
    of the entries it left active (what the ledger records as seen by this pass).

    ``resumed``: the proposal belongs to a run whose process stopped mid-apply. Its Revision may have committed
    before the decision was recorded; when the memory shows the proposal's effect, it is recorded APPLIED (at
    the head) instead of SKIPPED_HASH_MISMATCH, and nothing is written twice."""
    if proposal.informational:
        return proposal, {}

    async def attempt() -> tuple[Proposal, dict[EntryId, str]]:
        head = await svc.head(proposal.memory_id)
        manifest = await svc.manifest(head)
        for entry_id, expected in proposal.hashes:
            m = manifest.get(entry_id)
            if m is None or m.state != "active" or m.entry_content_hash != expected:
                if resumed and await _effect_present(svc, proposal, manifest, head):
                    seen = {
                        e: manifest[e].entry_content_hash
                        for e in proposal.entries
                        if e in manifest and manifest[e].state == "active"
                    }
                    result = f"{head.memory_id}@{head.revision} (found applied: its run stopped before recording it)"
                    return proposal.decided("APPLIED", result=result, at=at), seen
                why = "inactive" if m is not None and m.state != "active" else "changed"
                result = f"{entry_id} {why} since the proposal was made"
                return proposal.decided("SKIPPED_HASH_MISMATCH", result=result, at=at), {}
        if proposal.action == "summarize" and (found := await _summary_of(svc, proposal, head)) is not None:
            # Trigger: the summary is live already (an accept whose Revision committed before it was recorded).
            # Why: a second accept must not write it twice. Outcome: recorded APPLIED at the head, nothing written.
            seen = {e: manifest[e].entry_content_hash for e in (*proposal.entries, found)}
            return proposal.decided("APPLIED", result=f"{head.memory_id}@{head.revision} ({found})", at=at), seen
        reason = f"maintenance: {proposal.kind}"
        rev: Revision
        match proposal.action:
            case "merge":
                survivor, *absorbed = proposal.entries
                rev = await svc.merge(head, survivor, absorbed, text=proposal.text, reason=reason)
            case "retire":
                versions = [await svc.get(e, memory=head) for e in proposal.entries]
                if any(v.content.important or v.content.mandatory for v in versions):
                    return proposal.decided("REJECTED", result=BARE_DELETE_REFUSED, at=at), {}
                rev = await svc.forget(head, entries=list(proposal.entries), reason=reason)
            case "rename":
                rev = await svc.rename(head, proposal.entries[0], proposal.slug)
            case "demote":
                rev = await svc.flag(head, proposal.entries[0], mandatory=False, important=True)
            case "flag_stale":
                current = await svc.get(proposal.entries[0], memory=head)
                tags = (*current.content.tags, STALE_TAG)
                patch = EntryPatch(tags=tags, reason=reason)
                rev = (await svc.update(current.entry_id, patch, expected_version=current.version)).revision
            case "summarize":
                links = tuple(Relation(kind=SUMMARIZES, target=e) for e in proposal.entries)
                summary = EntryInput(kind=proposal.partition, text=proposal.text or "", relations=links)
                done = await svc.remember_outcome(head, entries=[summary])
                if done.status == "unchanged" or done.revision is None:  # a live entry says it already
                    result = f"an entry already says it: {', '.join(done.existing)}"
                    return proposal.decided("REJECTED", result=result, at=at), {}
                rev = done.revision
            case "inform":
                return proposal, {}
        after = await svc.manifest(rev)
        fresh = [e for e in after if e not in manifest]  # a summary's new entry: seen by this pass, as written
        seen = {
            e: after[e].entry_content_hash
            for e in (*proposal.entries, *fresh)
            if e in after and after[e].state == "active"
        }
        return proposal.decided("APPLIED", result=f"{rev.memory_id}@{rev.revision}", at=at), seen

    return await svc.retrying(attempt)


async def _summary_of(svc: MemoryService, p: Proposal, head: Revision) -> EntryId | None:
    """A live entry at ``head`` with the summary's text that summarizes exactly ``p.entries``, if one exists."""
    for v in await svc.entries(head):
        if v.text == p.text and {r.target for r in v.content.relations if r.kind == SUMMARIZES} == set(p.entries):
            return v.entry_id
    return None


async def _effect_present(
    svc: MemoryService, p: Proposal, manifest: Mapping[EntryId, ManifestEntry], head: Revision
) -> bool:
    """Whether the memory at ``head`` already shows what ``p`` would write (a merge's absorbed entries retired
    and its survivor active; retired entries gone; the new slug; the mandatory flag dropped; the stale tag)."""

    def active(e: EntryId) -> bool:
        return e in manifest and manifest[e].state == "active"

    first = p.entries[0]
    match p.action:
        case "merge":
            return active(first) and not any(active(e) for e in p.entries[1:])
        case "retire":
            return not any(active(e) for e in p.entries)
        case "summarize":
            return await _summary_of(svc, p, head) is not None
        case "rename" | "demote" | "flag_stale":
            if not active(first):
                return False
            current = await svc.get(first, memory=head)
            if p.action == "rename":
                return current.content.slug == p.slug
            if p.action == "demote":
                return not current.content.mandatory
            return STALE_TAG in current.content.tags
    return False


__all__ = ["BARE_DELETE_REFUSED", "apply_proposal"]
