"""Issue 16 (capobv): junk read by its predicate, in every capture language (``capture/_glance.py``).

Obvious facts beyond locations (existence of an artifact, what a file says, what the project is made with, counts
of its parts), one-offs scoped to a unit of work, restated agent prompts and status chatter are rejected at
admission; each shape has a near miss of the same subject that must be admitted (a rule, a reason, a fact not
visible at a glance). None of these sentences is in the benchmark data. All of them were admitted before."""

from __future__ import annotations

import pytest

from memstone.capture.admission import admit
from memstone.capture.candidates import Candidate


def _reason(text: str, origin: str = "statement") -> str | None:
    return admit(Candidate(kind="fact", text=text, origin=origin), evidence={"event": text}).reason


REJECTED = [
    # existence of a repository artifact
    pytest.param("We have a Justfile at the top of the repo.", "obvious", id="en-exists"),
    pytest.param("C'è una cartella scripts con gli script di deploy.", "obvious", id="it-exists"),
    pytest.param("Il y a un Dockerfile et un docker-compose.yml.", "obvious", id="fr-exists"),
    pytest.param("Hay un Makefile con los objetivos habituales.", "obvious", id="es-exists"),
    pytest.param("仓库里有一个 Jenkinsfile。", "obvious", id="zh-exists"),
    pytest.param("ルートに Makefile があります。", "obvious", id="ja-exists"),
    pytest.param("Im Backend gibt es ein Jenkinsfile und eine sonar.properties.", "obvious", id="de-gibt-es"),
    pytest.param("La cartella deploy/ contiene gli script di Ansible.", "obvious", id="it-folder-holds"),
    pytest.param("The repo contains a folder called tools with helper scripts.", "obvious", id="en-repo-holds-folder"),
    # what a file says
    pytest.param("El package.json define los scripts de build y de test.", "obvious", id="es-file-defines"),
    pytest.param("In der settings/base.py steht das Limit 25.", "obvious", id="de-value-in-file"),
    pytest.param("The CONTRIBUTING.md says to open a draft PR first.", "obvious", id="en-file-says"),
    pytest.param("Il README spiega come avviare il server.", "obvious", id="it-readme-says"),
    pytest.param("Dans le fichier config.yaml, le timeout est 30.", "obvious", id="fr-in-file-value"),
    pytest.param("README 里写着要用 Node 20。", "obvious", id="zh-readme-says"),
    # what the project is made with
    pytest.param("The backend is written in Go with Echo.", "obvious", id="en-written-in"),
    pytest.param("Le projet utilise Gradle.", "obvious", id="fr-uses"),
    pytest.param("El proyecto está escrito en TypeScript.", "obvious", id="es-written-in"),
    pytest.param("このプロジェクトは Kotlin で書かれています。", "obvious", id="ja-written-in"),
    pytest.param("这个项目是用 Rust 写的。", "obvious", id="zh-written-in"),
    pytest.param("Les tests sont écrits avec ExUnit.", "obvious", id="fr-tests-written-with"),
    pytest.param("El frontend está hecho con Angular 17.", "obvious", id="es-made-with"),
    pytest.param(
        "The backend is a Go service with Chi and the frontend is written in Vue.", "obvious", id="en-two-clauses"
    ),
    pytest.param("前端用的是 React。", "obvious", id="zh-uses"),
    # a count of its parts
    pytest.param(
        "We run five Sidekiq queues: critical, default, mailers, low and reports.", "obvious", id="en-n-named"
    ),
    pytest.param("Migrations are kept in Alembic and there are about 90 of them.", "obvious", id="en-n-of-them"),
    pytest.param("系统分为 gateway、order、stock 三个服务。", "obvious", id="zh-divided-into"),
    pytest.param("The monorepo has seven packages.", "obvious", id="en-count"),
    pytest.param("Abbiamo 48 test di integrazione: ci sono 48 test in tutto.", "obvious", id="it-count"),
    pytest.param("L'API a douze endpoints.", "obvious", id="fr-count"),
    pytest.param("后端一共有八个服务。", "obvious", id="zh-count"),
    # one-offs scoped to a unit of work
    pytest.param("In this hotfix skip the snapshot tests.", "one_off", id="en-this-hotfix"),
    pytest.param("Per questa correzione usa il vecchio client HTTP.", "one_off", id="it-this-fix"),
    pytest.param("Pour cette correction, ne touche pas aux migrations.", "one_off", id="fr-this-fix"),
    pytest.param("Para este arreglo no cambies la API.", "one_off", id="es-this-fix"),
    pytest.param("Für diese Änderung bitte keine neuen Abhängigkeiten.", "one_off", id="de-this-change"),
    pytest.param("这个改动不要动数据库。", "one_off", id="zh-this-change"),
    pytest.param("この修正ではテストを追加しなくていいです。", "one_off", id="ja-this-fix"),
    # the agent addressed about its own behaviour, naming nothing of the project
    pytest.param("Don't make up answers; say so when you are unsure.", "system_restatement", id="en-agent"),
    pytest.param("Rispondi sempre alle istruzioni dell'utente, senza inventare.", "system_restatement", id="it-agent"),
    pytest.param("N'invente jamais de réponse, demande des précisions.", "system_restatement", id="fr-agent"),
    pytest.param("不要编造内容，回答前先确认。", "system_restatement", id="zh-agent"),
    pytest.param(
        "Keep your answers brief and put code in markdown blocks.", "system_restatement", id="en-your-answers"
    ),
    # status chatter
    pytest.param("Update: the login page is merged, next up is the signup form.", "chatter", id="en-update-label"),
    pytest.param("Hang on, I'm checking the logs.", "chatter", id="en-status"),
    pytest.param("我先去开个会，回来继续。", "chatter", id="zh-away"),
    pytest.param("今テストを実行中です、ちょっとお待ちください。", "chatter", id="ja-now"),
]


