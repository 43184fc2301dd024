"""The deterministic judges of a maintenance run: what to propose for the changed entries of one partition.

Each judge reads the live entries of one (scope, kind) partition and the ids of those that changed since the
ledger last saw them, and returns :class:`Draft` judgements; the runner turns them into stored proposals with
the content hashes they were made on. An entry appears in at most one actionable draft per run, so applying
one proposal never invalidates another of the same run. No judge needs a model: the near-duplicate rule is
capture's matcher (:func:`memstone.capture.plan_candidates`), and only with a calibrated embedding model does
it also match paraphrases by meaning (the vectors are computed for changed entries' partitions only). A pair
the matcher takes is merged only if it also shares its distinctive subject (:func:`subject_share`).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..capture import Candidate, plan_candidates
from ..capture._text import informative_count, searchable, subject_tokens, typed_subjects
from ..capture.admission import SEMANTIC_THRESHOLDS, Semantic, semantic_texts
from ..capture.nearness import TermWeights, align, other_subjects
from ..capture.statements import is_mandatory
from ..domain.ids import EntryId
from ..domain.maintenance import JudgeName, ProposalAction, ProposalKind
from ..domain.model import EntryVersion
from ..domain.rules import slugify
from ..ports import EmbeddingModel

Embed = Callable[[tuple[str, ...]], Awaitable[tuple[tuple[float, ...], ...]]]
SEMANTIC_LIMIT = 512  # texts embedded per partition for the paraphrase rule, at most
POOL = 16  # live entries a changed entry is compared with: those sharing the most subject tokens
# The share of the lighter entry's subject weight a merged pair must have in common (see subject_share). Fitted on
# the dev halves only (capture's dev projects and the seeded set's dev pairs, with and without MiniLM):
# `bench/bench_maintenance.py --model minilm-l6-int8 --fit 0,0.05,0.1,0.15,0.2,0.25,0.3` picks the lowest value
# from which no higher one adds a dev false merge (0.05: 2 with MiniLM, 0: 8); up to 0.15 it costs no dev merge.
SUBJECT_SHARE = 0.1


@dataclass(frozen=True, slots=True, kw_only=True)
class Draft:
    """One judgement before it is stored: the kind, the action, the entries (a merge's survivor first), why."""

    kind: ProposalKind
    partition: str
    action: ProposalAction
    entries: tuple[EntryId, ...]
    evidence: str
    text: str | None = None
    slug: str | None = None
    judge: JudgeName = "rules"


@dataclass(slots=True)
class _Drafts:
    """The drafts one judge returns: of one kind, and of one partition unless a draft names its own."""

    kind: ProposalKind
    partition: str
    drafts: list[Draft] = field(default_factory=list)

    def add(
        self,
        action: ProposalAction,
        entries: tuple[EntryId, ...],
        evidence: str,
        *,
        text: str | None = None,
        slug: str | None = None,
        partition: str | None = None,
    ) -> None:
        self.drafts.append(
            Draft(
                kind=self.kind,
                partition=self.partition if partition is None else partition,
                action=action,
                entries=entries,
                evidence=evidence,
                text=text,
                slug=slug,
            )
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeSettings:
    """Thresholds of the deterministic judges."""

    near_cosine: float | None = None  # the paraphrase rule's cosine (None: capture's calibrated one, if any)
    subject_share: float = SUBJECT_SHARE  # a merge's pair must share this much of its distinctive subject
    note_max_age_days: float = 30.0  # a changed working note older than this is a prune candidate
    mandatory_budget_chars: int = 6000  # the mandatory tier's share of a session, in characters
    repo: str | None = None  # the git work tree code-anchored entries cite (None: their evidence is not checked)


def semantic_threshold(model: EmbeddingModel | None, settings: JudgeSettings) -> float | None:
    if model is None:
        return None
    return (
        settings.near_cosine if settings.near_cosine is not None else SEMANTIC_THRESHOLDS.get(model.profile.profile_id)
    )


def subject_share(a: str, b: str, weights: TermWeights) -> float:
    """How much of their distinctive subject two statements share: the weight of their shared subject tokens over
    the lighter one's, each token weighted by how rare it is in the partition (capture's :class:`TermWeights`;
    a word in another form counts as shared, :func:`align`). 0 when both name commands, paths or flags and none
    is the same (capture's :func:`other_subjects`).

    Two rules of one area share their common words ("Module … must call … before …", "deploy … pipeline") and
    differ in what they are about (the modules, tools, paths, settings they name): little shared weight. A
    restatement keeps what it is about, however it is reworded: most of it.
    """
    if other_subjects(typed_subjects(a), typed_subjects(b)):
        return 0.0
    mine, theirs = subject_tokens(a), subject_tokens(b)
    mine = align(mine, theirs)
    lighter = min(weights.total(mine), weights.total(theirs))
    return weights.total(mine & theirs) / lighter if lighter > 0 else 0.0


async def duplicates(
    partition: str,
    live: Sequence[EntryVersion],
    changed: set[EntryId],
    taken: set[EntryId],
    embed: Embed | None,
    threshold: float | None,
    share: float = SUBJECT_SHARE,
) -> list[Draft]:
    """Duplicate and near-duplicate pairs: each changed entry that restates another live entry is merged into it.

    The entry already there survives; its text becomes capture's merged text when the restatement adds detail.
    A pair capture's matcher takes is merged only when it also shares ``share`` of its distinctive subject
    (:func:`subject_share`): a merge retires an entry, so it needs more than a close wording or meaning.
    """
    if not changed:
        return []
    cands = {
        v.entry_id: Candidate(kind=v.kind, text=v.text, origin="statement", slug=v.content.slug)
        for v in live
        if v.entry_id in changed
    }
    semantic = None
    if embed is not None and threshold is not None:
        texts = semantic_texts(list(cands.values()), live, limit=SEMANTIC_LIMIT)
        semantic = Semantic(vectors=dict(zip(texts, await embed(tuple(texts)), strict=True)), threshold=threshold)
    used = taken
    tokens = {v.entry_id: subject_tokens(v.text) for v in live}
    index: dict[str, list[EntryVersion]] = {}
    for v in live:
        for tok in tokens[v.entry_id]:
            index.setdefault(tok, []).append(v)
    need = 1 if semantic is not None else 2
    weights = TermWeights([searchable(v.text) for v in live])
    out = _Drafts("duplicate", partition)
    for v in live:
        if v.entry_id not in cands or v.entry_id in used:
            continue
        mine = tokens[v.entry_id]
        shared: dict[EntryId, int] = {}
        for tok in mine:
            for o in index.get(tok, ()):
                shared[o.entry_id] = shared.get(o.entry_id, 0) + 1
        # Trigger: every rule of capture's matcher needs a shared subject token (two without the paraphrase
        # rule, or one for a one-word subject), or the same slug. Why: planning against the whole partition
        # tokenizes every entry once per changed entry (quadratic on a large scope). Outcome: the POOL entries
        # sharing the most subject tokens, plus same-slug ones, are compared; capture's rules decide as ever.
        floor = min(need, len(mine)) or 1
        near = [(n, o) for o, n in shared.items() if n >= floor and o != v.entry_id and o not in used]
        pool_ids = {o for _, o in sorted(near, key=lambda x: (-x[0], x[1]))[:POOL]}
        slug = v.content.slug
        others = [
            o
            for o in live
            if o.entry_id != v.entry_id
            and o.entry_id not in used
            and (o.entry_id in pool_ids or (slug is not None and o.content.slug == slug))
        ]
        if not others:
            continue
        (plan,) = plan_candidates([cands[v.entry_id]], others, semantic)
        if plan.action == "add" or plan.entry_id is None:
            continue
        survivor = next(o for o in others if o.entry_id == plan.entry_id)
        # Trigger: capture's matcher takes the pair. Why: its paraphrase rule needs one shared subject token and a
        # close vector, and a shared common word ("module", "deploy") with a close vector is two rules of one
        # area as often as one rule reworded (MiniLM: 18 false merges on the seeded set). Outcome: merged only if
        # the pair also shares its distinctive subject; else both stay.
        if subject_share(v.text, survivor.text, weights) < share:
            continue
        used |= {v.entry_id, plan.entry_id}
        text = plan.text if plan.action == "revise" and plan.text != survivor.text else None
        out.add("merge", (plan.entry_id, v.entry_id), f"{v.entry_id} restates {plan.entry_id}: {plan.why}", text=text)
    return out.drafts


def prune(
    partition: str,
    live: Sequence[EntryVersion],
    changed: set[EntryId],
    taken: set[EntryId],
    now: str,
    settings: JudgeSettings,
) -> list[Draft]:
    """Prune candidates: an entry another live entry supersedes (merged into it, so no flag is lost), and a
    working note older than ``note_max_age_days`` that is neither important nor mandatory (retired)."""
    out = _Drafts("prune", partition)
    by_id = {v.entry_id: v for v in live}
    for v in live:
        for r in v.content.relations:
            old = by_id.get(r.target)
            if r.kind != "supersedes" or old is None or {v.entry_id, old.entry_id} & taken:
                continue
            if not {v.entry_id, old.entry_id} & changed:
                continue
            taken |= {v.entry_id, old.entry_id}
            out.add(
                "merge", (v.entry_id, old.entry_id), f"{v.entry_id} supersedes {old.entry_id}, which is still active"
            )
    if partition != "working_note":
        return out.drafts
    cutoff = _parse(now) - _dt.timedelta(days=settings.note_max_age_days)
    for v in live:
        if v.entry_id not in changed or v.entry_id in taken or v.content.important or v.content.mandatory:
            continue
        if _parse(v.provenance.created_at) < cutoff:
            taken.add(v.entry_id)
            age = f"a working note from {v.provenance.created_at[:10]}, older than {settings.note_max_age_days:g} days"
            out.add("retire", (v.entry_id,), age)
    return out.drafts


def slugs(partition: str, live: Sequence[EntryVersion], changed: set[EntryId], taken: set[EntryId]) -> list[Draft]:
    """Slug review: a changed entry whose slug shares no subject word with its title and text has drifted; rename
    it to one derived from them (reads of the old slug keep redirecting to the entry)."""
    held = {v.content.slug for v in live if v.content.slug}
    out = _Drafts("slug", partition)
    for v in live:
        slug = v.content.slug
        if not slug or v.entry_id not in changed or v.entry_id in taken or slug == "project-lifecycle":
            continue
        words = f"{v.content.title or ''} {v.text}"
        if subject_tokens(slug.replace("-", " ")) & subject_tokens(words):
            continue
        fresh = slugify(v.content.title or " ".join(v.text.split()[:8]))
        if not fresh or fresh in held or not subject_tokens(fresh.replace("-", " ")):
            continue
        taken.add(v.entry_id)
        held.add(fresh)
        drift = f"slug {slug!r} shares no subject word with the entry's title and text"
        out.add("rename", (v.entry_id,), drift, slug=fresh)
    return out.drafts


def stale(
    partition: str, live: Sequence[EntryVersion], reasons: Mapping[EntryId, str], taken: set[EntryId]
) -> list[Draft]:
    """Stale items: a summary, or a code-anchored entry, whose evidence changed (``evidence.py`` finds them);
    accepted, the entry is tagged ``stale``."""
    out = _Drafts("stale", partition)
    for v in live:
        why = reasons.get(v.entry_id)
        if why is None or v.entry_id in taken:
            continue
        taken.add(v.entry_id)
        out.add("flag_stale", (v.entry_id,), why)
    return out.drafts


def empties(partition: str, live: Sequence[EntryVersion], changed: set[EntryId], active: set[EntryId]) -> list[Draft]:
    """Empty or orphaned entries (informational): next to no informative words, or a relation (other than
    ``supersedes``) to an entry that is not active in the scope."""
    out = _Drafts("empty", partition)
    for v in live:
        if v.entry_id not in changed:
            continue
        if informative_count(v.text) < 2:
            out.add("inform", (v.entry_id,), "the entry says next to nothing (fewer than two informative words)")
        dangling = sorted(r.target for r in v.content.relations if r.kind != "supersedes" and r.target not in active)
        if dangling:
            out.add(
                "inform",
                (v.entry_id,),
                f"orphaned relations to entries that are not active here: {', '.join(dangling)}",
            )
    return out.drafts


def mandatory_audit(
    live: Sequence[EntryVersion], changed: set[EntryId], taken: set[EntryId], settings: JudgeSettings
) -> list[Draft]:
    """The mandatory tier over its session budget: demote (to important) the mandatory entries capture's rule
    would not make mandatory, largest first, until the tier fits; informational when it still does not."""
    tier = [v for v in live if v.content.mandatory]
    if not any(v.entry_id in changed for v in tier):
        return []  # digest gate: the tier is as the last pass saw it
    size = sum(len(v.text) for v in tier)
    budget = settings.mandatory_budget_chars
    if size <= budget:
        return []
    out = _Drafts("mandatory", "*")
    for v in sorted(tier, key=lambda v: (-len(v.text), v.entry_id)):
        if size <= budget:
            break
        lifecycle = v.content.slug == "project-lifecycle"
        if v.entry_id in taken or is_mandatory(v.text, lifecycle=lifecycle, rule=True):
            continue
        taken.add(v.entry_id)
        size -= len(v.text)
        why = (
            f"the mandatory tier holds more than its budget of {budget} characters, and this "
            "entry is not needed in every session (not a workflow gate or the lifecycle)"
        )
        out.add("demote", (v.entry_id,), why, partition=v.kind)
    if size > budget:
        over = f"the mandatory tier would still hold {size} characters, over its budget of {budget}"
        out.add("inform", tuple(v.entry_id for v in tier), over)
    return out.drafts


def _parse(stamp: str) -> _dt.datetime:
    try:
        return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return _dt.datetime.now(_dt.UTC)


__all__ = [
    "Draft",
    "JudgeSettings",
    "duplicates",
    "empties",
    "mandatory_audit",
    "prune",
    "semantic_threshold",
    "slugs",
    "stale",
    "subject_share",
]
