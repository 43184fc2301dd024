"""Issue 16: capture reads Spanish, French, Portuguese, Italian and Japanese sentences with their own cues (it used to
read them with the English tables, or Japanese with the Chinese ones). None of these sentences is in the benchmark
data."""

from __future__ import annotations

import pytest

from memstone.capture import UserPrompt, statement_candidates
from memstone.capture._language import language, lifecycle_stage_ml, read_sentence
from memstone.capture.statements import is_mandatory, lesson_candidates


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Los endpoints públicos se documentan con OpenAPI en docs/api.yaml.", "es"),
        ("On nomme les branches avec le numéro du ticket.", "fr"),
        ("As migrações são escritas com Alembic e ficam em migrations/versions.", "pt"),
        ("Le migrazioni sono scritte con Alembic e stanno nella cartella migrations.", "it"),
        ("マイグレーションは Prisma Migrate で書きます。", "ja"),
        ("迁移脚本用 Alembic 写。", "zh"),
        ("Die Migrationen schreiben wir mit Alembic.", "de"),
        ("wandb api key: WANDB_API_KEY=f82a1804225f969f1a6e7c618c8fc9d640075fcc", "en"),  # hex letters are no words
    ],
)
def test_language_tells_the_languages_apart(text: str, lang: str) -> None:
    assert language(text) == lang


SKIPPED = [
    pytest.param("¿Dónde se configuran las variables de entorno del worker?", "es", "question", id="es-question"),
    pytest.param(
        "Tal vez deberíamos mover las colas a RabbitMQ, no estoy seguro.", "es", "speculation", id="es-speculation"
    ),
    pytest.param("Por ahora no toques el módulo de pagos.", "es", "one_off", id="es-one-off"),
    pytest.param("Arregla el test que falla en el controlador de usuarios.", "es", "task_request", id="es-task"),
    pytest.param("Perfecto, muchas gracias", "es", "chatter", id="es-chatter"),
    pytest.param("Est-ce que le cache Redis est partagé entre les workers ?", "fr", "question", id="fr-question"),
    pytest.param(
        "Il faudrait peut-être passer à PostgreSQL 17 un jour, à voir.", "fr", "speculation", id="fr-speculation"
    ),
    pytest.param("Pour le moment, ne touche pas au module de facturation.", "fr", "one_off", id="fr-one-off"),
    pytest.param("Corrige le test qui échoue dans le contrôleur des commandes.", "fr", "task_request", id="fr-task"),
    pytest.param("Super, merci beaucoup", "fr", "chatter", id="fr-chatter"),
    pytest.param("Onde ficam as variáveis de ambiente do worker?", "pt", "question", id="pt-question"),
    pytest.param(
        "Talvez seja melhor usar RabbitMQ para as filas, não tenho certeza.", "pt", "speculation", id="pt-speculation"
    ),
    pytest.param("Por enquanto não mexas no módulo de pagamentos.", "pt", "one_off", id="pt-one-off"),
    pytest.param("Corrige o teste que falha no controlador de utilizadores.", "pt", "task_request", id="pt-task"),
    pytest.param("Perfeito, muito obrigado", "pt", "chatter", id="pt-chatter"),
    pytest.param("Dove sono configurate le variabili d'ambiente del worker?", "it", "question", id="it-question"),
    pytest.param(
        "Forse conviene spostare le code su RabbitMQ, non sono sicuro.", "it", "speculation", id="it-speculation"
    ),
    pytest.param("Per ora non toccare il modulo dei pagamenti.", "it", "one_off", id="it-one-off"),
    pytest.param("Correggi il test che fallisce nel controller degli utenti.", "it", "task_request", id="it-task"),
    pytest.param("Perfetto, grazie mille", "it", "chatter", id="it-chatter"),
    pytest.param("ワーカーの環境変数はどこで設定していますか。", "ja", "question", id="ja-question"),
    pytest.param("いずれ RabbitMQ に移したほうがいいかもしれません。", "ja", "speculation", id="ja-speculation"),
    pytest.param("今回は決済モジュールには触らないでください。", "ja", "one_off", id="ja-one-off"),
    pytest.param("ユーザーコントローラの失敗しているテストを直してください。", "ja", "task_request", id="ja-task"),
    pytest.param("ログイン画面の修正をお願いします。", "ja", "task_request", id="ja-task-onegai"),
    pytest.param("了解です、ありがとうございます！", "ja", "chatter", id="ja-chatter"),
]


@pytest.mark.parametrize(("text", "lang", "reason"), SKIPPED)
def test_questions_speculation_one_offs_tasks_and_chatter_are_skipped_in_each_language(
    text: str, lang: str, reason: str
) -> None:
    analysis = statement_candidates(UserPrompt(text=text))
    assert analysis.candidates == ()
    assert {s.reason for s in analysis.skipped} == {reason}
    if reason != "chatter":  # short chatter has too few words to tell its language, and is read in all of them
        assert read_sentence(text).lang == lang


def test_a_sentence_ending_in_a_question_mark_is_a_question_in_any_language() -> None:
    assert read_sentence("CI は GitHub Actions のまま？").question
    assert read_sentence("Und der Export läuft weiter über SFTP?", "de").question


