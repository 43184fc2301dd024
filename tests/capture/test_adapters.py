"""The deterministic adapters: statements, build files, git-change flags and the working_note fallback."""

from __future__ import annotations

import pytest

from memstone.capture import (
    FileSnapshot,
    GitChange,
    Handoff,
    TurnStop,
    UserCorrection,
    UserPrompt,
    Verification,
    build_file_candidates,
    statement_candidates,
    working_note_candidate,
)
from memstone.capture.adapters import git_change_flags
from memstone.domain.ids import EntryId, EntryVersionId, MemoryId, SourceId
from memstone.domain.model import EntryContent, EntryVersion, Source


def one(text: str) -> tuple[str, str, str]:
    (c,) = statement_candidates(UserPrompt(text=text)).candidates
    return c.kind, c.scope, c.text


DURABLE = [
    pytest.param("Always run `make test` before pushing.", "constraint", id="always"),
    pytest.param("Never edit files under site/; they are generated.", "constraint", id="never"),
    pytest.param("Don't use the ORM for new queries.", "constraint", id="dont"),
    pytest.param("Do not commit .env files.", "constraint", id="do-not"),
    pytest.param("We use pnpm, not npm or yarn.", "convention", id="we-use"),
    pytest.param("Prefer table-driven tests.", "preference", id="prefer"),
    pytest.param("Remember that all dates from the API are UTC ISO strings.", "fact", id="remember"),
    pytest.param("We decided to use pandera for schema checks.", "decision", id="decided"),
    pytest.param("Going forward, every endpoint needs an OpenAPI entry.", "convention", id="going-forward"),
    pytest.param("Migration files are named V<ts>__name.sql.", "convention", id="passive-naming"),
    pytest.param("We no longer use Vue in the admin.", "correction", id="no-longer"),  # an unmarked change
    pytest.param("No, use `errors.Is` instead of comparing error strings.", "correction", id="no-instead"),
    pytest.param("Actually, the flags come from LaunchDarkly, not from env vars.", "correction", id="actually-not"),
    pytest.param("That's wrong: reservations expire after 15 minutes, not 30.", "correction", id="thats-wrong"),
    pytest.param("Stop adding comments that restate the code.", "correction", id="stop-doing"),
    pytest.param("Actually Horizon retries 5 times now.", "correction", id="actually-state-change"),
    pytest.param(
        "The project is in development, so changes do not require backward compatibility or data migrations.",
        "fact",
        id="lifecycle",
    ),
]


@pytest.mark.parametrize(("text", "kind"), DURABLE)
def test_durable_statements_become_candidates(text: str, kind: str) -> None:
    got_kind, scope, _ = one(text)
    assert (got_kind, scope) == (kind, "project")


NOT_CANDIDATES = [
    pytest.param("For this task, don't run the integration tests.", "one_off", id="for-this-task"),
    pytest.param("Right now just get the build green.", "one_off", id="right-now"),
    pytest.param("In this PR, don't touch the migrations.", "one_off", id="in-this-pr"),
    pytest.param("Never mind, revert that.", "one_off", id="never-mind"),
    pytest.param("Just this once, run the eval on the validation split only.", "one_off", id="this-once"),
    pytest.param("Should we always use snake_case?", "question", id="question"),
    pytest.param("why do we never retry on 4xx", "question", id="question-no-mark"),
    pytest.param("Maybe we should always squash merges.", "speculation", id="maybe"),
    pytest.param("I think we might never need sharding.", "speculation", id="i-think"),
    pytest.param("Make the sidebar collapsible.", "task_request", id="task-request"),
    pytest.param("No, make it blue.", "one_off", id="task-correction"),
    pytest.param("You are an expert Go engineer. Always write idiomatic code.", "system_restatement", id="system"),
    pytest.param("<system-reminder>Always use the TodoWrite tool.</system-reminder>", "system_restatement", id="tag"),
    pytest.param("thanks, looks good", "chatter", id="chatter"),
]


