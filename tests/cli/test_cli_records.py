"""The record commands of the CLI (cli/records.py), through CliRunner on a real SQLite file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from memstone.cli import records as record_cli
from memstone.cli.main import DEFAULT_SCOPE, cli

ORG = "memstone://orgs/acme"
PROJECT = "memstone://orgs/acme/projects/web"
USER = "memstone://users/alice"

RECORD_COMMANDS = sorted(c.name for c in vars(record_cli).values() if isinstance(c, click.Command) and c.name)


class Cli:
    def __init__(self, url: str) -> None:
        self.url = url

    def __call__(self, *args: str, code: int = 0, input: str | None = None) -> Result:
        result = CliRunner().invoke(cli, ["--url", self.url, *args], input=input, catch_exceptions=False)
        assert result.exit_code == code, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        return result

    def json(self, *args: str, code: int = 0, input: str | None = None) -> Any:
        return json.loads(self(*args, "--json", code=code, input=input).stdout)

    def add(self, text: str, *options: str, kind: str = "fact", scope: str = DEFAULT_SCOPE) -> str:
        rev = self.json("--scope", scope, "remember", "--kind", kind, "--text", text, *options)["revision"]
        (change,) = [c for c in rev["changes"] if c["op"] == "add"]
        return str(change["entry_id"])


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("MEMSTONE_URL", "MEMSTONE_SCOPE", "MEMSTONE_AUTHOR", "MEMSTONE_EMBEDDING"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMSTONE_EMBEDDING", "none")
    # Run from the home folder: outside any project, so the default scope is the user scope (DEFAULT_SCOPE).
    # tests/cli/test_default_scopes.py runs the CLI inside a Git project.
    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.chdir(tmp_path / "home")
    for name in ("MEMSTONE_PROJECT_SCOPE", "MEMSTONE_USER_SCOPE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def run(tmp_path: Path) -> Cli:
    return Cli(f"sqlite:///{tmp_path / 'm.db'}")


def three_tiers(run: Cli) -> dict[str, str]:
    return {
        "org": run.add("org: retry with backoff", "--slug", "retry", kind="lesson", scope=ORG),
        "project": run.add(
            "project: retry only idempotent calls", "--slug", "retry", "--important", kind="lesson", scope=PROJECT
        ),
        "user": run.add("user: I retry three times", "--slug", "retry", kind="lesson", scope=USER),
        "rule": run.add("never deploy on friday", "--mandatory", kind="constraint", scope=PROJECT),
    }


# ---------------------------------------------------------------------------------------------- --json everywhere
Args = Callable[[str, str], list[str]]  # (entry id with slug "deploy-tool", its memory id) -> command line

RECORD_JSON = [
    pytest.param(lambda e, m: ["scopes"], id="scopes"),
    pytest.param(lambda e, m: ["resolve", DEFAULT_SCOPE], id="resolve"),
    pytest.param(lambda e, m: ["bind", DEFAULT_SCOPE, m], id="bind"),
    pytest.param(lambda e, m: ["list"], id="list"),
    pytest.param(lambda e, m: ["important"], id="important"),
    pytest.param(lambda e, m: ["mandatory"], id="mandatory"),
    pytest.param(lambda e, m: ["lookup", "fact", "deploy-tool"], id="lookup"),
    pytest.param(lambda e, m: ["flag", e, "--no-important"], id="flag"),
    pytest.param(lambda e, m: ["rename", e, "deploy-tooling"], id="rename"),
    pytest.param(lambda e, m: ["relate", e, e, "--remove"], id="relate"),
    pytest.param(lambda e, m: ["diff", e], id="diff"),
    pytest.param(lambda e, m: ["blame", e], id="blame"),
    pytest.param(lambda e, m: ["revert", e, "1"], id="revert"),
    pytest.param(lambda e, m: ["recall", "deploy", "--budget-tokens", "100"], id="recall"),
    pytest.param(lambda e, m: ["export", "{tmp}/out"], id="export"),
    pytest.param(lambda e, m: ["import", "{tmp}/in"], id="import"),
    pytest.param(lambda e, m: ["cite", e], id="cite"),
    pytest.param(lambda e, m: ["verify-citation", "{citation}"], id="verify-citation"),
]


def test_the_json_cases_cover_every_record_command() -> None:
    assert sorted(p.id for p in RECORD_JSON) == RECORD_COMMANDS
    assert set(RECORD_COMMANDS) <= set(cli.commands)


@pytest.mark.parametrize("args", RECORD_JSON)
def test_every_record_command_prints_a_json_object(run: Cli, args: Args, tmp_path: Path) -> None:
    entry = run.add("We deploy with uv.", "--slug", "deploy-tool", "--important", "--mandatory")
    memory = run.json("resolve", DEFAULT_SCOPE)["memory"]["memory_id"]
    run("export", str(tmp_path / "in"))
    citation = json.dumps(run.json("cite", entry)["citation"])
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{citation}", citation) for a in args(entry, memory)]
    result = run(*argv, "--json")
    payload = json.loads(result.stdout)
    assert isinstance(payload, dict) and payload and "error" not in payload
    assert result.stderr == ""


@pytest.mark.parametrize("name", RECORD_COMMANDS)
def test_every_record_command_answers_help(name: str) -> None:
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0 and cli.commands[name].help


# ---------------------------------------------------------------------------------------------- behaviour
def test_scopes_resolve_and_bind(run: Cli) -> None:
    run("migrate")
    assert run("scopes").stdout == "no scopes bound yet\n"
    run.add("in the org", scope=ORG)
    resolved = run.json("resolve", "memstone://Orgs/ACME/")
    assert resolved["scope"] == ORG and resolved["memory"]["revision"] == 1
    assert run.json("resolve", USER) == {"scope": USER, "memory": None}
    assert "unbound" in run("resolve", USER).stdout
    listed = run.json("scopes")["scopes"]
    assert [(s["scope"], s["tier"]) for s in listed] == [(ORG, "org")]
    error = run.json("bind", ORG, "mem_00000000000000000000000000", code=4)["error"]
    assert error["code"] == "artifact_not_found"
    other = run.add("elsewhere", scope=USER)
    memory = run.json("show", other)["version"]["memory_id"]
    assert run.json("bind", ORG, memory, code=3)["error"]["code"] == "already_exists"
    assert run.json("resolve", "memstone://projects/x", code=2)["error"]["code"] == "invalid_input"


def test_catalogues_order_filter_and_mark_shadowed_records(run: Cli) -> None:
    ids = three_tiers(run)
    scopes = ["--scope", ORG, "--scope", PROJECT, "--scope", USER]
    records = run.json("list", *scopes)["records"]
    assert [r["entry_id"] for r in records][:2] == [ids["rule"], ids["project"]]  # mandatory, then important
    shadowed = {r["entry_id"]: r["shadowed_by"] for r in records}
    assert shadowed[ids["org"]] == ids["user"] and shadowed[ids["project"]] == ids["user"]
    assert shadowed[ids["user"]] is None
    assert "shadowed by" in run("list", *scopes).stdout
    assert [r["entry_id"] for r in run.json("important", *scopes)["records"]] == [ids["project"]]
    mandatory = run("mandatory", *scopes).stdout
    assert "never deploy on friday" in mandatory
    assert [r["entry_id"] for r in run.json("list", *scopes, "--kind", "constraint")["records"]] == [ids["rule"]]
    assert len(run.json("list", *scopes, "--limit", "1")["records"]) == 1
    assert all(r["shadowed_by"] is None for r in run.json("list", *scopes, "--no-precedence")["records"])


def test_point_in_time_list_and_inactive(run: Cli) -> None:
    first = run.add("alpha")
    memory = run.json("show", first)["version"]["memory_id"]
    run.add("beta")
    run("forget", first)
    assert [r["text"] for r in run.json("list")["records"]] == ["beta"]
    assert {r["text"] for r in run.json("list", "--inactive")["records"]} == {"alpha", "beta"}
    assert [r["text"] for r in run.json("list", "--memory", memory, "--revision", "1")["records"]] == ["alpha"]
    assert "exactly one --memory" in run("list", "--revision", "1", code=2).stderr


def test_search_graphit_options_and_precedence(run: Cli) -> None:
    ids = three_tiers(run)
    scopes = ["--scope", ORG, "--scope", PROJECT, "--scope", USER]
    result = run.json("search", "retry", *scopes, "--mode", "fts")
    assert [h["entry_id"] for h in result["hits"]] == [ids["user"]]
    assert {s["entry_id"] for s in result["shadowed"]} == {ids["org"], ids["project"]}
    assert "shadowed:" in run("search", "retry", *scopes, "--mode", "fts").stdout
    both = run.json("search", "retry", "--scope", ORG, "--scope", PROJECT, "--mode", "fts", "--order", "priority")
    assert [h["entry_id"] for h in both["hits"]] == [ids["project"]] and both["order"] == "priority"
    everything = run.json("search", "retry", *scopes, "--mode", "fts", "--no-precedence")
    assert len(everything["hits"]) == 3
    friday = run.json("search", "friday", "--scope", PROJECT, "--mode", "fts", "--exclude-mandatory")
    assert friday["hits"] == []
    run(
        "--scope",
        PROJECT,
        "remember",
        "--kind",
        "lesson",
        "--slug",
        "retry",
        "--important",
        "--revise",
        ids["project"],
        "--text",
        "project: retry with jitter",
    )
    old = run.json("search", "idempotent", "--scope", PROJECT, "--mode", "fts", "--include-superseded")["hits"]
    assert [(h["entry_id"], h["superseded"]) for h in old] == [(ids["project"], True)]
    assert (
        "superseded; current"
        in run("search", "idempotent", "--scope", PROJECT, "--mode", "fts", "--include-superseded").stdout
    )
    assert "Invalid value for '--order'" in run("search", "x", "--order", "bogus", code=2).stderr


def test_lookup_flag_rename_and_aliases(run: Cli) -> None:
    entry = run.add("retry with backoff", "--slug", "retry", kind="lesson", scope=PROJECT)
    assert run.json("--scope", PROJECT, "lookup", "lesson", "retry")["record"]["entry_id"] == entry
    rev = run.json("flag", entry, "--mandatory")["revision"]
    assert [c["reason"] for c in rev["changes"]] == ["flag"]
    assert run.json("flag", entry, code=2)["error"]["code"] == "invalid_input"
    run("rename", entry, "retry-backoff")
    found = run.json("--scope", PROJECT, "lookup", "lesson", "retry")
    assert found["redirected_from"] == "retry" and found["record"]["slug"] == "retry-backoff"
    assert "redirected from old slug" in run("--scope", PROJECT, "lookup", "lesson", "retry").stdout
    assert run.json("--scope", PROJECT, "lookup", "lesson", "nothing", code=4)["error"]["code"] == "not_found"
    run.add("another", "--slug", "taken", kind="lesson", scope=PROJECT)
    assert run.json("rename", entry, "taken", code=3)["error"]["code"] == "already_exists"
    assert "--clear" in run("rename", entry, code=2).stderr
    run("rename", entry, "--clear")
    assert run.json("show", entry)["version"]["slug"] is None


def test_relate_supersedes_and_recall_links(run: Cli) -> None:
    old = run.add("deploy with fabric", scope=PROJECT)
    new = run.add("deploy with uv", "--mandatory", scope=PROJECT)
    rev = run.json("relate", new, old, "--kind", "supersedes", "--deactivate-target")["revision"]
    assert sorted(c["op"] for c in rev["changes"]) == ["deactivate", "revise"]
    bundle = run.json("--scope", PROJECT, "recall", "deploy")
    assert [r["entry_id"] for r in bundle["mandatory"]] == [new]
    assert [(x["kind"], x["target"], x["other_state"]) for x in bundle["links"]] == [("supersedes", old, "inactive")]
    assert run.json("relate", new, old, "--kind", "clarifies", "--deactivate-target", code=2)["error"]["code"] == (
        "invalid_input"
    )
    run("relate", new, old, "--kind", "supersedes", "--remove")
    assert run.json("show", new)["version"]["relations"] == []


def test_recall_budget_and_note(run: Cli) -> None:
    three_tiers(run)
    scopes = ["--scope", ORG, "--scope", PROJECT, "--scope", USER]
    full = run.json("recall", "retry", *scopes)
    assert [r["text"] for r in full["mandatory"]] == ["never deploy on friday"]
    assert [h["text"] for h in full["contextual"]] == ["user: I retry three times"]
    tight = run.json("recall", "retry", *scopes, "--budget-chars", "40")
    assert tight["used"] <= 40 and "left out" in tight["note"]
    human = run("recall", "retry", *scopes).stdout
    assert human.startswith("# Mandatory") and "# Contextual" in human
    assert run.json("recall", *scopes, "--budget-chars", "1", "--budget-tokens", "1", code=2)["error"]


def test_diff_blame_and_revert(run: Cli) -> None:
    entry = run.add("line a")
    run("remember", "--kind", "fact", "--text", "line b", "--revise", entry)
    diff = run.json("diff", f"{entry}@1", f"{entry}@2")
    assert [c["field"] for c in diff["changes"]] == ["text"] and "+line b" in diff["text_diff"]
    assert "-line a" in run("diff", entry).stdout
    blame = {b["field"]: b["version"] for b in run.json("blame", entry)["blame"]}
    assert blame["text"] == 2 and blame["kind"] == 1
    run("revert", entry, "1")
    assert run.json("show", entry)["version"]["text"] == "line a"
    assert run.json("diff", f"{entry}@9", code=4)["error"]["code"] == "not_found"


def test_export_import_round_trip_and_tamper(run: Cli, tmp_path: Path) -> None:
    three_tiers(run)
    out = run.json("export", str(tmp_path / "x"))
    assert out["memories"] == 3 and out["entries"] == 4
    other = Cli(f"sqlite:///{tmp_path / 'other.db'}")
    assert other.json("import", str(tmp_path / "x"))["revisions_written"] == out["revisions"]
    assert other.json("import", str(tmp_path / "x"))["revisions_written"] == 0
    other("export", str(tmp_path / "y"))
    files = sorted(p.relative_to(tmp_path / "x") for p in (tmp_path / "x").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "y") for p in (tmp_path / "y").rglob("*") if p.is_file())
    for rel in files:
        assert (tmp_path / "x" / rel).read_bytes() == (tmp_path / "y" / rel).read_bytes()
    ledger = tmp_path / "x/orgs/acme/memories/org/lesson/retry.md"
    ledger.write_text(ledger.read_text("utf-8").replace("backoff", "BACKOFF"), "utf-8")
    third = Cli(f"sqlite:///{tmp_path / 'third.db'}")
    error = third.json("import", str(tmp_path / "x"), code=6)["error"]
    assert error["code"] == "integrity" and "retry.md" in error["message"]
    assert third.json("memories") == {"memories": []}


def test_cite_and_verify_citation(run: Cli) -> None:
    entry = run.add("the validation command is make check")
    citation = run.json("cite", entry)["citation"]
    assert set(citation) == {"memory_ref", "entry_id", "entry_version_id", "entry_content_hash"}
    assert run.json("verify-citation", json.dumps(citation))["valid"] is True
    assert run.json("verify-citation", input=json.dumps(citation))["valid"] is True
    run("remember", "--kind", "fact", "--text", "the validation command is scripts/test", "--revise", entry)
    assert (
        run.json("verify-citation", json.dumps(citation))["version"]["text"] == "the validation command is make check"
    )
    bad = {**citation, "entry_content_hash": "0" * 64}
    assert run.json("verify-citation", json.dumps(bad), code=2)["error"]["code"] == "invalid_citation"
    assert run.json("verify-citation", "{not json", code=2)["error"]["code"] == "invalid_input"
