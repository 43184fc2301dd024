"""The optional model judge (issue #14, item 5): a chat model behind an OpenAI-compatible endpoint proposes
merges; its output is validated, never applied by itself, and every call is counted. The model is a fake HTTP
server at the process edge (maintenance_support.fake_chat_server); the store and the service are real."""

from __future__ import annotations

import json

from maintenance_support import COMPLETION_TOKENS, PROMPT_TOKENS, fake_chat_server

from memstone import EntryInput, MemoryService
from memstone.chat import OpenAICompatibleChat
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
