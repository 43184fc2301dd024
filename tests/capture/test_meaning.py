"""Issue 16: statements read by meaning in English, German and Chinese; unmarked corrections, lessons, the
mandatory rule, and subjects typed by the command, path or tool they name."""

# ruff: noqa: E501  (tables of statements read better unwrapped)

from __future__ import annotations

import pytest
from capture_helpers import PROJECT

from memstone import MemoryService
from memstone.capture import TurnStop, UserPrompt, admit, capture, plan_candidates, statement_candidates
from memstone.capture._language import language, read_sentence
from memstone.capture._patterns import is_chatter
from memstone.capture._text import sentences, typed_subjects
from memstone.capture.admission import SEMANTIC_THRESHOLDS, Semantic, semantic_key
from memstone.capture.candidates import Candidate
from memstone.capture.statements import is_mandatory, lesson_candidates


async def live(svc: MemoryService) -> list[tuple[str, str, bool, bool]]:
    head = await svc.resolve(PROJECT)
    versions = await svc.entries(head) if head else []
    return [(v.kind, v.text, v.content.important, v.content.mandatory) for v in versions]


KEPT = [
    pytest.param("我们用 uv 管理依赖，不要用 pip install 直接装包。", "constraint", id="zh-constraint"),
    pytest.param("前端统一用 Vue 3 的 `<script setup>` 写法和 Pinia 管理状态。", "convention", id="zh-convention"),
    pytest.param("CI 跑在 GitLab 上，流水线定义在 .gitlab-ci.yml。", "fact", id="zh-plain-fact"),
    pytest.param("我个人喜欢小而专一的函数。", "preference", id="zh-preference"),
    pytest.param("Geldbeträge speichern wir als ganze Cent, niemals als Float.", "constraint", id="de-constraint"),
    pytest.param("Alle Texte in der Oberfläche werden mit gettext übersetzt.", "convention", id="de-passive"),
    pytest.param("Die Belegerkennung läuft als Celery-Task mit Redis als Broker.", "fact", id="de-plain-fact"),
    pytest.param("The docs site is Docusaurus under docs/, deployed from main by CI.", "fact", id="en-plain-fact"),
    pytest.param("Metrics names get the harbor_ prefix and follow Prometheus base units.", "fact", id="en-prefix-fact"),
]


@pytest.mark.parametrize(("text", "kind"), KEPT)
def test_statements_without_an_english_trigger_word_are_candidates(text: str, kind: str) -> None:
    (c,) = statement_candidates(UserPrompt(text=text)).candidates
    assert c.kind == kind


SKIPPED = [
    pytest.param("现在对象存储用的是哪家？", "question", id="zh-question"),
    pytest.param("也许以后可以换成 MinIO，我不太确定。", "speculation", id="zh-speculation"),
    pytest.param("这次先不用写测试，赶时间。", "one_off", id="zh-one-off"),
    pytest.param("帮我修一下上传大文件时进度条卡住的问题。", "task_request", id="zh-task"),
    pytest.param("好的，谢谢", "chatter", id="zh-chatter"),
    pytest.param("Welche Django-Version verwenden wir gerade?", "question", id="de-question"),
    pytest.param("Vielleicht sollten wir irgendwann auf HTMX umsteigen.", "speculation", id="de-speculation"),
    pytest.param("Mach das jetzt erst mal nur für die Mandantenliste.", "one_off", id="de-one-off"),
    pytest.param("Bau mir bitte einen CSV-Export für die Umsatzliste.", "task_request", id="de-task"),
    pytest.param("super, danke", "chatter", id="de-chatter"),
    pytest.param("Add a status condition for the backup phase to the Vault CRD.", "task_request", id="en-task"),
]


@pytest.mark.parametrize(("text", "reason"), SKIPPED)
def test_questions_speculation_one_offs_tasks_and_chatter_in_each_language(text: str, reason: str) -> None:
    analysis = statement_candidates(UserPrompt(text=text))
    assert analysis.candidates == ()
    assert reason in {s.reason for s in analysis.skipped}


def test_chinese_text_is_not_english_chatter_and_splits_at_chinese_stops() -> None:
    assert not is_chatter("不要在日志里打印用户的手机号。")  # it used to: no a-z word at all counted as chatter
    assert is_chatter("ok thanks")
    assert sentences("不要打印手机号。时间一律用 UTC 存储。") == ["不要打印手机号。", "时间一律用 UTC 存储。"]
    assert (language("Steuernummern und IBANs nie im Klartext loggen."), language("Never log IBANs.")) == ("de", "en")


