"""Issue 16, seventh pass: a statement that gives a known subject another number, host or version changes it.

Made-up sentences of a wiki project, in no data file.
"""

from __future__ import annotations

import math

import pytest
from capture_helpers import PROJECT, entry_then

from memstone import MemoryService
from memstone.capture import UserPrompt, capture, plan_candidates
from memstone.capture.admission import Semantic, semantic_key
from memstone.capture.candidates import Candidate
from memstone.capture.nearness import SUBJECT_COSINE
from memstone.capture.statements import statement_candidates
from memstone.capture.subjects import conflicts, quantities, values

MEMORY = [
    "Page history is kept for ninety days and then squashed.",
    "Search results are ranked by title match first, then by last edit.",
    "Comments are moderated by the space owner before they show up.",
]


def test_quantities_and_hosts_are_typed_and_file_names_are_no_hosts() -> None:
    assert quantities("Thumbnails are rebuilt every 6 hours on media.example.org; files up to 40 MB.") == {
        "qty:hour=6",
        "qty:mb=40",
        "host:media.example.org",
    }
    assert quantities("草稿 30 分钟后自动删除，接口在 https://api.example.cn。") == {
        "qty:分钟=30",
        "host:api.example.cn",
    }
    assert quantities("The config is in app.yaml and main.dart, since 2 releases.") == {"qty:releas=2"}
    assert quantities("DTOs live under com.acme.billing.dto.") == frozenset()  # a package, not a host
    assert quantities("Kroki 0.24 via `make diagrams`") == frozenset()  # a version is not a quantity


def test_a_version_is_read_from_a_leading_dot_name_and_from_its_clause() -> None:
    assert "ver:.net=8" in values("We're on .NET 8 and C# 12.")
    assert "ver:deno=1.42" in values("Deno 版本固定在 1.42，CI 也一样。")
    assert "ver:deno=1.46" in values("Deno 升到 1.46 了。")


def test_another_number_of_the_same_unit_or_another_host_conflicts_and_the_same_does_not() -> None:
    old = quantities("Drafts are autosaved every 5 minutes to drafts.example.net.")
    assert conflicts(quantities("Drafts are autosaved every 2 minutes."), old)
    assert conflicts(quantities("Drafts are saved to drafts.example.org."), old)
    assert not conflicts(quantities("Drafts are autosaved every 5 minutes, all of them."), old)
    assert not conflicts(quantities("Up to 20 drafts are kept."), old)  # another unit: another setting


@pytest.mark.parametrize(
    ("first", "then"),
    [
        pytest.param("Search indexes are rebuilt every 6 hours by the indexer job.",
                     "Search indexes are rebuilt every 3 hours.", id="another-number"),
        pytest.param("The preview wiki runs at preview.wiki.example.net.",
                     "The preview wiki runs on wiki-preview.example.org.", id="another-host"),
        pytest.param("Deno 版本固定在 1.42，CI 也一样。", "Deno 升到 1.46 了。", id="a-version-in-a-chinese-clause"),
    ],
)  # fmt: skip
async def test_a_restatement_with_another_value_revises_the_entry(
    service: MemoryService, first: str, then: str
) -> None:
    entry, outcomes = await entry_then(service, MEMORY, first, then)
    assert outcomes == [("revised", entry)]


async def test_hosts_of_one_domain_are_no_shared_subject(service: MemoryService) -> None:
    entry, outcomes = await entry_then(
        service,
        MEMORY,
        "测试环境的接口地址是 https://api-test.example.cn。",
        "图片都放在七牛云，CDN 域名是 img.example.cn。",
    )
    assert len(outcomes) == 1 and outcomes[0] != ("revised", entry)


async def test_a_short_setting_is_a_fact(service: MemoryService) -> None:
    result = await capture(service, UserPrompt(text="Uploads can be up to 40 MB."), scope=PROJECT)
    assert [o.action for o in result.outcomes] == ["added"]


def test_short_chinese_statements_of_a_tool_and_of_its_change_are_read() -> None:
    (fact,) = statement_candidates(UserPrompt(text="通知用的是企业微信。")).candidates
    assert fact.kind == "convention"
    (change,) = statement_candidates(UserPrompt(text="通知改成走钉钉了。")).candidates
    assert change.kind == "correction"


async def test_short_chinese_statements_are_admitted(service: MemoryService) -> None:
    for text in ("通知用的是企业微信。", "草稿箱改成走七牛云了。"):
        result = await capture(service, UserPrompt(text=text), scope=PROJECT)
        assert [o.action for o in result.outcomes] == ["added"], text


# With a model: two statements that name the same subject need a lower cosine (nearness.SUBJECT_COSINE).
def _pair(cosine: float, a: str, b: str, *, subject: float | None = 0.70) -> list[str]:
    """The plans of ``a`` then ``b`` when their vectors have this cosine (two unit vectors in a plane)."""
    va, vb = (1.0, 0.0), (cosine, math.sqrt(1 - cosine * cosine))
    semantic = Semantic(vectors={semantic_key(a): va, semantic_key(b): vb}, threshold=0.75, subject=subject)
    cands = [
        Candidate(kind="convention", text=a, origin="statement"),
        Candidate(kind="convention", text=b, origin="statement"),
    ]
    return [p.action for p in plan_candidates(cands, [], semantic)]


def test_a_restatement_naming_the_same_tool_needs_less_similarity_and_another_subject_does_not() -> None:
    a = "Kotlin 代码里的变量名用小驼峰。"
    b = "Kotlin 里的字段名都写成 camelCase。"
    assert _pair(0.72, a, b)[1] in ("unchanged", "revise")
    assert _pair(0.72, a, b, subject=None) == ["add", "add"]  # no calibrated subject cosine: the old rule (0.75)
    assert _pair(0.66, a, b) == ["add", "add"]  # below the subject cosine
    c = "Swift 代码里的变量名用小驼峰。"  # names another language: no shared subject
    assert _pair(0.72, a, c) == ["add", "add"]
    assert set(SUBJECT_COSINE) == {"minilm-l6-int8"}