@pytest.mark.parametrize(("text", "reason"), REJECTED)
def test_junk_shapes_are_rejected_by_their_predicate(text: str, reason: str) -> None:
    assert _reason(text) == reason


KEPT = [
    "We have a Justfile, but never call it from CI: the runners don't have just installed.",  # a rule
    "The backend is written in Go because the payment SDK only exists for Go.",  # a reason
    "We stay on Gradle 8 since the Android plugin breaks on 9.",  # a reason
    "In produzione il timeout è 60 perché il gateway è lento.",  # a reason, not a file's content
    "La CI déploie depuis main, jamais depuis une branche.",  # a rule about the CI
    "后端的八个服务都必须有健康检查接口。",  # a rule about every part
    "Every PR needs a changelog line, including hotfixes.",  # generic: not this PR
    "Cada cambio de la API lleva su versión nueva en el header.",  # "cada": generic
    "Reply in French, but commit messages stay in English.",  # a personal preference, one agent term
    "Explain the migration plan in the PR description, with the rollback step.",  # one agent term, project words
    "Integration tests run against a real Kafka in Docker, not an embedded broker.",  # a fact not at a glance
    "The frontend is built with Vite and served from the CDN, never from the API pods.",  # a rule
    "The worker queue holds at most 5 jobs per tenant; more are rejected with 429.",  # a limit, not a count
    "La base de datos es PostgreSQL 16 en RDS, con réplicas de lectura en dos zonas.",  # not at a glance
    "Update the changelog whenever the public API changes.",  # "update" as a verb
    "The Makefile target `make release` signs the artifacts with cosign.",  # a command: how, not what exists
]


@pytest.mark.parametrize("text", KEPT)
def test_near_misses_of_the_same_subject_are_admitted(text: str) -> None:
    assert _reason(text) is None


def test_a_correction_is_never_obvious() -> None:
    assert _reason("The backend is written in Go with Echo.", origin="correction") is None


def test_a_status_report_read_as_a_correction_is_still_chatter() -> None:
    # "… is done, I'm on X now" reads as an unmarked change ("now"); a status label and "I'm on" say what it is.
    assert _reason("Progress: the invoice screen is done, I'm on the CSV export now.", origin="correction") == "chatter"
