"""Issue 16 (capcorr5): a correction that sets a value of one kind anew (a number of the same unit, a weekday, a
version of the same release line, a time zone) revises the entry giving that kind of value, in any language
(capture/measures.py, targets.set_anew); a tool named beside the one it replaces revises the entry of the old one
(capture/roles.py). Two rules that merely give values of one unit stay two entries."""

# ruff: noqa: E501  (tables of statements read better unwrapped)

from __future__ import annotations

import pytest
from capture_helpers import PROJECT

from memstone import MemoryService
from memstone.capture import UserPrompt, capture
from memstone.capture.measures import measures, other_value

FILLER = "Translations live in the Crowdin project, synced nightly."


def test_measures_fold_units_weekdays_and_release_lines_across_languages() -> None:
    assert measures("原始读数 60 天后就降采样成小时平均值。") == {"unit:day": frozenset({"60"})}
    assert measures("Readings older than 90 days are downsampled.") == {"unit:day": frozenset({"90"})}
    assert measures("送料無料のしきい値は 6,000 円に変わりました。") == {"unit:yen": frozenset({"6000"})}
    assert measures("Server rooms alarm at 25 °C.") == measures("De serverruimte alarmeert bij 25 graden.")
    assert (
        measures("本番への反映は毎週火曜日の夜だけです。")
        == measures("Deploys go out on Tuesdays.")
        == {"weekday": frozenset({"1"})}
    )
    assert measures("每周一次备份。") == {}  # "once a week", not Monday
    assert measures("Solidity is pinned to 0.8.24.") == {"line:0.8": frozenset({"0.8.24"})}
    assert measures("Python ist auf 3.11 festgelegt.") == {"line:3": frozenset({"3.11"})}
    assert measures("La aprobación segunda tarda 2 días.") == {"unit:day": frozenset({"2"})}  # segunda: no weekday
    assert measures("ラボのタイムゾーンは Asia/Seoul になりました。") == {"zone": frozenset({"Asia/Seoul"})}
    assert other_value(measures("sube a 80 euros"), measures("above 50 euros"))
    assert not other_value(measures("80 euros and 2 days"), measures("80 euros"))


@pytest.mark.parametrize(
    ("entry", "change"),
    [
        pytest.param("部署窗口是每周二下午，其他时间不上线。", "Deploys go out on Thursday afternoons from now on.", id="weekday-zh-en"),
        pytest.param("Solidity is pinned to 0.8.24 in foundry.toml.", "We compile with 0.8.26 now, the via-IR fix landed there.", id="release-line"),
        pytest.param("Python ist auf 3.11 festgelegt, in `pyproject.toml` und im Dockerfile.", "We're on Python 3.12 since the base image update.", id="version-de-en"),
        pytest.param("The lab's timezone is Asia/Tokyo; timestamps are stored in UTC.", "新しい拠点に合わせて、ラボのタイムゾーンは Asia/Seoul になりました。", id="zone-en-ja"),
    ],
)  # fmt: skip
async def test_a_new_value_of_the_same_kind_revises_its_entry(service: MemoryService, entry: str, change: str) -> None:
    (entry_id,) = (await capture(service, UserPrompt(text=entry), scope=PROJECT)).entries()
    await capture(service, UserPrompt(text=FILLER), scope=PROJECT)  # the entry is not the one just written
    result = await capture(service, UserPrompt(text=change), scope=PROJECT)
    assert [(o.action, o.entry_id) for o in result.outcomes] == [("revised", entry_id)]


async def test_two_rules_giving_minutes_stay_two_entries(service: MemoryService) -> None:
    await capture(service, UserPrompt(text="Unpaid orders are cancelled after 15 minutes."), scope=PROJECT)
    await capture(service, UserPrompt(text=FILLER), scope=PROJECT)
    result = await capture(service, UserPrompt(text="Password reset links expire after 60 minutes."), scope=PROJECT)
    assert [o.action for o in result.outcomes] == ["added"]


async def test_a_tool_named_beside_the_one_it_replaces_revises_its_entry(service: MemoryService) -> None:
    (entry_id,) = (
        await capture(
            service, UserPrompt(text="Unhandled exceptions in the workers are reported to Sentry."), scope=PROJECT
        )
    ).entries()
    await capture(service, UserPrompt(text=FILLER), scope=PROJECT)
    result = await capture(
        service, UserPrompt(text="例外の報告先は Sentry から GlitchTip に移りました。"), scope=PROJECT
    )
    assert [(o.action, o.entry_id) for o in result.outcomes] == [("revised", entry_id)]


async def test_a_shared_function_word_is_no_shared_subject_of_a_role(service: MemoryService) -> None:
    await capture(
        service, UserPrompt(text="Les tests d'intégration tournent avec Testcontainers et Redpanda."), scope=PROJECT
    )
    await capture(service, UserPrompt(text=FILLER), scope=PROJECT)
    result = await capture(
        service, UserPrompt(text="Les topics Kafka suivent le schéma domaine.entité.vN."), scope=PROJECT
    )
    assert [o.action for o in result.outcomes] == ["added"]


async def test_a_restated_choice_of_tools_changes_no_other_entry(service: MemoryService) -> None:
    first = "Los tests se ejecutan con `pnpm test` (Jest) y deben pasar antes de cada commit."
    (entry_id,) = (await capture(service, UserPrompt(text=first), scope=PROJECT)).entries()
    await capture(
        service, UserPrompt(text="Usamos pnpm, nunca npm ni yarn; el lockfile es pnpm-lock.yaml."), scope=PROJECT
    )
    await capture(service, UserPrompt(text=FILLER), scope=PROJECT)
    result = await capture(
        service, UserPrompt(text="Para las dependencias, solo pnpm: ni npm ni yarn, por favor."), scope=PROJECT
    )
    assert entry_id not in [o.entry_id for o in result.outcomes]
