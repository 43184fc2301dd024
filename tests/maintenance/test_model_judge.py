"""The optional model judge (issue #14, item 5): a chat model behind an OpenAI-compatible endpoint proposes
merges, supersedes, stale items and summaries; its output is validated, never applied by itself, and every call
is counted. The model is a fake HTTP server at the process edge (maintenance_support.fake_chat_server); the
store and the service are real."""

from __future__ import annotations

import json

from maintenance_support import COMPLETION_TOKENS, PROMPT_TOKENS, fake_chat_server

from memstone import EntryInput, MemoryService
from memstone.chat import OpenAICompatibleChat
from memstone.domain.model import EntryPatch
from memstone.maintenance import MaintenanceSettings, decide, maintain

WEB = "memstone://orgs/acme/projects/web"
FRIDAY = "Deploy on Fridays only."
WEEK_END = "Releases go out at the end of the week."
LINT = "Lint with ruff."


async def seed(svc: MemoryService) -> list[str]:
    rev = await svc.remember(
        scope=WEB, entries=[EntryInput(kind="convention", text=t) for t in (FRIDAY, WEEK_END, LINT)]
    )
    assert rev is not None
    by_text = {v.text: v.entry_id for v in await svc.entries(rev)}
    return [by_text[FRIDAY], by_text[WEEK_END], by_text[LINT]]


def merge(survivor: str, *absorbed: str, text: str | None = None) -> dict[str, object]:
    return {"survivor": survivor, "absorbed": list(absorbed), "text": text, "why": "both say releases are Friday"}


async def test_the_model_proposes_a_merge_that_waits_for_a_decision_and_every_call_is_counted(
    svc: MemoryService,
) -> None:
    friday, week_end, _ = await seed(svc)
    head = await svc.resolve(WEB)
    with fake_chat_server() as fake:
        chat = OpenAICompatibleChat(fake.url, "fake-chat")
        fake.reply = (
            "```json\n" + json.dumps({"merges": [merge(friday, week_end, text="Deploy on Fridays.")]}) + "\n```"
        )
        cfg = MaintenanceSettings(chat=chat)
        first = await maintain(svc, scope=WEB, mode="apply", settings=cfg)
        assert fake.requests == 1 and all(e in fake.prompts[0] for e in (friday, week_end))
        (p,) = first.proposals
        assert p.judge == "model" and p.kind == "duplicate" and p.entries == (friday, week_end)
        assert p.status == "PROPOSED" and await svc.resolve(WEB) == head  # APPLY left the candidate undecided
        usage = first.run.usage
        assert (usage.model_calls, usage.input_tokens, usage.output_tokens) == (1, PROMPT_TOKENS, COMPLETION_TOKENS)
        assert first.run.to_dict()["output_tokens"] == COMPLETION_TOKENS
        again = await maintain(svc, scope=WEB, mode="apply", settings=cfg)
        assert fake.requests == 1  # unchanged memory: zero model calls, counted at the server
        assert again.run.listed == 0 and again.run.usage.model_calls == 0 and again.proposals == ()
    done = await decide(svc, p.proposal_id, accept=True)
    assert done.status == "APPLIED"
    assert (await svc.get(friday)).text == "Deploy on Fridays."  # written through the service's path


async def test_a_model_answer_that_fails_validation_proposes_nothing(svc: MemoryService) -> None:
    friday, week_end, lint = await seed(svc)
    said: list[str] = []
    bad = [
        merge(friday, friday),  # absorbs itself
        merge(friday, "ent_01NOTANENTRY0000000000000"),  # not an entry of the partition
        merge(lint, week_end, text="   "),  # a blank merged text
        {"survivor": friday},  # no absorbed list
        "merge everything",
    ]
    with fake_chat_server() as fake:
        fake.reply = json.dumps({"merges": bad})
        report = await maintain(
            svc,
            scope=WEB,
            mode="apply",
            settings=MaintenanceSettings(chat=OpenAICompatibleChat(fake.url, "m")),
            progress=said.append,
        )
        assert report.run.status == "COMPLETED" and report.proposals == () and fake.requests == 1
        assert sum("model judge" in s and "refused" in s for s in said) == len(bad)
        fake.reply = "I think they are all fine."
        await svc.remember(await svc.resolve(WEB), entries=[EntryInput(kind="convention", text="Format with ruff.")])
        prose = await maintain(svc, scope=WEB, settings=MaintenanceSettings(chat=OpenAICompatibleChat(fake.url, "m")))
        assert prose.run.status == "COMPLETED" and prose.proposals == () and prose.run.usage.model_calls == 1