KEPT = [
    pytest.param("Nunca subas el fichero .env al repositorio.", "constraint", id="es-constraint"),
    pytest.param(
        "Al esquema de producción no se le toca a mano: todo va por migraciones.",
        "constraint",
        id="es-impersonal-negation",
    ),
    pytest.param("Ne jamais pousser directement sur la branche main.", "constraint", id="fr-constraint"),
    pytest.param("Les secrets ne passent que par Vault, rien d'autre.", "constraint", id="fr-ne-que"),
    pytest.param("Nunca faças commit do ficheiro .env.", "constraint", id="pt-constraint"),
    pytest.param("Non fare mai commit del file .env.", "constraint", id="it-constraint"),
    pytest.param(".env ファイルは絶対にコミットしないでください。", "constraint", id="ja-constraint"),
    pytest.param("Usamos Prettier con la configuración por defecto.", "convention", id="es-we"),
    pytest.param("Usiamo Black con righe da 100 caratteri.", "convention", id="it-we"),
    pytest.param("Prefiro mensagens de commit curtas e no imperativo.", "preference", id="pt-preference"),
    pytest.param("個人的には、差分だけ見せてもらえるほうが好きです。", "preference", id="ja-preference-not-a-request"),
    pytest.param("コードのコメントは英語でお願いします。", "preference", id="ja-manner-request-is-a-preference"),
]


PLAIN_FACTS = [
    "Hoy en día el frontend se compila con Vite.",  # "hoy en día" is "nowadays", not "today"
    "Le service de paiement parle à Stripe via des webhooks signés.",  # a name after an accented word
    "O serviço de pagamentos fala com o Stripe por webhooks assinados.",
    "データベースのバックアップは毎晩 pg_dump で取っています。",
]


@pytest.mark.parametrize("text", PLAIN_FACTS)
def test_plain_statements_of_project_fact_are_kept(text: str) -> None:
    assert len(statement_candidates(UserPrompt(text=text)).candidates) == 1


@pytest.mark.parametrize(("text", "kind"), KEPT)
def test_rules_without_an_english_trigger_word_keep_their_kind(text: str, kind: str) -> None:
    (c,) = statement_candidates(UserPrompt(text=text)).candidates
    assert c.kind == kind


@pytest.mark.parametrize(
    ("text", "replaced"),
    [
        ("Ya no usamos Jenkins; el CI corre en GitLab CI desde marzo.", "Jenkins"),
        ("On n'utilise plus Jenkins : la CI tourne sur GitLab depuis mars.", "Jenkins"),
        ("Já não usamos o Jenkins; o CI corre agora no GitLab desde março.", "Jenkins"),
        ("Non usiamo più Jenkins: la CI gira su GitLab da marzo.", "Jenkins"),
        ("CI は Jenkins から GitLab CI に移行しました。", "Jenkins"),
        ("Lint は ESLint をやめて Biome にしました。", "ESLint"),
    ],
)
def test_an_unmarked_change_is_a_correction_that_names_what_it_replaces(text: str, replaced: str) -> None:
    (c,) = statement_candidates(UserPrompt(text=text)).candidates
    assert c.kind == "correction"
    assert replaced in c.replaces


@pytest.mark.parametrize(
    "report",
    [
        "Probé a cambiar el driver de Postgres por pg-native, pero falló la compilación en Alpine, así que lo revertí.",
        "J'ai essayé de remplacer Webpack par Vite, mais le build SSR a échoué, donc j'ai tout annulé.",
        "Tentei trocar o driver do Postgres pelo asyncpg, mas os testes falharam e reverti tudo.",
        "Ho provato a sostituire Webpack con Vite, ma la build SSR è fallita e ho annullato tutto.",
        "Webpack を Vite に置き換えてみましたが、SSR のビルドが失敗したので元に戻しました。",
    ],
)
def test_a_reverted_attempt_is_a_lesson_in_each_language(report: str) -> None:
    assert [c.kind for c in lesson_candidates(report)] == ["lesson"]


@pytest.mark.parametrize(
    "text",
    [
        "Eres un asistente de programación experto en Django. Responde en español.",
        "Tu es un assistant de développement qui aide l'équipe.",
        "Você é um assistente especialista em Odoo.",
        "Sei un assistente esperto di Python.",
        "あなたは親切なコーディングアシスタントです。",
        "Be concise and follow the repository conventions.",
        "Sé conciso y sigue las convenciones del repositorio.",
    ],
)
def test_a_restated_system_prompt_is_skipped_in_each_language(text: str) -> None:
    analysis = statement_candidates(UserPrompt(text=text))
    assert analysis.candidates == ()
    assert [s.reason for s in analysis.skipped] == ["system_restatement"]


def test_a_short_answer_preference_is_no_system_restatement() -> None:
    (c,) = statement_candidates(UserPrompt(text="Prefiero respuestas breves, con ejemplos de código.")).candidates
    assert c.kind == "preference"


@pytest.mark.parametrize(
    ("text", "stage"),
    [
        ("La app todavía no está en producción; podemos romper la API.", "development"),
        ("Le service est en production depuis l'an dernier.", "production"),
        ("O portal está em produção em três lojas.", "production"),
        ("L'app è in beta con i primi clienti.", "beta"),
        ("このアプリは公開ベータ中で、実際の利用者がいます。", "beta"),
    ],
)
def test_the_lifecycle_stage_in_each_language(text: str, stage: str) -> None:
    assert lifecycle_stage_ml(text) == stage


@pytest.mark.parametrize(
    "text",
    [
        "Antes de cada commit hay que pasar `make test`.",
        "Avant chaque merge, il faut lancer les tests.",
        "Prima di ogni push bisogna lanciare i test.",
        "コミットの前に必ずテストを実行してください。",
    ],
)
def test_workflow_gates_in_each_language_are_mandatory(text: str) -> None:
    assert is_mandatory(text, lifecycle=False, rule=True)


def test_a_greeting_that_opens_a_session_is_chatter() -> None:
    for text in ("Hola, seguimos con la API de pagos.", "Vamos continuar com o módulo de stock."):
        analysis = statement_candidates(UserPrompt(text=text))
        assert analysis.candidates == ()
        assert "chatter" in {s.reason for s in analysis.skipped}
