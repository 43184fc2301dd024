"""Issue 16 (capdup2): a change of tool in one role revises the entry naming the old tool, in any language
(capture/roles.py), and two tools of one role in unrelated statements stay two entries."""

# ruff: noqa: E501  (tables of statements read better unwrapped)

from __future__ import annotations

import pytest
from capture_helpers import PROJECT

from memstone import MemoryService
from memstone.capture import UserPrompt, capture
from memstone.capture.roles import roles


@pytest.mark.parametrize(
    ("entry", "change"),
    [
        pytest.param("管理后台的依赖用 npm 装。", "我们现在用 pnpm 了。", id="zh-no-shared-word"),
        pytest.param("Background jobs run in Hangfire with the SQL Server storage.", "Recurring jobs are scheduled by Quartz.NET.", id="en-unmarked"),
        pytest.param("Las dependencias del panel se instalan con npm.", "Las dependencias se gestionan con pnpm desde el lunes.", id="es"),
    ],
)  # fmt: skip
async def test_another_tool_of_the_same_role_revises_the_entry(service: MemoryService, entry: str, change: str) -> None:
    (entry_id,) = (await capture(service, UserPrompt(text=entry), scope=PROJECT)).entries()
    await capture(service, UserPrompt(text="Translations live in the Crowdin project, synced nightly."), scope=PROJECT)
    result = await capture(service, UserPrompt(text=change), scope=PROJECT)
    assert [(o.action, o.entry_id) for o in result.outcomes] == [("revised", entry_id)]
    head = await service.resolve(PROJECT)
    assert head is not None and len(await service.entries(head)) == 2


async def test_two_tools_of_one_role_in_unrelated_statements_stay_two(service: MemoryService) -> None:
    await capture(service, UserPrompt(text="The admin panel always installs its packages with pnpm."), scope=PROJECT)
    await capture(service, UserPrompt(text="Marketing pages are built by the agency with yarn."), scope=PROJECT)
    head = await service.resolve(PROJECT)
    assert head is not None and len(await service.entries(head)) == 2


def test_roles_reads_names_in_any_prose_and_not_ordinary_words() -> None:
    assert roles("图片存储已经迁到腾讯云 COS 了。") == {"object-storage": frozenset({"cos"})}
    assert roles("Recurring jobs are scheduled by Quartz.NET.") == {"jobs": frozenset({"quartz.net"})}
    assert roles("推送用的是极光推送。") == {"push": frozenset({"极光推送"})}  # not 极光 beside it
    assert roles("On gère les dépendances avec pnpm, pas avec npm.") == {"js-packages": frozenset({"pnpm", "npm"})}
    assert roles("Il faut aller vite; ses tests cos tournent.") == {}  # French words, not Vite / SES / COS
    assert roles("The standard square layout.") == {}