async def test_a_model_that_fails_twice_is_retried_and_none_is_called_by_default(svc: MemoryService) -> None:
    friday, week_end, _ = await seed(svc)
    with fake_chat_server(fail_first=2) as fake:
        fake.reply = json.dumps({"merges": [merge(friday, week_end)]})
        plain = await maintain(svc, scope=WEB)
        assert fake.requests == 0 and plain.run.usage.model_calls == 0  # off by default
        report = await maintain(svc, scope=WEB, settings=MaintenanceSettings(chat=OpenAICompatibleChat(fake.url, "m")))
    assert report.run.status == "COMPLETED" and report.run.retries == 2 and fake.requests == 3
    assert [p.judge for p in report.proposals] == ["model"]
    usage = report.run.usage  # the two failed calls are counted: every request the endpoint saw is a call
    assert usage.model_calls == fake.requests == 3 and usage.failed_calls == 2
    assert report.run.to_dict()["failed_model_calls"] == 2


async def test_the_model_proposes_a_supersede_and_a_contradiction_with_its_evidence_awaiting_a_decision(
    svc: MemoryService,
) -> None:
    friday, week_end, lint = await seed(svc)
    monday = "Deploy on Mondays only, since the freeze."
    rev = await svc.remember(await svc.resolve(WEB), entries=[EntryInput(kind="convention", text=monday)])
    assert rev is not None
    newer = next(v.entry_id for v in await svc.entries(rev) if v.text == monday)
    with fake_chat_server() as fake:
        fake.reply = json.dumps(
            {
                "supersedes": [{"newer": newer, "older": friday, "why": "the deploy day moved to Monday"}],
                "stale": [
                    {"entry": week_end, "contradicts": newer, "why": "releases are no longer at the week's end"},
                    {"entry": lint, "contradicts": lint, "why": "contradicts itself"},  # refused
                    {"entry": newer, "why": "taken by the supersede already"},  # refused
                ],
            }
        )
        said: list[str] = []
        cfg = MaintenanceSettings(chat=OpenAICompatibleChat(fake.url, "fake-chat"))
        report = await maintain(svc, scope=WEB, mode="apply", settings=cfg, progress=said.append)
    head = await svc.resolve(WEB)
    supersede, stale = report.proposals
    assert (supersede.kind, supersede.action, supersede.entries) == ("prune", "merge", (newer, friday))
    assert supersede.evidence == f"model judge (fake-chat): {newer} supersedes {friday}: the deploy day moved to Monday"
    assert (stale.kind, stale.action, stale.entries) == ("stale", "flag_stale", (week_end,))
    assert (
        stale.evidence == f"model judge (fake-chat): contradicted by {newer}: releases are no longer at the week's end"
    )
    assert {p.judge for p in report.proposals} == {"model"} and {p.status for p in report.proposals} == {"PROPOSED"}
    assert sum("refused stale" in s for s in said) == 2
    assert await svc.resolve(WEB) == head  # APPLY left the model's candidates undecided
    assert (await decide(svc, supersede.proposal_id, accept=True)).status == "APPLIED"
    assert (await decide(svc, stale.proposal_id, accept=True)).status == "APPLIED"
    live = {v.entry_id: v for v in await svc.entries(await svc.resolve(WEB))}  # type: ignore[arg-type]
    assert friday not in live and live[newer].text == monday  # retired into the newer; the newer's text stays
    assert "stale" in live[week_end].content.tags