def test_an_unmarked_change_is_a_correction_that_names_what_it_replaces() -> None:
    (c,) = statement_candidates(
        UserPrompt(text="We moved the e2e suite off kind to k3d last week, so use `make k3d-up` now.")
    ).candidates
    assert (c.kind, c.origin) == ("correction", "correction")
    assert c.replaces and c.replaces[0].startswith("kind")
    assert read_sentence("CI 已经从 GitLab 迁到 GitHub Actions 了。").replaced == ("GitLab",)
    assert read_sentence("Nein, black benutzen wir nicht mehr.").replaced == ("black",)


@pytest.mark.parametrize(
    ("entry", "change"),
    [
        pytest.param("Our integration tests run against kind, not minikube; start the cluster with `make kind-up`.",
                     "We moved the e2e suite off kind to k3d last week, so use `make k3d-up` now.", id="en-off-x-to-y"),
        pytest.param("我们用 uv 管理依赖，不要用 pip install 直接装包。", "不对，依赖现在改用 poetry 管理了，uv 只在 CI 里用来装 poetry。", id="zh"),
        pytest.param("We're on Go 1.23 and the toolchain line in go.mod pins 1.23.4.", "We use Go 1.24 now, the toolchain line was bumped this morning.", id="en-new-version"),
    ],
)  # fmt: skip
async def test_an_unmarked_change_of_the_same_subject_revises_the_entry(
    service: MemoryService, entry: str, change: str
) -> None:
    (entry_id,) = (await capture(service, UserPrompt(text=entry), scope=PROJECT)).entries()
    result = await capture(service, UserPrompt(text=change), scope=PROJECT)
    assert [(o.action, o.entry_id) for o in result.outcomes] == [("revised", entry_id)]
    assert len(await live(service)) == 1
    history = await service.history(entry_id)
    assert history[0].version.text == entry  # the old text stays in history


async def test_a_restatement_naming_the_same_command_is_no_second_entry(service: MemoryService) -> None:
    await capture(service, UserPrompt(text="提交之前一定要跑 `pytest -q`，全部通过才算完成。"), scope=PROJECT)
    again = await capture(
        service, UserPrompt(text="说完成之前必须先把测试全部跑一遍，`pytest -q` 要全绿。"), scope=PROJECT
    )
    assert again.entries("added") == ()
    assert len(await live(service)) == 1


async def test_two_rules_about_different_commands_stay_two(service: MemoryService) -> None:
    await capture(service, UserPrompt(text="提交之前一定要跑 `ruff check`，全部通过才算完成。"), scope=PROJECT)
    await capture(service, UserPrompt(text="提交之前一定要跑 `ruff format`，全部通过才算完成。"), scope=PROJECT)
    assert len(await live(service)) == 2


def test_typed_subjects() -> None:
    assert typed_subjects("Use `make k3d-up` and edit deploy/chart/values.yaml with --atomic") == {
        "cmd:make k3d-up",
        "path:deploy/chart/values.yaml",
        "flag:--atomic",
    }
    assert "tool:celery" in typed_subjects("缩略图由 Celery 任务异步生成")
    assert "tool:celery" not in typed_subjects("Thumbnails are made by Celery tasks")  # prose words only in CJK text


LESSONS = [
    "Tried upgrading controller-runtime to v0.20; it broke the webhook server registration, so I reverted and nothing was committed.",
    "昨天试过把 FastAPI 升级到 0.115，结果 OpenAPI 文档生成报错，已经回滚了，什么都没提交。",
    "Ich habe versucht, die Worker auf Python 3.13 zu heben; pdfminer ist abgestürzt, also habe ich alles zurückgerollt.",
]


@pytest.mark.parametrize("report", LESSONS)
async def test_a_reverted_attempt_in_a_turn_report_is_a_lesson(service: MemoryService, report: str) -> None:
    result = await capture(service, TurnStop(final_report=report), scope=PROJECT)  # no changed paths
    assert result.status == "stored"
    assert await live(service) == [("lesson", report, True, False)]


def test_a_report_without_a_failure_or_without_an_attempt_is_no_lesson() -> None:
    assert lesson_candidates("Added a BackupReady condition; make test passes.") == ()
    assert lesson_candidates("The build failed on CI because the runner was down.") == ()


