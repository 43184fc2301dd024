"""Issue 16 (capjunk9): textbook statements, hedges of opinion, single meetings and "back in five" read by
structure and closed cue classes (``capture/_general.py``, ``capture/_cues.py``).

A statement under a technology topic ("In Go, …", "Em Java, …", "파이썬에서 …"), about a concept of computing
("Une clé étrangère …", "Le protocole TCP …", "Un UUID …") with nothing of the project in it is ``obvious``; a
hedge of opinion ("me da que", "à mon avis", "secondo me", "아닐까 싶어요") is speculation; a request bounded by a
meeting or by what the speaker does meanwhile is a one-off; "I'll be back in five" is chatter; what a file or a
code symbol holds, sets or returns ("Il file config/app.php imposta …", "La fonction f() renvoie …") is obvious.
The same shapes with a project anchor (a contrast, another product, a quantity, a place of the deployment, a
domain thing, a rule word, a second clause) are kept. None of these sentences is in the benchmark data; every
rejected one was admitted on main (ee30b53)."""

from __future__ import annotations

import pytest

from memstone.capture import UserPrompt, statement_candidates
from memstone.capture.admission import admit


def _reasons(text: str) -> set[str | None]:
    """Why the line is skipped by the statement reader, or what admission says of each candidate it gives."""
    analysis = statement_candidates(UserPrompt(text=text))
    if not analysis.candidates:
        return {s.reason for s in analysis.skipped}
    return {admit(c, evidence={"event": text}).reason for c in analysis.candidates}


REJECTED = [
    pytest.param("In Kotlin, data classes generate equals and hashCode.", "obvious", id="en-topic"),
    pytest.param("Em Java, as strings são imutáveis.", "obvious", id="pt-topic"),
    pytest.param("Nel linguaggio Rust, il borrow checker impedisce i data race.", "obvious", id="it-topic-class"),
    pytest.param("En TypeScript, `readonly` impide reasignar una propiedad.", "obvious", id="es-topic-keyword"),
    pytest.param("En Python, los sets no guardan el orden desde la versión 2.", "obvious", id="es-topic-since"),
    pytest.param("파이썬에서 튜플은 변경할 수 없습니다.", "obvious", id="ko-topic"),
    pytest.param(
        "Ein Fremdschlüssel verweist auf den Primärschlüssel einer anderen Tabelle.", "obvious", id="de-concept"
    ),
    pytest.param("Un UUID identifica un registro sin coordinación central.", "obvious", id="es-indefinite-acronym"),
    pytest.param("Le protocole TCP garantit l'ordre des paquets.", "obvious", id="fr-class-subject"),
    pytest.param("Rust は所有権で安全性を保証する言語です。", "obvious", id="ja-class-predicate"),
    pytest.param("트랜잭션은 모두 성공하거나 모두 실패합니다.", "obvious", id="ko-concept"),
    pytest.param("Me da que el índice no se está usando.", "speculation", id="es-me-da-que"),
    pytest.param("À mon avis, le cache est périmé.", "speculation", id="fr-a-mon-avis"),
    pytest.param("Secondo me è colpa del timeout del proxy.", "speculation", id="it-secondo-me"),
    pytest.param("이거 네트워크 문제 아닐까 싶어요.", "speculation", id="ko-anilkka"),
    pytest.param("Antes de la reunión, sube la rama a staging.", "one_off", id="es-before-meeting"),
    pytest.param("Desativa o alerta enquanto eu reinicio o banco.", "one_off", id="pt-while-i"),
    pytest.param("다음 주 금요일까지 보고서 화면 고쳐 주세요.", "one_off", id="ko-until-weekday"),
    pytest.param("Je reviens dans cinq minutes, je prends un café.", "one_off", id="fr-back-in"),
    # what a file or a code symbol holds, sets or returns, read off it
    pytest.param("Il file config/app.php imposta la lingua predefinita su italiano.", "obvious", id="it-file-sets"),
    pytest.param("La fonction calcul_tva() renvoie un décimal.", "obvious", id="fr-function-returns"),
    pytest.param("There is a `tsconfig.json` in the web folder.", "obvious", id="en-exists-backticked-file"),
    pytest.param("UserService.java 里定义了用户相关的接口。", "obvious", id="zh-file-defines"),
]


@pytest.mark.parametrize(("text", "reason"), REJECTED)
def test_rejected(text: str, reason: str) -> None:
    assert reason in _reasons(text)


ADMITTED = [
    pytest.param("In React, state lives in Zustand stores, not in context.", id="en-topic-contrast"),
    pytest.param("In React, form state lives in Zustand stores.", id="en-topic-other-product"),
    pytest.param("In CI, the lint job runs before the unit tests.", id="en-ci-is-a-place"),
    pytest.param("In production, logs go to Loki through the collector.", id="en-production"),
    pytest.param("En Python, usamos ruff para formatear y revisar el código.", id="es-topic-we"),
    pytest.param("A kiln that reports no temperature for ten minutes is marked as stale.", id="en-domain-subject"),
    pytest.param("A chave da API de pagamentos fica no Vault, em secret/pagamentos.", id="pt-definite-a"),
    pytest.param("Un pedido anulado se queda en el historial con su número de factura.", id="es-domain-indefinite"),
    pytest.param("캐시는 Redis에 두고 5분 뒤에 만료됩니다.", id="ko-cache-with-product"),
    pytest.param("Le worker d'export tourne toutes les nuits à 2h, heure de Paris.", id="fr-schedule"),
    pytest.param("`settings/prod.py` sets DEBUG to False; never flip it on a live server.", id="en-file-rule"),
    pytest.param(
        "Il file .env.example contiene solo segnaposto; lo script di setup chiede i valori veri.", id="it-two-clauses"
    ),
    pytest.param("Run `make seed` before the e2e tests, every time.", id="en-command-span"),
]


@pytest.mark.parametrize("text", ADMITTED)
def test_admitted(text: str) -> None:
    assert _reasons(text) == {None}