SUMMARY = "Releases: deploy at the end of the week, on Fridays."


def summary(*entries: str, text: object = SUMMARY) -> dict[str, object]:
    return {"entries": list(entries), "text": text, "why": "both are about the release day"}


async def test_the_model_proposes_a_summary_that_on_accept_is_a_new_entry_summarizing_them(svc: MemoryService) -> None:
    friday, week_end, lint = await seed(svc)
    with fake_chat_server() as fake:
        fake.reply = json.dumps({"summaries": [summary(friday, week_end)]})
        cfg = MaintenanceSettings(chat=OpenAICompatibleChat(fake.url, "fake-chat"))
        head = await svc.resolve(WEB)
        report = await maintain(svc, scope=WEB, mode="apply", settings=cfg)
        (p,) = report.proposals
        assert (p.kind, p.action, p.entries, p.text) == ("summary", "summarize", (friday, week_end), SUMMARY)
        assert p.judge == "model" and p.status == "PROPOSED" and await svc.resolve(WEB) == head  # awaits a decision
        assert p.evidence == "model judge (fake-chat): both are about the release day"
        usage = report.run.usage
        assert (usage.model_calls, usage.input_tokens, usage.output_tokens) == (1, PROMPT_TOKENS, COMPLETION_TOKENS)
        assert report.run.totals["kind:summary"] == 1
        done = await decide(svc, p.proposal_id, accept=True)
        assert done.status == "APPLIED"
        live = await svc.entries(await svc.resolve(WEB))  # type: ignore[arg-type]
        (written,) = [v for v in live if v.text == SUMMARY]
        assert written.kind == "convention"  # the partition's kind
        assert sorted((r.kind, r.target) for r in written.content.relations) == sorted(
            [("summarizes", friday), ("summarizes", week_end)]
        )
        assert {v.entry_id for v in live} == {friday, week_end, lint, written.entry_id}  # the summarized are kept
        again = await maintain(svc, scope=WEB, mode="apply", settings=cfg)
        assert fake.requests == 1 and again.run.listed == 0  # the accepted summary was seen as written: no call
    await svc.update(friday, EntryPatch(text="Deploy on Fridays, before noon."))
    flagged = await maintain(svc, scope=WEB, mode="apply")  # a summarized entry changed: the summary is stale
    (stale,) = [q for q in flagged.proposals if q.kind == "stale"]
    assert stale.entries == (written.entry_id,) and stale.status == "APPLIED" and friday in stale.evidence


async def test_a_malformed_summary_is_dropped_and_a_valid_one_beside_it_is_kept(svc: MemoryService) -> None:
    friday, week_end, lint = await seed(svc)
    bad = [
        summary(friday),  # one entry is not a summary
        summary(friday, friday),  # named twice
        summary(friday, "ent_01NOTANENTRY0000000000000"),  # not an entry of the partition
        summary(friday, week_end, text="   "),  # blank
        summary(friday, week_end, text=None),  # no text
        summary(friday, week_end, text="x" * 9000),  # over the entry size limit
        summary(friday, week_end, text="Deploy with password=hunter2 on Fridays."),  # a secret
        {"entries": friday, "text": SUMMARY},  # not a list
        "summarize everything",
    ]
    said: list[str] = []
    with fake_chat_server() as fake:
        fake.reply = json.dumps({"summaries": [*bad, summary(week_end, lint, text="Release on Fridays, linted.")]})
        cfg = MaintenanceSettings(chat=OpenAICompatibleChat(fake.url, "m"))
        report = await maintain(svc, scope=WEB, settings=cfg, progress=said.append)
    assert report.run.status == "COMPLETED" and fake.requests == 1 and report.run.usage.model_calls == 1
    (kept,) = report.proposals
    assert kept.kind == "summary" and kept.entries == (week_end, lint) and kept.text == "Release on Fridays, linted."
    refused = [line for line in said if "refused summary" in line]
    assert len(refused) == len(bad), refused
    assert any("secret" in line for line in refused) and any("8192 bytes" in line for line in refused)
