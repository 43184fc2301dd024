"""The ``memstone`` CLI, driven through click's CliRunner against a real SQLite file in tmp_path."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import click
import pytest
from click.testing import CliRunner, Result

from memstone.backends.sqlite import migrations
from memstone.cli.main import DEFAULT_SCOPE, cli

UNKNOWN_ENTRY = "ent_00000000000000000000000000"
UNKNOWN_MEMORY = "mem_00000000000000000000000000"


class Cli:
    """Run ``memstone --url <url> ...`` in process and check the exit code."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __call__(
        self, *args: str, code: int = 0, input: str | None = None, env: dict[str, str] | None = None
    ) -> Result:
        result = CliRunner().invoke(cli, ["--url", self.url, *args], input=input, env=env, catch_exceptions=False)
        assert result.exit_code == code, (
            f"exit {result.exit_code}, expected {code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        )
        return result

    def json(self, *args: str, code: int = 0, input: str | None = None) -> Any:
        return json.loads(self(*args, "--json", code=code, input=input).stdout)

    def add(self, text: str, *options: str, kind: str = "fact") -> str:
        """Remember a new entry and return its id."""
        rev = self.json("remember", "--kind", kind, "--text", text, *options)["revision"]
        (change,) = [c for c in rev["changes"] if c["op"] == "add"]
        return str(change["entry_id"])

    def memory_id(self, scope: str = DEFAULT_SCOPE) -> str:
        found = [m for m in self.json("memories")["memories"] if m["scope"] == scope]
        assert len(found) == 1, found
        return str(found[0]["memory_id"])

    def hit_ids(self, query: str, *options: str) -> list[str]:
        return [h["entry_id"] for h in self.json("search", query, *options)["hits"]]


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A developer's own MEMSTONE_* settings must not leak into the run, and a missing --url must never
    # touch the real ~/.memstone.
    for name in ("MEMSTONE_URL", "MEMSTONE_SCOPE", "MEMSTONE_AUTHOR"):
        monkeypatch.delenv(name, raising=False)
    # These tests pin the no-model behaviour (FTS only); tests/cli/test_cli_vectors.py runs the real model.
    monkeypatch.setenv("MEMSTONE_EMBEDDING", "none")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # Run from the home folder: outside any project, so the default scope is the user scope (DEFAULT_SCOPE).
    # tests/cli/test_default_scopes.py runs the CLI inside a Git project.
    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.chdir(tmp_path / "home")
    for name in ("MEMSTONE_PROJECT_SCOPE", "MEMSTONE_USER_SCOPE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "m.db"


@pytest.fixture
def run(db: Path) -> Cli:
    return Cli(f"sqlite:///{db}")


def frontmatter(markdown: str) -> tuple[dict[str, object], str]:
    """Split ``---`` YAML frontmatter from the body. Values are JSON scalars/arrays (valid YAML), else raw text."""
    assert markdown.startswith("---\n"), markdown
    head, sep, body = markdown[4:].partition("\n---\n")
    assert sep, markdown
    fields: dict[str, object] = {}
    for line in head.splitlines():
        key, _, raw = line.partition(": ")
        try:
            fields[key] = json.loads(raw)
        except json.JSONDecodeError:
            fields[key] = raw
    return fields, body


# ---------------------------------------------------------------------------------------------- remember


def test_remember_creates_the_scope_memory_and_prints_its_revision(run: Cli) -> None:
    result = run("remember", "--kind", "fact", "--text", "We deploy with uv.")
    assert re.fullmatch(r"mem_\w{26} revision 1 \(1 active of 1 entries\); added ent_\w{26}\n", result.stdout), (
        result.stdout
    )
    (memory,) = run.json("memories")["memories"]
    assert memory["scope"] == DEFAULT_SCOPE
    assert result.stdout.startswith(memory["memory_id"])


def test_remember_stores_every_field(run: Cli) -> None:
    entry = run.add(
        "Every release is cut from main.",
        "--title", "Releases", "--tag", "Ops", "--tag", "build", "--slug", "release-branch",
        "--important", "--mandatory", "--reason", "team-agreement",
        kind="decision",
    )  # fmt: skip
    version = run.json("show", entry)["version"]
    assert version["kind"] == "decision"
    assert version["text"] == "Every release is cut from main."
    assert version["title"] == "Releases"
    assert version["tags"] == ["build", "ops"]  # normalized: lowercase, sorted
    assert version["slug"] == "release-branch"
    assert version["important"] is True
    assert version["mandatory"] is True
    (delta,) = run.json("changes", "--since", "0")["changes"]
    assert delta["changes"][0]["reason"] == "team-agreement"


def test_remember_flags_default_to_false(run: Cli) -> None:
    version = run.json("show", run.add("plain note"))["version"]
    assert (version["important"], version["mandatory"], version["title"], version["slug"]) == (False, False, None, None)


def test_remember_text_dash_reads_stdin(run: Cli) -> None:
    rev = run.json("remember", "--kind", "lesson", "--text", "-", input="Read the logs before restarting.\n")
    entry = rev["revision"]["changes"][0]["entry_id"]
    assert run.json("show", entry)["version"]["text"] == "Read the logs before restarting."


def test_remember_identical_text_writes_no_new_revision(run: Cli) -> None:
    entry = run.add("We deploy with uv.")
    out = run.json("remember", "--kind", "fact", "--text", "We deploy with uv.")
    again = out["revision"]
    assert again["revision"] == 1
    assert again["entry_count"] == 1
    assert out["status"] == "unchanged" and out["entries"] == []  # the old write's ids are not this one's
    assert out["existing"] == [entry]  # the live entry that already says it (issue 11)
    human = run("remember", "--kind", "fact", "--text", "We deploy with uv.").stdout
    assert "added" not in human and f"already stored as {entry}" in human


def test_remember_revise_adds_a_version_and_keeps_the_old_one(run: Cli) -> None:
    entry = run.add("We deploy with uv.")
    rev = run.json("remember", "--kind", "fact", "--text", "We deploy with uv and hatch.", "--revise", entry)
    assert rev["revision"]["revision"] == 2
    (change,) = rev["revision"]["changes"]
    assert change["op"] == "revise"
    assert change["entry_id"] == entry
    assert change["from_entry_version_id"] and change["to_entry_version_id"]
    assert rev["revision"]["entry_count"] == 1  # a revision, not a second entry
    assert run.json("show", entry)["version"]["text"] == "We deploy with uv and hatch."
    old = run.json("show", entry, "--revision", "1")["version"]
    assert old["text"] == "We deploy with uv."
    assert old["entry_version_id"] == change["from_entry_version_id"]


def test_remember_revise_text_from_stdin(run: Cli) -> None:
    entry = run.add("first draft")
    run("remember", "--kind", "fact", "--text", "-", "--revise", entry, input="second draft")
    assert run.json("show", entry)["version"]["text"] == "second draft"


# ---------------------------------------------------------------------------------------------- search


def test_search_human_output_reports_the_mode_and_each_hit(run: Cli) -> None:
    entry = run.add("We deploy with uv.", "--title", "Deploys")
    lines = run("search", "deploy").stdout.splitlines()
    assert lines[0] == "mode: fts (no embedding model is configured)"
    assert len(lines) == 2
    assert lines[1].startswith(f"{entry}  ")
    assert lines[1].endswith("[fact] Deploys: We deploy with uv.")


def test_search_human_output_says_when_nothing_matches(run: Cli) -> None:
    run.add("We deploy with uv.")
    assert run("search", "kubernetes").stdout.splitlines() == [
        "mode: fts (no embedding model is configured)",
        "no matches",
    ]


def test_search_json_reports_requested_and_used_mode(run: Cli) -> None:
    entry = run.add("We deploy with uv.")
    auto = run.json("search", "deploy")
    assert (auto["requested_mode"], auto["mode"]) == ("auto", "fts")
    assert auto["fallback_reason"] == "no embedding model is configured"
    (hit,) = auto["hits"]
    assert hit["entry_id"] == entry
    assert hit["matched_by"] == ["fts"]
    assert hit["memory_ref"] == {"memory_id": run.memory_id(), "revision": 1}
    fts = run.json("search", "deploy", "--mode", "fts")
    assert (fts["requested_mode"], fts["mode"], fts["fallback_reason"]) == ("fts", "fts", None)
    assert run("search", "deploy", "--mode", "fts").stdout.splitlines()[0] == "mode: fts"


def test_search_defaults_to_the_scope_memory_and_all_searches_every_memory(run: Cli) -> None:
    run("--scope", "memstone://orgs/acme/projects/a", "remember", "--kind", "fact", "--text", "deploy with uv")
    run("--scope", "memstone://orgs/acme/projects/b", "remember", "--kind", "fact", "--text", "deploy with pip")
    memory_b = run.memory_id("memstone://orgs/acme/projects/b")
    assert run.json("search", "deploy")["hits"] == []  # the default scope has no Memory
    in_a = run.json("--scope", "memstone://orgs/acme/projects/a", "search", "deploy")["hits"]
    assert [h["text"] for h in in_a] == ["deploy with uv"]
    everywhere = run.json("search", "deploy", "--all")["hits"]
    assert sorted(h["text"] for h in everywhere) == ["deploy with pip", "deploy with uv"]
    assert len({h["memory_ref"]["memory_id"] for h in everywhere}) == 2
    only_b = run.json("search", "deploy", "--memory", memory_b)["hits"]
    assert [h["text"] for h in only_b] == ["deploy with pip"]


def test_search_all_on_an_empty_store_finds_nothing(run: Cli) -> None:
    run("search", "deploy", "--all", code=4)  # no store yet: a read does not create one
    latest = migrations.LATEST
    assert run.json("migrate") == {"schema_version": latest, "applied": list(range(1, latest + 1))}
    assert run.json("search", "deploy", "--all")["hits"] == []


def test_search_filters_by_kind_and_tag_and_honours_limit(run: Cli) -> None:
    a = run.add("deploy alpha", "--tag", "ops")
    b = run.add("deploy beta", "--tag", "ops", "--tag", "ci", kind="lesson")
    c = run.add("deploy gamma")
    assert sorted(run.hit_ids("deploy")) == sorted([a, b, c])
    assert run.hit_ids("deploy", "--kind", "lesson") == [b]
    assert sorted(run.hit_ids("deploy", "--kind", "fact")) == sorted([a, c])
    assert sorted(run.hit_ids("deploy", "--kind", "fact", "--kind", "lesson")) == sorted([a, b, c])
    assert sorted(run.hit_ids("deploy", "--tag", "ops")) == sorted([a, b])
    assert run.hit_ids("deploy", "--tag", "OPS", "--tag", "ci") == [b]  # all tags must match, case-insensitively
    assert len(run.hit_ids("deploy", "--limit", "1")) == 1
    assert len(run.hit_ids("deploy", "--limit", "2")) == 2


# ---------------------------------------------------------------------------------------------- show, history


def test_show_prints_markdown_with_yaml_frontmatter(run: Cli) -> None:
    entry = run.add("Every release is cut from main.", "--title", "Releases", "--tag", "ops", "--slug", "release")
    out = run("show", entry).stdout
    fields, body = frontmatter(out)
    assert fields["id"] == entry
    assert fields["title"] == "Releases"
    assert fields["type"] == "fact"
    assert fields["tags"] == ["ops"]
    assert fields["slug"] == "release"
    assert fields["memory"] == run.memory_id()
    assert (fields["state"], fields["current"], fields["revision"]) == ("active", True, 1)
    assert body == "\n# Releases\n\nEvery release is cut from main.\n"
    shown = run.json("show", entry)
    assert shown["markdown"].rstrip("\n") == out.rstrip("\n")
    assert shown["version"]["entry_id"] == entry


def test_show_revision_reads_the_entry_as_it_was_then(run: Cli) -> None:
    entry = run.add("We deploy with uv.", "--tag", "ops")
    run("remember", "--kind", "fact", "--text", "We deploy with uv and hatch.", "--revise", entry, "--tag", "ops")
    then, then_body = frontmatter(run("show", entry, "--revision", "1").stdout)
    assert then_body.strip() == "We deploy with uv."
    assert (then["revision"], then["current"], then["previous_version_id"]) == (1, False, None)
    now, now_body = frontmatter(run("show", entry, "--revision", "2").stdout)
    assert now_body.strip() == "We deploy with uv and hatch."
    assert (now["revision"], now["current"], now["previous_version_id"]) == (2, True, then["version_id"])
    assert run("show", entry).stdout == run("show", entry, "--revision", "2").stdout


def test_show_an_exact_version_id(run: Cli) -> None:
    entry = run.add("v1 text")
    run("remember", "--kind", "fact", "--text", "v2 text", "--revise", entry)
    first = run.json("history", entry)["history"][0]["entry_version_id"]
    shown = run.json("show", first)
    assert shown["version"]["text"] == "v1 text"
    assert frontmatter(shown["markdown"])[0]["current"] is False


def test_show_revision_before_the_entry_existed_is_not_found(run: Cli) -> None:
    run.add("older")
    newer = run.add("newer")
    assert run.json("show", newer, "--revision", "1", code=4)["error"]["code"] == "not_found"


def test_history_walks_the_chain_oldest_first(run: Cli) -> None:
    entry = run.add("v1 text")
    run("remember", "--kind", "fact", "--text", "v2 text", "--revise", entry)
    run("remember", "--kind", "fact", "--text", "v3 text", "--revise", entry, "--reason", "host moved")
    items = run.json("history", entry)["history"]
    assert [h["reason"] for h in items] == [None, "update", "host moved"]
    assert [(h["version"], h["text"], h["status"]) for h in items] == [
        (1, "v1 text", "superseded"),
        (2, "v2 text", "superseded"),
        (3, "v3 text", "current"),
    ]
    assert items[0]["previous_version_id"] is None
    assert items[1]["previous_version_id"] == items[0]["entry_version_id"]
    assert items[1]["next_version_id"] == items[2]["entry_version_id"]
    assert items[2]["next_version_id"] is None
    lines = run("history", entry).stdout.splitlines()
    assert [line.split()[:3] for line in lines] == [
        ["v1", items[0]["entry_version_id"], "superseded"],
        ["v2", items[1]["entry_version_id"], "superseded"],
        ["v3", items[2]["entry_version_id"], "current"],
    ]
    assert lines[2].endswith("'v3 text'  reason: host moved") and lines[1].endswith("reason: update")
    assert "reason" not in lines[0]


def test_history_records_the_author_from_the_environment(run: Cli) -> None:
    run("remember", "--kind", "fact", "--text", "signed note", env={"MEMSTONE_AUTHOR": "alice"})
    (hit,) = run.json("search", "signed")["hits"]
    (item,) = run.json("history", hit["entry_id"])["history"]
    assert (item["author"], item["surface"]) == ("alice", "human")


# ---------------------------------------------------------------------------------------------- changes, forget


def test_changes_since_zero_lists_every_revision_in_order(run: Cli) -> None:
    entry = run.add("first", "--reason", "init")
    run("remember", "--kind", "fact", "--text", "second", "--revise", entry)
    run("forget", entry, "--reason", "stale")
    run("reactivate", entry)
    deltas = run.json("changes", "--since", "0")["changes"]
    assert [d["memory_ref"]["revision"] for d in deltas] == [1, 2, 3, 4]
    assert [(c["op"], c["entry_id"], c["reason"]) for d in deltas for c in d["changes"]] == [
        ("add", entry, "init"),
        ("revise", entry, "update"),  # the default reason of an update, on every surface
        ("deactivate", entry, "stale"),
        ("reactivate", entry, None),
    ]
    lines = run("changes", "--since", "0").stdout.splitlines()
    assert [line.split()[:3] for line in lines] == [
        ["r1", "add", entry],
        ["r2", "revise", entry],
        ["r3", "deactivate", entry],
        ["r4", "reactivate", entry],
    ]
    assert lines[2].endswith("stale")
    # --since is exclusive; without it only the head Revision's changes are listed.
    assert [d["memory_ref"]["revision"] for d in run.json("changes", "--since", "2")["changes"]] == [3, 4]
    assert [d["memory_ref"]["revision"] for d in run.json("changes")["changes"]] == [4]
    assert run("changes", "--since", "4").stdout == "no changes\n"


def test_changes_of_an_explicit_memory(run: Cli) -> None:
    run("--scope", "memstone://orgs/acme/projects/a", "remember", "--kind", "fact", "--text", "in a")
    memory = run.memory_id("memstone://orgs/acme/projects/a")
    (delta,) = run.json("changes", "--memory", memory, "--since", "0")["changes"]
    assert delta["memory_ref"] == {"memory_id": memory, "revision": 1}


def test_forget_hides_an_entry_and_reactivate_restores_the_same_version(run: Cli) -> None:
    entry = run.add("We deploy with uv.")
    keep = run.add("We test with pytest.")
    version = run.json("show", entry)["version"]["entry_version_id"]

    forgot = run.json("forget", entry, "--reason", "obsolete")["revision"]
    assert (forgot["revision"], forgot["active_count"], forgot["entry_count"]) == (3, 1, 2)
    assert run.hit_ids("deploy") == []
    assert run.hit_ids("pytest") == [keep]
    assert run.json("history", entry)["history"][-1]["status"] == "deleted"
    assert frontmatter(run("show", entry).stdout)[0]["state"] == "inactive"
    # Forgetting twice is an idempotent no-op: no new Revision.
    assert run.json("forget", entry)["revision"]["revision"] == 3

    back = run("reactivate", entry, "--reason", "still true").stdout
    assert back.endswith("revision 4 (2 active of 2 entries)\n")
    assert run.hit_ids("deploy") == [entry]
    assert run.json("show", entry)["version"]["entry_version_id"] == version
    assert run.json("history", entry)["history"][-1]["status"] == "current"


def test_forget_several_entries_in_one_revision(run: Cli) -> None:
    a, b, c = run.add("alpha note"), run.add("beta note"), run.add("gamma note")
    rev = run.json("forget", a, b)["revision"]
    assert (rev["revision"], rev["active_count"]) == (4, 1)
    assert run.hit_ids("note") == [c]


# ---------------------------------------------------------------------------------------------- organize, memories


def test_organize_deduplicates_exact_copies_keeping_the_oldest_entry(run: Cli) -> None:
    a = run.add("We deploy with uv.")
    b = run.add("a draft")
    run("remember", "--kind", "fact", "--text", "We deploy with uv.", "--revise", b)  # now an exact copy of a
    unchanged = run.json("organize", "--no-dedupe")["revision"]
    assert unchanged["revision"] == 3  # nothing to do writes nothing
    rev = run.json("organize")["revision"]
    assert (rev["revision"], rev["active_count"], rev["entry_count"]) == (4, 1, 2)
    assert [(c["op"], c["entry_id"], c["reason"]) for c in rev["changes"]] == [("deactivate", max(a, b), "dedupe")]
    assert run.hit_ids("deploy") == [min(a, b)]
    assert run("organize", "--no-normalize").stdout.endswith("revision 4 (1 active of 2 entries)\n")


def test_organize_without_a_memory_is_invalid_input(run: Cli) -> None:
    result = run("organize", code=2)
    assert "has no Memory yet" in result.stderr


def test_memories_lists_each_memory_with_its_head_and_scope(run: Cli) -> None:
    run("migrate")
    assert run("memories").stdout == "no memories yet\n"
    assert run.json("memories") == {"memories": []}
    run("--scope", "memstone://orgs/acme/projects/a", "remember", "--kind", "fact", "--text", "one")
    run("--scope", "memstone://orgs/acme/projects/b", "remember", "--kind", "fact", "--text", "two")
    run("--scope", "memstone://orgs/acme/projects/b", "remember", "--kind", "fact", "--text", "three")
    listed = {m["scope"]: m for m in run.json("memories")["memories"]}
    assert set(listed) == {"memstone://orgs/acme/projects/a", "memstone://orgs/acme/projects/b"}
    b = listed["memstone://orgs/acme/projects/b"]
    assert (b["revision"], b["active_count"]) == (2, 2)
    lines = sorted(run("memories").stdout.splitlines())
    assert lines == sorted(
        [
            f"{listed['memstone://orgs/acme/projects/a']['memory_id']}  r1  1/1 active  memstone://orgs/acme/projects/a",
            f"{listed['memstone://orgs/acme/projects/b']['memory_id']}  r2  2/2 active  memstone://orgs/acme/projects/b",
        ]
    )


# ---------------------------------------------------------------------------------------------- verify, rebuild


def test_verify_a_healthy_store_exits_0(run: Cli) -> None:
    run.add("alpha")
    run.add("beta")
    assert run("verify").stdout.splitlines()[-1] == "ok"
    report = run.json("verify")
    assert report["ok"] is True
    assert (report["revisions_checked"], report["versions_checked"], report["projections_checked"]) == (2, 2, 2)
    assert report["authority_damage"] == report["projection_damage"] == []


def test_rebuild_projections_on_a_healthy_store_exits_0(run: Cli) -> None:
    run.add("alpha")
    assert run("rebuild-projections").stdout == "rebuilt 1 projection rows; ok\n"
    assert run.json("rebuild-projections")["ok"] is True
    assert run.hit_ids("alpha")


def test_verify_finds_damaged_projections_exit_6_and_rebuild_repairs_them(run: Cli, db: Path) -> None:
    entry = run.add("We deploy with uv.")
    conn = apsw.Connection(str(db))
    conn.execute("UPDATE memory_entry_heads SET searchable_text='x'")
    conn.close()

    human = run("verify", code=6).stdout.splitlines()
    assert human[-1] == "damaged"
    assert "projections can be rebuilt: memstone rebuild-projections" in human
    report = run.json("verify", code=6)
    assert report["ok"] is False
    assert report["authority_damage"] == []
    assert report["projection_damage"] and all(entry in d for d in report["projection_damage"])

    assert run.json("rebuild-projections")["ok"] is True
    assert run("verify").stdout.splitlines()[-1] == "ok"
    assert run.hit_ids("deploy") == [entry]


def test_damaged_authority_exits_6_and_is_never_rebuilt(run: Cli, db: Path) -> None:
    run.add("We deploy with uv.")
    conn = apsw.Connection(str(db))
    conn.execute("DROP TRIGGER trg_memory_entry_versions_no_update")  # the append-only guard, removed by hand
    conn.execute("UPDATE memory_entry_versions SET text = 'tampered'")
    conn.close()

    assert any(line.startswith("AUTHORITY DAMAGE: ") for line in run("verify", code=6).stdout.splitlines())
    assert run.json("verify", code=6)["authority_damage"]
    assert run.json("rebuild-projections", code=6)["error"]["code"] == "integrity"
    assert "authoritative data is damaged" in run("rebuild-projections", code=6).stderr


# ---------------------------------------------------------------------------------------------- --json everywhere

Args = Callable[[str, str], list[str]]  # (entry id, memory id) -> command line after --url

JSON_COMMANDS = [
    pytest.param(lambda e, m: ["remember", "--kind", "fact", "--text", "another note"], id="remember"),
    pytest.param(lambda e, m: ["search", "deploy", "--all"], id="search"),
    pytest.param(lambda e, m: ["show", e, "--revision", "1"], id="show"),
    pytest.param(lambda e, m: ["history", e], id="history"),
    pytest.param(lambda e, m: ["changes", "--memory", m, "--since", "0"], id="changes"),
    pytest.param(lambda e, m: ["forget", e], id="forget"),
    pytest.param(lambda e, m: ["reactivate", e], id="reactivate"),
    pytest.param(lambda e, m: ["organize"], id="organize"),
    pytest.param(lambda e, m: ["memories"], id="memories"),
    pytest.param(lambda e, m: ["verify"], id="verify"),
    pytest.param(lambda e, m: ["rebuild-projections"], id="rebuild-projections"),
    pytest.param(lambda e, m: ["--embedding", "hashing-64", "embed", "--backfill"], id="embed"),
    pytest.param(lambda e, m: ["reembed", "--profile", "hashing-32"], id="reembed"),
    pytest.param(lambda e, m: ["config", "show"], id="config"),
    pytest.param(lambda e, m: ["migrate"], id="migrate"),
    pytest.param(lambda e, m: ["maintain", "--quiet"], id="maintain"),
    pytest.param(lambda e, m: ["daemon", "--once", "--quiet"], id="daemon"),
    pytest.param(lambda e, m: ["maintenance", "runs"], id="maintenance"),
]


def test_the_json_cases_cover_every_command() -> None:
    from memstone.cli import records  # the record commands' --json cases live in test_cli_records.py
    from memstone.cli.agents import AGENT_COMMANDS  # install/doctor --json: tests/hooks; mcp, hook: own protocols

    record_commands = {c.name for c in vars(records).values() if isinstance(c, click.Command)}
    agent_commands = {c.name for c in AGENT_COMMANDS}
    serving_commands = {"serve", "token", "review", "capture-settings"}  # test_serve, test_cli_review, …_settings
    import_commands = {"import", "render", "sync"}  # tests/importers/test_cli_imports.py
    purge = {"purge"}  # tests/cli/test_purge_cli.py
    copy = {"copy"}  # tests/conformance/test_copy.py (two stores, no --url)
    covered = (
        {p.id for p in JSON_COMMANDS}
        | record_commands
        | agent_commands
        | serving_commands
        | import_commands
        | purge
        | copy
    )
    assert covered == set(cli.commands)


@pytest.mark.parametrize("args", JSON_COMMANDS)
def test_every_command_prints_a_json_object(run: Cli, args: Args) -> None:
    entry = run.add("We deploy with uv.")
    result = run(*args(entry, run.memory_id()), "--json")
    payload = json.loads(result.stdout)
    assert isinstance(payload, dict)
    assert payload
    assert "error" not in payload
    assert result.stderr == ""


# ---------------------------------------------------------------------------------------------- errors

INVALID = [
    pytest.param(["remember", "--kind", "fact", "--text", "   "], "text is empty", id="empty-text"),
    pytest.param(["remember", "--kind", "Bad Kind!", "--text", "x"], "invalid kind", id="bad-kind"),
    pytest.param(["remember", "--kind", "fact", "--text", "x", "--slug", "Not A Slug"], "invalid slug", id="bad-slug"),
    pytest.param(
        ["remember", "--kind", "fact", "--text", "x", "--revise", "not-an-id"], "invalid entry id", id="bad-revise-id"
    ),
    pytest.param(["search", "deploy", "--limit", "0"], "limit must be", id="limit-zero"),
    pytest.param(["show", "ver-or-ent?"], "invalid entry id", id="bad-entry-id"),
    pytest.param(["show", "{entry}", "--revision", "0"], "revision must be a positive integer", id="revision-zero"),
    pytest.param(["changes", "--since", "-1"], "non-negative", id="since-negative"),
    pytest.param(["changes", "--since", "99"], "after the target revision", id="since-future"),
    pytest.param(["--scope", "memstone://users/nobody", "changes"], "has no Memory yet", id="changes-empty-scope"),
    pytest.param(["--url", "mongodb://localhost/x", "memories"], "unknown store URL scheme", id="bad-url"),
]


@pytest.mark.parametrize(("args", "message"), INVALID)
def test_invalid_input_exits_2_with_the_message_on_stderr(run: Cli, args: list[str], message: str) -> None:
    entry = run.add("We deploy with uv.")
    argv = [a.replace("{entry}", entry) for a in args]
    human = run(*argv, code=2)
    assert human.stdout == ""
    assert human.stderr.startswith("error: ")
    assert message in human.stderr
    error = run.json(*argv, code=2)["error"]
    assert error["code"] == "invalid_input"
    assert message in error["message"]


def test_remember_revise_of_an_inactive_entry_is_invalid_input(run: Cli) -> None:
    entry = run.add("We deploy with uv.")
    run("forget", entry)
    error = run.json("remember", "--kind", "fact", "--text", "new", "--revise", entry, code=2)["error"]
    assert error["code"] == "entry_inactive"  # an InvalidInput: exit 2, with its own code
    assert "reactivate it first" in error["hint"]


def test_click_usage_errors_exit_2(run: Cli) -> None:
    assert "Invalid value for '--mode'" in run("search", "x", "--mode", "bogus", code=2).stderr
    assert "needs --kind and --text" in run("remember", "--text", "x", code=2).stderr
    assert "No such command" in run("nope", code=2).stderr


NOT_FOUND = [
    pytest.param(["show", UNKNOWN_ENTRY], "not_found", id="show"),
    pytest.param(["history", UNKNOWN_ENTRY], "not_found", id="history"),
    pytest.param(["forget", UNKNOWN_ENTRY], "not_found", id="forget"),
    pytest.param(["reactivate", UNKNOWN_ENTRY], "not_found", id="reactivate"),
    pytest.param(["remember", "--kind", "fact", "--text", "x", "--revise", UNKNOWN_ENTRY], "not_found", id="revise"),
    pytest.param(["search", "x", "--memory", UNKNOWN_MEMORY], "artifact_not_found", id="search-memory"),
    pytest.param(["changes", "--memory", UNKNOWN_MEMORY], "artifact_not_found", id="changes-memory"),
    pytest.param(["organize", "--memory", UNKNOWN_MEMORY], "artifact_not_found", id="organize-memory"),
    pytest.param(["show", "{entry}", "--revision", "9"], "artifact_not_found", id="show-revision"),
]


@pytest.mark.parametrize(("args", "code"), NOT_FOUND)
def test_unknown_entry_or_memory_exits_4(run: Cli, args: list[str], code: str) -> None:
    entry = run.add("We deploy with uv.")
    argv = [a.replace("{entry}", entry) for a in args]
    human = run(*argv, code=4)
    assert human.stderr.startswith("error: ")
    assert human.stdout == ""
    assert run.json(*argv, code=4)["error"]["code"] == code


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_vector_search_without_an_embedding_model_exits_5(run: Cli, mode: str) -> None:
    run.add("We deploy with uv.")
    human = run("search", "deploy", "--mode", mode, code=5)
    assert f"{mode} search is unavailable: no embedding model is configured" in human.stderr
    error = run.json("search", "deploy", "--mode", mode, code=5)["error"]
    assert error["code"] == "capability_not_supported"
    assert "hint" in error


def test_a_file_that_is_not_a_database_exits_1(run: Cli, db: Path) -> None:
    junk = b"this is not a sqlite database, just some bytes" * 100
    db.write_bytes(junk)
    assert f"not a database: {db}" in run("memories", code=1).stderr  # names the file
    error = run.json("list", code=1)["error"]
    assert error["code"] == "backend_unavailable"
    assert error["message"] == f"not a database: {db}" and "--url" in error["hint"]
    assert db.read_bytes() == junk  # nothing was changed


# ---------------------------------------------------------------------------------------------- wiring, help


def test_url_comes_from_memstone_url_when_not_given(tmp_path: Path) -> None:
    path = tmp_path / "from-env.db"
    runner = CliRunner()
    env = {"MEMSTONE_URL": f"sqlite:///{path}"}
    added = runner.invoke(cli, ["remember", "--kind", "fact", "--text", "via env"], env=env, catch_exceptions=False)
    assert added.exit_code == 0, added.stderr
    assert path.exists()
    listed = runner.invoke(cli, ["memories", "--json"], env=env, catch_exceptions=False)
    assert [m["active_count"] for m in json.loads(listed.stdout)["memories"]] == [1]
    # An explicit --url wins over the environment (a read of a store that is not there: exit 4, nothing made).
    other = tmp_path / "explicit.db"
    missing = runner.invoke(cli, ["--url", f"sqlite:///{other}", "memories"], env=env, catch_exceptions=False)
    assert missing.exit_code == 4 and str(other) in missing.stderr and not other.exists()
    runner.invoke(cli, ["--url", f"sqlite:///{other}", "migrate"], env=env, catch_exceptions=False)
    assert other.exists()


def test_scope_comes_from_memstone_scope(run: Cli) -> None:
    run("remember", "--kind", "fact", "--text", "scoped", env={"MEMSTONE_SCOPE": "memstone://orgs/acme/projects/env"})
    assert [m["scope"] for m in run.json("memories")["memories"]] == ["memstone://orgs/acme/projects/env"]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_the_group_answers_help(flag: str) -> None:
    result = CliRunner().invoke(cli, [flag])
    assert result.exit_code == 0
    assert "memstone: durable, versioned, searchable memory for AI agents." in result.stdout
    for name in cli.commands:
        assert name in result.stdout


def test_the_group_reports_its_version() -> None:
    import memstone

    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert memstone.__version__ in result.stdout


def test_the_version_of_a_malformed_url_says_what_is_wrong(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memstone

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = CliRunner().invoke(cli, ["--url", "sqlite://tmp/x.db", "--version"])
    assert result.exit_code == 0 and memstone.__version__ in result.stdout
    assert "reads as a host" in result.stdout  # the URL parser's own message, not a path under ./tmp
    assert str(work) not in result.stdout and list(work.iterdir()) == []


def leaf_commands(group: click.Group = cli, prefix: str = "") -> dict[str, click.Command]:
    """Every command to run, a group's subcommands by full name (``token create``)."""
    out: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out.update(leaf_commands(command, f"{prefix}{name} "))
        else:
            out[prefix + name] = command
    return out


LEAVES = leaf_commands()


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_every_command_answers_help(name: str) -> None:
    command = LEAVES[name]
    result = CliRunner().invoke(cli, [*name.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert re.match(rf"Usage: \S+ {re.escape(name)} \[OPTIONS\]", result.stdout), result.stdout
    assert command.help, f"{name} has no help text"
    flat = " ".join(result.stdout.split())
    assert " ".join(command.help.split()) in flat
    assert "--json" in flat


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_every_command_has_a_json_option(name: str) -> None:
    options = [p for p in LEAVES[name].params if isinstance(p, click.Option)]
    (json_flag,) = [p for p in options if "--json" in p.opts]
    assert json_flag.is_flag


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        pytest.param("notaurl", "no scheme", id="bare-word"),
        pytest.param("sqlite://tmp/x.db", "two slashes", id="two-slashes"),
    ],
)
def test_a_bad_url_is_refused_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, needle: str
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(cli, ["--url", url, "list"], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert needle in result.stderr and "sqlite:///" in result.stderr
    assert list(cwd.iterdir()) == []


def test_a_read_never_creates_a_store(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    cli_ = Cli(f"sqlite:///{path}")
    for command in ("list", "memories", "search"):
        args = (command, "deploy") if command == "search" else (command,)
        result = cli_(*args, code=4)
        assert "no memstone store" in result.stderr
    assert not path.exists()
    # Subcommands that read are reads too, whatever their own name (``maintenance runs`` created a store before).
    for args in (
        ("maintenance", "runs"),
        ("maintenance", "proposals"),
        ("maintenance", "status"),
        ("maintenance", "show", "mrun_0123456789abcdef"),
        ("capture-settings", "show"),
    ):
        result = cli_(*args, code=4)
        assert "no memstone store" in result.stderr, args
    assert not path.exists()
    cli_.add("we deploy with uv")
    assert path.exists()
    assert [m["scope"] for m in cli_.json("memories")["memories"]] == [DEFAULT_SCOPE]