def test_a_user_prompt_that_reports_a_reverted_attempt_is_a_lesson() -> None:
    (c,) = statement_candidates(UserPrompt(text=LESSONS[1])).candidates
    assert (c.kind, c.important, c.mandatory) == ("lesson", True, False)


MANDATORY = [
    pytest.param("Always run `go test -race ./...` before you tell me something is done.", True, id="done-gate"),
    pytest.param("Never push to main.", True, id="push-main"),
    pytest.param("Never commit the .env file; the template is .env.example.", True, id="commit-env"),
    pytest.param("提交之前一定要跑 `pytest -q`，全部通过才算完成。", True, id="zh-gate"),
    pytest.param(
        "Bevor du sagst, dass etwas fertig ist, lass immer `python manage.py test` laufen.", True, id="de-gate"
    ),
    pytest.param("Never log full card numbers or CVVs, not even at debug level.", False, id="conditional-rule"),
    pytest.param(
        "Finalizers are removed only after the external backup is confirmed deleted.", False, id="component-rule"
    ),
    pytest.param("We use shopspring/decimal for all money math.", False, id="convention"),
]


@pytest.mark.parametrize(("text", "mandatory"), MANDATORY)
def test_only_workflow_rules_and_the_lifecycle_are_mandatory(text: str, mandatory: bool) -> None:
    (c,) = statement_candidates(UserPrompt(text=text)).candidates
    assert c.mandatory is mandatory
    assert c.important or c.kind == "convention"
    assert is_mandatory("Whatever it says", lifecycle=True, rule=False)


@pytest.mark.parametrize(
    "text",
    ["Die Buchungsmodelle liegen in ledger/models.py.", "上传组件在 web/src/components/Upload.vue。",
     "There are 14 modules in src and the biggest one is organize.rs at 900 lines."],
)  # fmt: skip
def test_locations_and_inventories_are_rejected_in_each_language(text: str) -> None:
    decision = admit(Candidate(kind="fact", text=text, origin="statement"), evidence={"event": text})
    assert decision.reason in ("location_only", "file_inventory")


def _unit(*xs: float) -> tuple[float, ...]:
    norm = sum(x * x for x in xs) ** 0.5
    return tuple(x / norm for x in xs)


def _entry_plans(semantic: Semantic | None, first: str, second: str) -> list[str]:
    entry = plan_candidates([Candidate(kind="constraint", text=first, origin="statement")], [])[0]
    assert entry.action == "add"
    cands = [Candidate(kind="constraint", text=first, origin="statement"),
             Candidate(kind="constraint", text=second, origin="statement")]  # fmt: skip
    return [p.action for p in plan_candidates(cands, [], semantic)]


RECONCILE = (
    "Reconcile loops must be idempotent: running one twice on the same object may never create a second resource."
)
AGAIN = "Every reconciler has to be safe to run again on the same object without making duplicates."


def test_a_close_vector_and_a_shared_subject_token_make_a_paraphrase_the_same_entry() -> None:
    close = Semantic(
        vectors={semantic_key(RECONCILE): _unit(1, 0.2), semantic_key(AGAIN): _unit(1, 0.3)}, threshold=0.62
    )
    far = Semantic(vectors={semantic_key(RECONCILE): _unit(1, 0), semantic_key(AGAIN): _unit(0, 1)}, threshold=0.62)
    assert _entry_plans(None, RECONCILE, AGAIN) == ["add", "add"]  # lexically too far apart: the limit without a model
    assert _entry_plans(far, RECONCILE, AGAIN) == ["add", "add"]
    assert _entry_plans(close, RECONCILE, AGAIN)[1] in ("unchanged", "revise")


def test_a_close_vector_without_a_shared_subject_token_is_another_rule() -> None:
    a, b = "Never log card numbers.", "Always pin Docker base images by digest."
    close = Semantic(vectors={semantic_key(a): _unit(1, 0.1), semantic_key(b): _unit(1, 0.1)}, threshold=0.62)
    assert _entry_plans(close, a, b) == ["add", "add"]


async def test_only_calibrated_models_get_the_semantic_rule() -> None:
    from memstone.capture.pipeline import _semantic
    from memstone.embedding import load_model

    cand = [Candidate(kind="fact", text="The docs site is Docusaurus under docs/.", origin="statement")]
    assert await _semantic(load_model("hashing-64"), cand, []) is None  # no threshold was calibrated for it
    assert await _semantic(None, cand, []) is None
    assert set(SEMANTIC_THRESHOLDS) == {"use-multilingual-v3", "minilm-l6-int8"}