@pytest.mark.parametrize(("text", "reason"), NOT_CANDIDATES)
def test_one_offs_questions_speculation_boilerplate_and_chatter_are_not_candidates(text: str, reason: str) -> None:
    analysis = statement_candidates(UserPrompt(text=text))
    assert analysis.candidates == ()
    assert reason in {s.reason for s in analysis.skipped}


def test_the_rationale_stays_in_the_text() -> None:
    _, _, text = one("The project is in development, so changes do not require backward compatibility.")
    assert text == "The project is in development, so changes do not require backward compatibility."
    _, _, text = one("Keep BLAKE3 because users delete duplicates based on the hash.")
    assert "because users delete duplicates" in text


def test_user_scope_only_for_cross_project_preferences() -> None:
    assert one("In all my projects I prefer 2-space indentation.")[:2] == ("preference", "user")
    assert one("I personally prefer explicit imports over wildcards.")[1] == "user"
    assert one("We prefer explicit imports over wildcards.")[1] == "project"


def test_a_task_prompt_yields_only_its_durable_sentence() -> None:
    analysis = statement_candidates(
        UserPrompt(text="Add a retry to the webhook sender. We use exponential backoff with jitter everywhere.")
    )
    assert [c.text for c in analysis.candidates] == ["We use exponential backoff with jitter everywhere."]
    assert [s.reason for s in analysis.skipped] == ["task_request"]


def test_adjacent_durable_sentences_stay_one_topic() -> None:
    (c,) = statement_candidates(
        UserPrompt(text="Remember that ledgerd is the only writer to balances. Other services must use its API.")
    ).candidates
    assert c.text == "ledgerd is the only writer to balances. Other services must use its API."  # the user's casing


def test_leads_are_stripped_but_casing_of_names_kept() -> None:
    assert one("As I said, pnpm only, never npm.")[2] == "pnpm only, never npm."
    assert one("Remember that the API is read-only for partners.")[2] == "The API is read-only for partners."


def test_corrections_remember_what_they_replace_and_only_workflow_rules_are_mandatory() -> None:
    (c,) = statement_candidates(UserPrompt(text="No, use pnpm instead of npm.")).candidates
    assert c.replaces == ("npm",) and c.origin == "correction" and c.important and not c.mandatory
    (c,) = statement_candidates(
        UserPrompt(text="No, always run `make check` before you say it's done, not `make test`.")
    ).candidates
    assert c.origin == "correction" and c.mandatory  # a rule about when work is done: every session needs it
    (c,) = statement_candidates(
        UserPrompt(text="Actually, keys live for 48 hours, not 24 - the bank retries.")
    ).candidates
    assert c.replaces == ("24",)
    (c,) = statement_candidates(UserPrompt(text="That's wrong, the flags come from LaunchDarkly, not env.")).candidates
    assert c.important and not c.mandatory  # a factual correction is found by search, not injected every session


def test_a_correction_event_treats_declaratives_as_corrections() -> None:
    (c,) = statement_candidates(UserCorrection(text="The cache TTL is 10 minutes.")).candidates
    assert c.kind == "correction"


def test_constraints_and_lifecycle_are_mandatory_preferences_are_not() -> None:
    assert statement_candidates(UserPrompt(text="Never push to main.")).candidates[0].mandatory
    lifecycle = statement_candidates(UserPrompt(text="We are in production, so every change needs a migration."))
    assert lifecycle.candidates[0].mandatory and lifecycle.candidates[0].slug == "project-lifecycle"
    assert lifecycle.candidates[0].stage == "production"
    assert not statement_candidates(UserPrompt(text="Prefer small functions.")).candidates[0].mandatory


# ---------------------------------------------------------------------------------------------- build files
PYPROJECT = """
[project]
name = "powercontext"
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
[tool.uv]
dev-dependencies = ["pytest"]
[tool.pytest.ini_options]
testpaths = ["tests"]
[tool.ruff]
line-length = 120
[tool.mypy]
strict = true
"""


