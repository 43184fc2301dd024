"""The optional model judge: a chat model (an OpenAI-compatible endpoint, :class:`memstone.chat.OpenAICompatibleChat`)
proposes what the deterministic judges cannot see in wording alone. Off by default. Four kinds:

- ``merges``: restatements (a ``duplicate`` merge, the survivor first, optionally with a merged text);
- ``supersedes``: a newer entry replaces an older one that says something else now (a ``prune`` merge of the
  older into the newer: the newer's text stays, the older's flags, tags and sources are kept on it);
- ``stale``: an entry contradicted by another (``contradicts``: the entry that says otherwise) or otherwise
  out of date; proposed ``flag_stale`` (tagged stale on accept, never deleted);
- ``summaries``: a text that summarizes two or more entries of the partition; proposed ``summarize`` (on
  accept, one new entry of the partition's kind that ``summarizes`` each of them: it reads stale once one of
  them changes, :func:`memstone.maintenance.evidence.summary_stale`).

Its answer is an untrusted candidate. It is parsed as JSON and validated here: every id must be a live entry of
the partition that no other proposal of the run holds, at least one of them changed since the last pass (the
digest gate: a partition with no changed entry is never sent), the survivor is not absorbed, a merged text is
a non-blank string within the entry size limit that holds no secret; a supersede's two entries differ; a stale
entry's ``contradicts`` (when given) is another live entry; a summary names two or more distinct entries and
its text is non-blank, within the size limit and holds no secret (the write path refuses one anyway). What
survives becomes a proposal marked ``judge="model"`` whose evidence is the model's own one-sentence reason
(and, for a contradiction, the entry that contradicts); it never decides anything by itself: an APPLY run
leaves it PROPOSED for a person (or an agent acting for one) to accept, and accepting writes it through the
service's normal path like any other. Each call's tokens are counted in the run record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..domain.ids import EntryId
from ..domain.model import EntryVersion
from ..domain.secrets import contains_secret
from ..ports import ChatModel, ChatResult
from .judges import Draft

MODEL_LIMIT = 40  # entries shown to the model per partition, at most (changed ones first)
MAX_TEXT_BYTES = 8192
SYSTEM = (
    "You review one partition of an AI agent's durable memory. Answer with JSON only, in this shape: "
    '{"merges": [{"survivor": "<entry id>", "absorbed": ["<entry id>"], "text": "<merged text, or null to keep '
    'the survivor\'s>", "why": "<one sentence>"}], '
    '"supersedes": [{"newer": "<entry id>", "older": "<entry id>", "why": "<one sentence>"}], '
    '"stale": [{"entry": "<entry id>", "contradicts": "<entry id, or null>", "why": "<one sentence>"}], '
    '"summaries": [{"entries": ["<entry id>", "<entry id>"], "text": "<the summary>", "why": "<one sentence>"}]}. '
    "merges: entries that state the same rule, fact or preference in other words; never merge two different "
    "rules, even on the same subject. supersedes: a newer entry that replaces an older one on the same point (the "
    "older is then retired into it). stale: an entry another one contradicts, or that is plainly out of date. "
    "summaries: one short text that says what several related entries say together (they are kept). "
    "Each item must involve an entry marked changed. When unsure, propose nothing: "
    '{"merges": [], "supersedes": [], "stale": [], "summaries": []}.'
)
LISTS = ("supersedes", "stale", "summaries")


_Check = Callable[[object, set[EntryId], set[EntryId], set[EntryId]], str | None]


def prompt(partition: str, live: Sequence[EntryVersion], changed: set[EntryId], taken: set[EntryId]) -> str | None:
    """The user message for one partition, or None when it holds no changed entry the run has not taken."""
    free = [v for v in live if v.entry_id not in taken]
    if not any(v.entry_id in changed for v in free):
        return None
    shown = sorted(free, key=lambda v: (v.entry_id not in changed, v.entry_id))[:MODEL_LIMIT]
    rows = [{"id": v.entry_id, "changed": v.entry_id in changed, "text": v.text} for v in shown]
    return f"Partition (kind): {partition}\nEntries:\n{json.dumps(rows, ensure_ascii=False, indent=1)}"


def judge(
    result: ChatResult,
    partition: str,
    live: Sequence[EntryVersion],
    changed: set[EntryId],
    taken: set[EntryId],
    model: str,
) -> tuple[list[Draft], list[str]]:
    """The answer's merges that pass validation (their entries are added to ``taken``), and why others did not."""
    ids = {v.entry_id for v in live}
    refused: list[str] = []
    try:
        text = result.text
        data = json.loads(text[text.index("{") : text.rindex("}") + 1])
    except ValueError:
        return [], ["the answer holds no JSON object"]
    if not isinstance(data, dict):
        return [], ["the answer is not a JSON object"]
    merges = data.get("merges", [])
    if not isinstance(merges, list) or not all(isinstance(data.get(k, []), list) for k in LISTS):
        return [], ["'merges', 'supersedes', 'stale' and 'summaries' must be lists"]
    if not any(k in data for k in ("merges", *LISTS)):
        return [], ["the answer has none of 'merges', 'supersedes', 'stale', 'summaries'"]
    out: list[Draft] = []

    def passing(label: str, items: list[Any], check: _Check) -> Iterator[dict[str, Any]]:
        # Lazily: each item is checked against ``taken`` as the items before it left it.
        for i, m in enumerate(items):
            why = check(m, ids, changed, taken)
            if why is not None:
                refused.append(f"{label} {i}: {why}")
                continue
            assert isinstance(m, dict)
            yield m

    for m in passing("merge", merges, _check):
        survivor, absorbed = EntryId(m["survivor"]), tuple(EntryId(a) for a in m["absorbed"])
        taken |= {survivor, *absorbed}
        reason = m.get("why")
        said = reason.strip()[:300] if isinstance(reason, str) and reason.strip() else "the model judged them the same"
        merged = m.get("text")
        out.append(
            Draft(
                kind="duplicate",
                partition=partition,
                action="merge",
                entries=(survivor, *absorbed),
                evidence=f"model judge ({model}): {said}",
                text=merged.strip() if isinstance(merged, str) else None,
                judge="model",
            )
        )
    for m in passing("supersede", data.get("supersedes", []), _check_pair):
        newer, older = EntryId(m["newer"]), EntryId(m["older"])
        taken |= {newer, older}
        out.append(
            Draft(
                kind="prune", partition=partition, action="merge", entries=(newer, older),
                evidence=f"model judge ({model}): {newer} supersedes {older}: {_why(m, 'the newer replaces it')}",
                judge="model",
            )
        )  # fmt: skip
    for m in passing("stale", data.get("stale", []), _check_stale):
        entry, against = EntryId(m["entry"]), m.get("contradicts")
        taken.add(entry)
        said = _why(m, "out of date")
        if isinstance(against, str):
            said = f"contradicted by {against}: {said}"
        out.append(
            Draft(
                kind="stale", partition=partition, action="flag_stale", entries=(entry,),
                evidence=f"model judge ({model}): {said}", judge="model",
            )
        )  # fmt: skip
    for m in passing("summary", data.get("summaries", []), _check_summary):
        summarized = tuple(EntryId(e) for e in m["entries"])
        taken.update(summarized)
        out.append(
            Draft(
                kind="summary", partition=partition, action="summarize", entries=summarized,
                evidence=f"model judge ({model}): {_why(m, 'they belong together')}", text=m["text"].strip(),
                judge="model",
            )
        )  # fmt: skip
    return out, refused


