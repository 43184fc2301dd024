"""Issue 16 (capjunk8): general knowledge and Korean junk, read by what a sentence is about
(``capture/_general.py``).

A statement that defines, compares or says what a technology can do, with nothing of the project in it, is
``obvious``; the same shape with a project anchor (we/our, a code span, a unit, a place of this deployment, a
reason, a rule) is kept. Korean hedges, single occasions and thanks are junk; a Korean rule is kept. None of these
sentences is in the benchmark data. Every rejected one was admitted before this change."""

from __future__ import annotations

import pytest

from memstone.capture.admission import admit
from memstone.capture.candidates import Candidate


def _reason(text: str, origin: str = "statement") -> str | None:
    return admit(Candidate(kind="fact", text=text, origin=origin), evidence={"event": text}).reason


REJECTED = [
    pytest.param("TLS is a protocol that encrypts traffic between two hosts.", "obvious", id="en-is-a"),
    pytest.param("An index can make reads faster on large tables.", "obvious", id="en-generic-indefinite-can"),
    pytest.param("SQLite can keep a whole database inside a single file.", "obvious", id="en-acronym-can"),
    pytest.param("Docker es una herramienta para empaquetar aplicaciones en contenedores.", "obvious", id="es-es-una"),
    pytest.param("Une transaction peut être annulée avec un rollback.", "obvious", id="fr-generic-peut"),
    pytest.param("YAML ist eine Obermenge von JSON.", "obvious", id="de-ist-eine"),
    pytest.param("Um cache pode guardar respostas em memória.", "obvious", id="pt-generic-pode"),
    pytest.param("GraphQL 是一种用于 API 的查询语言。", "obvious", id="zh-shi-yizhong"),
    pytest.param("Nginx は HTTP サーバーの一種です。", "obvious", id="ja-no-isshu"),
    pytest.param("Docker는 컨테이너를 실행할 수 있습니다.", "obvious", id="ko-name-able"),
    pytest.param("아마 캐시 설정이 문제인 것 같아요.", "speculation", id="ko-hedge"),
    pytest.param("이번에는 로그인 화면의 문구만 고쳐 주세요.", "one_off", id="ko-this-time"),
    pytest.param("고맙습니다, 덕분에 해결됐어요!", "chatter", id="ko-thanks"),
    pytest.param("이번 배포에서는 알림 기능은 건드리지 마세요.", "one_off", id="ko-occasion-negative-imperative"),
    pytest.param("docs 폴더에 배포 가이드 파일이 있습니다.", "obvious", id="ko-location"),
    pytest.param("관리자 앱에는 탭이 다섯 개 있습니다.", "obvious", id="ko-count"),
    pytest.param("CONTRIBUTING.md에 커밋 규칙이 적혀 있습니다.", "obvious", id="ko-file-says"),
    pytest.param("이 앱은 SwiftUI로 작성되어 있습니다.", "obvious", id="ko-made-with"),
    pytest.param(
        "Act as a senior Rust reviewer and ask me before you delete anything.",
        "system_restatement",
        id="en-act-as-ask-me",
    ),
    pytest.param(
        "Agis comme un développeur senior et demande-moi avant de renommer un fichier.",
        "system_restatement",
        id="fr-agis-comme",
    ),
    pytest.param("遇到不明白的地方先问我，别自己猜。", "system_restatement", id="zh-ask-me-first"),
]


@pytest.mark.parametrize(("text", "reason"), REJECTED)
def test_rejected(text: str, reason: str) -> None:
    assert _reason(text) == reason


ADMITTED = [
    pytest.param("Our session store is Redis, a key-value store kept in memory.", id="en-our"),
    pytest.param("TLS is a must here: the card terminals refuse plain HTTP.", id="en-here-reason"),
    pytest.param("Uploads can be up to 25 MB; larger ones go to the resumable endpoint.", id="en-unit"),
    pytest.param("Anything older is an archived order and is read-only.", id="en-quantified-subject"),
    pytest.param("Usamos Docker para empaquetar la API y el worker.", id="es-first-person-verb"),
    pytest.param("Le cache peut être vidé avec `make cache-clear` après chaque import.", id="fr-code-span"),
    pytest.param("GraphQL 在线上只开放给内部后台，因为外部客户端用 REST。", id="zh-place-reason"),
    pytest.param("Nginx は本番でだけ TLS を終端します。", id="ja-production"),
    pytest.param("결제 웹훅은 두 번 올 수도 있으므로 반드시 멱등하게 처리해야 합니다.", id="ko-rule-with-may"),
    pytest.param("설정 파일은 반드시 config 폴더에 있어야 합니다.", id="ko-location-rule"),
    pytest.param("마이그레이션은 절대 수정하지 마세요; 새 파일을 추가합니다.", id="ko-never"),
    pytest.param("Ask me before you run any migration against production, every time.", id="en-ask-me-rule"),
]


@pytest.mark.parametrize("text", ADMITTED)
def test_admitted(text: str) -> None:
    assert _reason(text) is None