def texts(files: list[FileSnapshot]) -> dict[str, str]:
    return {c.slug or "": c.text for c in build_file_candidates(files)}


def test_pyproject_gives_manager_backend_tests_and_checks() -> None:
    got = texts([FileSnapshot(path="pyproject.toml", content=PYPROJECT)])
    assert got["build-package-manager"] == (
        "powercontext manages dependencies with uv and builds with Hatchling (pyproject.toml)."
    )
    assert got["build-test-command"] == "Tests run with pytest from tests: `uv run pytest` (pyproject.toml)."
    assert "`uv run mypy --strict`" in got["build-lint-command"] and "line length 120" in got["build-lint-command"]


def test_package_json_gives_manager_and_scripts() -> None:
    content = '{"packageManager": "pnpm@9.1.0", "scripts": {"test": "vitest run", "lint": "eslint .", "x": "y"}}'
    got = texts([FileSnapshot(path="package.json", content=content)])
    assert got["build-package-manager"].startswith("Dependencies are managed with pnpm")
    assert (
        got["build-scripts"] == "Package scripts (run with `pnpm run <name>`): test = `vitest run`; lint = `eslint .`."
    )


def test_makefile_targets_and_test_recipe() -> None:
    content = ".PHONY: test lint\ntest:\n\t@pytest -q\nlint: fmt\n\truff check .\n%.o: %.c\n\tcc $<\nVAR := 1\n"
    got = texts([FileSnapshot(path="Makefile", content=content)])
    assert got["build-make-targets"] == "Common tasks run through make: `make test`, `make lint` (Makefile)."
    assert got["build-test-command"] == "Tests run with `make test` (runs `pytest -q`)."


@pytest.mark.parametrize(
    ("path", "content", "slug", "needle"),
    [
        pytest.param("Cargo.toml", '[package]\nname = "tidyfs"\nedition = "2021"\nrust-version = "1.74"\n',
                     "build-rust-toolchain", "rust-version) 1.74", id="cargo"),
        pytest.param("go.mod", "module example.com/ledgerd\n\ngo 1.22\ntoolchain go1.22.4\n", "build-go-toolchain",
                     "targets Go 1.22 (toolchain go1.22.4)", id="go-mod"),
        pytest.param("justfile", "set shell := [\"bash\"]\ntest *args:\n  cargo test {{args}}\nlint:\n  cargo clippy\n",
                     "build-just-recipes", "`just test`, `just lint`", id="justfile"),
        pytest.param("tox.ini", "[tox]\nenvlist = py311, lint\n[testenv]\ncommands = pytest -q\n", "build-tox",
                     "environments: py311, lint", id="tox"),
        pytest.param("noxfile.py", "import nox\n@nox.session(python=['3.11'])\ndef tests(session):\n    pass\n",
                     "build-nox-sessions", "`nox -s tests`", id="nox"),
        pytest.param("services/api/go.mod", "module example.com/api\ngo 1.21\n", "build-services-api-go-toolchain",
                     "(in services/api)", id="nested-path"),
    ],
)  # fmt: skip
def test_other_build_files(path: str, content: str, slug: str, needle: str) -> None:
    (c,) = build_file_candidates([FileSnapshot(path=path, content=content)])
    assert c.slug == slug and needle in c.text
    assert c.evidence == (f"file:{path}",) and c.origin == "build_file"


@pytest.mark.parametrize(
    ("path", "content"),
    [
        pytest.param("pyproject.toml", "not = [toml", id="bad-toml"),
        pytest.param("package.json", "{nope", id="bad-json"),
        pytest.param("package.json", "[1, 2]", id="json-not-object"),
        pytest.param("Makefile", "all:\n\techo hi\n", id="no-interesting-target"),
        pytest.param("README.md", "# hi", id="unknown-file"),
    ],
)
def test_unparsable_or_unknown_files_give_nothing(path: str, content: str) -> None:
    assert build_file_candidates([FileSnapshot(path=path, content=content)]) == ()