def _why(m: dict[str, object], default: str) -> str:
    reason = m.get("why")
    return reason.strip()[:300] if isinstance(reason, str) and reason.strip() else default


def _check_pair(m: object, ids: set[EntryId], changed: set[EntryId], taken: set[EntryId]) -> str | None:
    if not isinstance(m, dict):
        return "not an object"
    newer, older = m.get("newer"), m.get("older")
    if not isinstance(newer, str) or not isinstance(older, str):
        return "needs a newer and an older entry id"
    if newer == older:
        return "an entry cannot supersede itself"
    return _known([newer, older], ids, changed, taken)


def _check_stale(m: object, ids: set[EntryId], changed: set[EntryId], taken: set[EntryId]) -> str | None:
    if not isinstance(m, dict):
        return "not an object"
    entry, against = m.get("entry"), m.get("contradicts")
    if not isinstance(entry, str):
        return "needs an entry id"
    if against is not None and (not isinstance(against, str) or against == entry or against not in ids):
        return "contradicts must be another live entry of this partition, or null"
    return _known([entry], ids, changed, taken, also_changed=[against] if isinstance(against, str) else [])


def _check_summary(m: object, ids: set[EntryId], changed: set[EntryId], taken: set[EntryId]) -> str | None:
    if not isinstance(m, dict):
        return "not an object"
    entries, text = m.get("entries"), m.get("text")
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        return "needs an entries list of entry ids"
    if len(set(entries)) < 2 or len(set(entries)) != len(entries):
        return "a summary names two or more distinct entries"
    known = _known(entries, ids, changed, taken)
    if known is not None:
        return known
    return _text_refused(text, "the summary")


def _text_refused(text: object, what: str) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return f"{what} is blank or not a string"
    if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        return f"{what} is over {MAX_TEXT_BYTES} bytes"
    if contains_secret(text):
        return f"{what} holds what looks like a secret"
    return None


def _known(
    every: list[str], ids: set[EntryId], changed: set[EntryId], taken: set[EntryId], also_changed: Sequence[str] = ()
) -> str | None:
    unknown = [e for e in every if e not in ids]
    if unknown:
        return f"not live entries of this partition: {', '.join(unknown)}"
    held = [e for e in every if e in taken]
    if held:
        return f"already in another proposal of this run: {', '.join(held)}"
    if not any(e in changed for e in (*every, *also_changed)):
        return "no entry of it changed since the last pass"
    return None


def _check(m: object, ids: set[EntryId], changed: set[EntryId], taken: set[EntryId]) -> str | None:
    if not isinstance(m, dict):
        return "not an object"
    survivor, absorbed, text = m.get("survivor"), m.get("absorbed"), m.get("text")
    if not isinstance(survivor, str) or not isinstance(absorbed, list) or not absorbed:
        return "needs a survivor id and a non-empty absorbed list"
    if not all(isinstance(a, str) for a in absorbed):
        return "absorbed holds something other than entry ids"
    every = [survivor, *absorbed]
    if len(set(every)) != len(every):
        return "an entry is named twice (a survivor cannot absorb itself)"
    known = _known(every, ids, changed, taken)
    if known is not None:
        return known
    return None if text is None else _text_refused(text, "the merged text")


async def ask(chat: ChatModel, user: str) -> ChatResult:
    return await chat.complete(SYSTEM, user)


__all__ = ["MODEL_LIMIT", "SYSTEM", "ask", "judge", "prompt"]
