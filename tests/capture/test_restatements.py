"""Issue 16, eighth pass: restatements that the lexical rules used to keep as second entries, by what they are
about (the same command or path; a name and its short form), and the near misses that stay two rules."""

from __future__ import annotations

import pytest
from capture_helpers import PROJECT, entry_then

from memstone import MemoryService
from memstone.capture import UserPrompt, capture
from memstone.capture._text import subject_tokens
from memstone.capture.nearness import acronyms, spelled_out, spells, wording_swap
from memstone.capture.subjects import changed

MEMORY = [
    "The ledger service is written in Rust 1.79 with tokio.",
    "Invoices are rendered to PDF by a separate worker.",
    "Never log account numbers, not even masked ones.",
]

MEMORY_JA = [
    "このアプリは社内ベータ中で、二つの倉庫のスタッフが毎日使っています。",
    "在庫データは PostgreSQL に保存し、数量は必ず整数で持ちます。",
    "ブランチ名は feature/ か fix/ で始めてください。",
    "日付はすべて UTC で保存して、画面に出すときだけ JST に変換します。",
]


async def _actions(service: MemoryService, texts: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    for text in texts:
        result = await capture(service, UserPrompt(text=text), scope=PROJECT)
        out.append([str(o.action) for o in result.outcomes])
    return out


@pytest.mark.parametrize(
    ("memory", "first", "then", "action"),
    [
        pytest.param(MEMORY, "Run `cargo test` in the ledger crate before you tell me something is done.",
                     "Before saying it's finished: ledger tests green (`cargo test`).", ("revised", "unchanged"),
                     id="one-word-swapped-beside-the-same-command"),
        pytest.param(MEMORY, "Packages come in through Swift Package Manager, no CocoaPods.",
                     "SPM only for third-party libraries; no Pods.", ("revised", "unchanged"),
                     id="an-acronym-and-a-camelcase-head"),
        pytest.param(MEMORY_JA, "プッシュの前に必ず `pnpm lint` と `pnpm typecheck` を実行してください。",
                     "Lint は ESLint をやめて Oxlint にしました。コマンドは `pnpm check` です。", ("revised",),
                     id="a-japanese-change-of-a-command"),
        pytest.param(MEMORY, "Unpaid reservations are released after 15 minutes.",
                     "30 minutes now; the support team asked for more slack at the counter.", ("revised",),
                     id="a-new-value-for-the-entry-just-written"),
    ],
)  # fmt: skip
async def test_a_restatement_or_change_lands_on_its_entry(
    service: MemoryService, memory: list[str], first: str, then: str, action: tuple[str, ...]
) -> None:
    entry, outcomes = await entry_then(service, memory, first, then)
    assert outcomes in [[(a, entry)] for a in action]


async def test_the_same_command_before_another_gate_or_another_command_stays_two_rules(
    service: MemoryService,
) -> None:
    actions = await _actions(
        service,
        [
            *MEMORY,
            "Run `cargo test` in the ledger crate before every commit.",
            "Run `cargo test` in the ledger crate before every push.",  # commit / push: two gates
            "Run `cargo clippy` in the ledger crate before every commit.",  # another command
        ],
    )
    assert actions[-3:] == [["added"], ["added"], ["added"]]


def test_a_one_word_swap_is_wording_only_beside_the_same_command_and_outside_it() -> None:
    same = frozenset({"cmd:cargo test"})
    assert wording_swap(("green", "crate"), same, same, 4)
    assert not wording_swap(("green", "crate"), same, same, 3)  # too little else in common
    assert not wording_swap(("green", "crate"), same, frozenset({"cmd:cargo fmt"}), 4)  # two commands
    assert not wording_swap(("test", "fmt"), frozenset({"cmd:cargo test"}), frozenset({"cmd:cargo fmt"}), 4)
    assert not wording_swap(("merg", "releas"), same, same, 5)  # two workflow moments
    assert not wording_swap(None, same, same, 5)


def test_an_acronym_and_a_camelcase_head_meet_the_name_they_stand_for() -> None:
    mine_text, their_text = (
        "Use ORM migrations only; no SPs.",
        "Schema changes go through Entity Framework, never StoredProcs.",
    )
    assert acronyms("Builds use the GCP cache; EF Core and SPMs.") == {"GCP", "EF", "SPM"}
    assert spells(frozenset({"GCP"}), "Staging runs on Google Cloud Platform.")
    assert not spells(frozenset({"GCP"}), "Staging runs on Google Cloud.")
    short, long = "Builds run on GCP; no Pods.", "Builds run on Google Cloud Platform, no CocoaPods."
    mine, theirs = subject_tokens(short), subject_tokens(long)
    spelled = spelled_out(mine, short, theirs, long)
    assert {"googl", "cloud", "platform", "cocoapod"} <= spelled and not {"gcp", "pod"} & spelled
    # The other way round: the short forms in the entry, the long ones in the candidate.
    back = spelled_out(theirs, long, mine, short)
    assert "pod" in back and "cocoapod" not in back
    # Nothing is joined that the other statement does not spell out.
    assert spelled_out(subject_tokens(mine_text), mine_text, subject_tokens(their_text), their_text) == subject_tokens(
        mine_text
    )


async def test_an_acronym_the_entry_does_not_spell_out_is_another_rule(service: MemoryService) -> None:
    actions = await _actions(
        service,
        [
            *MEMORY,
            "Packages come in through Swift Package Manager, no CocoaPods.",
            "CI caches the SPM build folder between runs for faster pipelines.",
        ],
    )
    assert actions[-1] == ["added"]


def test_hiragana_alone_is_grammar_not_subject_in_japanese() -> None:
    tokens = subject_tokens("デプロイの前に必ず `make test` を実行してください。")
    words = ["".join(chr(int(h, 16)) for h in t[2:].split("_")) for t in tokens if t.startswith("b_")]
    assert "デプ" in words and "実行" in words  # katakana and kanji carry the subject
    assert not [w for w in words if all("\u3040" <= ch <= "\u309f" for ch in w)]  # を, くだ, さい: grammar


async def test_a_number_of_another_unit_or_for_an_older_entry_is_not_a_new_value(service: MemoryService) -> None:
    actions = await _actions(
        service,
        [
            *MEMORY,
            "Unpaid reservations are released after 15 minutes.",
            "Uploads are limited to 30 MB per file.",  # another unit: a rule of its own
            # The minutes entry is no longer the last one written:
            "30 minutes now; the support team asked for more slack at the counter.",
        ],
    )
    assert actions[-2:] == [["added"], ["added"]]


def test_a_number_changes_only_a_number_of_the_same_unit() -> None:
    mine, theirs = frozenset({"qty:devic=3"}), frozenset({"qty:tester=300"})
    assert changed(mine, theirs, overlap=0.5, shared=3) is None  # "three test devices" / "about 300 testers"
    change = changed(frozenset({"qty:hour=2"}), frozenset({"qty:hour=4"}), overlap=0.5, shared=3)
    assert change is not None and change.how == "value"