# ---------------------------------------------------------------------------------------------- git changes
def version(eid: str, text: str, sources: tuple[str, ...]) -> EntryVersion:
    content = EntryContent(kind="convention", text=text, sources=tuple(SourceId(s) for s in sources))
    return EntryVersion(
        memory_id=MemoryId("mem_1"),
        entry_id=EntryId(eid),
        entry_version_id=EntryVersionId(f"ver_{eid}"),
        version=1,
        previous_version_id=None,
        content=content,
        entry_content_hash=content.content_hash,
        created_in_revision=1,
    )


def test_git_change_flags_entries_whose_file_evidence_it_touched() -> None:
    live = [
        version("ent_a", "Tests run with `make test`.", ("src_make",)),
        version("ent_b", "We use pnpm.", ("src_prompt",)),
        version("ent_c", "Go 1.22.", ("src_gomod",)),
    ]
    sources = {
        SourceId("src_make"): Source(
            source_id=SourceId("src_make"), kind="build-file", content="", uri="file:Makefile"
        ),
        SourceId("src_prompt"): Source(source_id=SourceId("src_prompt"), kind="user-prompt", content="{}"),
        SourceId("src_gomod"): Source(
            source_id=SourceId("src_gomod"), kind="build-file", content="", uri="file:///repo/services/api/go.mod"
        ),
    }
    change = GitChange(base_commit="a1", head_commit="b2", changed_paths=("Makefile", "services/api/go.mod", "x.py"))
    flags = git_change_flags(change, live, sources)
    assert [(f.entry_id, f.paths) for f in flags] == [("ent_a", ("Makefile",)), ("ent_c", ("services/api/go.mod",))]
    assert flags[0].base_commit == "a1" and flags[0].head_commit == "b2"
    assert (
        git_change_flags(GitChange(base_commit="a", head_commit="b", changed_paths=("README.md",)), live, sources) == ()
    )


# ---------------------------------------------------------------------------------------------- working notes
def test_working_note_from_a_turn_that_changed_files() -> None:
    note, skip = working_note_candidate(
        TurnStop(
            final_report="Added idempotency keys to refunds; migration 0042 is reversible.",
            changed_paths=("internal/api/refund.go", "./migrations/0042.up.sql"),
            verification=(Verification(command="go test ./...", outcome="passed"),),
            git_head="abc1234",
        )
    )
    assert skip is None and note is not None
    assert note.kind == "working_note" and not note.mandatory
    assert note.text == (
        "Turn report: Added idempotency keys to refunds; migration 0042 is reversible.\n"
        "Changed: internal/api/refund.go, migrations/0042.up.sql\n"
        "Verified: `go test ./...` passed\n"
        "Git head: abc1234"
    )


def test_handoff_note_lists_open_items() -> None:
    note, _ = working_note_candidate(
        Handoff(summary="Export done; import still parses only 1.0.", open_items=("1.1 import",))
    )
    assert note is not None and note.text.startswith("Handoff: Export done") and "Open: 1.1 import" in note.text


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        pytest.param(TurnStop(final_report=""), "empty_turn", id="empty"),
        pytest.param(TurnStop(final_report="The reconcile job runs nightly and compares balances."), "no_changes",
                     id="explanation-without-changes"),
        pytest.param(TurnStop(final_report="Done.", changed_paths=("a.py",)), "trivial_turn", id="done"),
        pytest.param(TurnStop(final_report="Let me know if you need anything else!", changed_paths=("a.py",)),
                     "trivial_turn", id="offer"),
    ],
)  # fmt: skip
def test_no_working_note_for_empty_or_trivial_turns(event: TurnStop, reason: str) -> None:
    note, skip = working_note_candidate(event)
    assert note is None and skip is not None and skip.reason == reason
