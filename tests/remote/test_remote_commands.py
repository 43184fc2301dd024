"""The rest of the CLI against a team server (issue 13): catalogues, recall, export, purge, maintenance status
and the capture review queue give the same JSON and the same exit and error codes as on a local store; an agent
hook pointed at a team server captures into the server's review queue; a 428 is the local stale-update error.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memstone.domain.errors import RevisionConflictError
from memstone.remote.client import RemoteClient
from memstone.testing.team import MEMSTONE, Result, Team, isolated_env, memstone

SCOPE = "memstone://orgs/acme/projects/web"  # the team fixture's scope (tests/remote/conftest.py)
Cli = Callable[..., Result]
IDS = re.compile(r"\b(ent|ver|mem|cap|run|prn|rev|src|prg)_[0-9A-Za-z]{10,40}\b")
TIMES = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
HASHES = re.compile(r"\b(sha256:)?[0-9a-f]{64}\b")


def same(value: object) -> object:
    """``value`` with what each store makes its own (ids, times, hashes) replaced by placeholders."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    text = HASHES.sub("HASH", TIMES.sub("TIME", IDS.sub(lambda m: f"{m.group(1)}_X", text)))
    # The surface a purge records is the transport's: the server's service runs as "api", the CLI's as "human".
    return json.loads(re.sub(r'surface(\\?)":\s*(\\?)"(api|human)', r'surface\1": \2"S', text))


def admin_token(team: Team) -> str:
    made = memstone("--url", team.store, "token", "create", "--user", "carol", "--org", "acme", "--grant",
                    f"{SCOPE}=admin", env=team.env, cwd=team.tmp)  # fmt: skip
    assert made.code == 0, made.stderr
    return str(made.data["token"])


def local_cli(tmp: Path) -> tuple[Cli, str]:
    env, store = isolated_env(tmp, MEMSTONE_AUTHOR="carol"), f"sqlite:///{tmp / 'local.db'}"  # the remote's user
    return (lambda *args: memstone("--url", store, "--scope", SCOPE, *args, env=env, cwd=tmp)), store


def remote_cli(team: Team, token: str | None, tmp: Path) -> Cli:
    env = isolated_env(tmp, **({"MEMSTONE_TOKEN": token} if token else {}))
    return lambda *args: memstone("--url", team.url, "--scope", SCOPE, *args, env=env, cwd=tmp)


def scenario(cli: Cli, out: Path) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []

    def step(name: str, *args: str, keep: bool = True) -> Result:
        r = cli(*args)
        seen.append((name, r.code, r.error_code, same(r.data) if keep and r.code == 0 else None))
        return r

    for args in (
        ("--kind", "constraint", "--mandatory", "--text", "Never edit site/: it is generated."),
        ("--kind", "procedure", "--important", "--text", "Release: tag main, then run scripts/publish."),
        ("--kind", "fact", "--tag", "ops", "--text", "Staging deploys run from the deploy branch every hour."),
    ):
        step("remember", "remember", *args, keep=False)
    fact = str(cli("search", "staging").data["hits"][0]["entry_id"])  # type: ignore[index]
    step("list", "list")
    step("list-kind", "list", "--kind", "fact", "--tag", "ops")
    step("list-bad-tag", "list", "--tag", " ")
    step("important", "important")
    step("mandatory", "mandatory")
    step("recall", "recall", "when do staging deploys run")
    step("recall-budget", "recall", "--budget-chars", "60", "--order", "relevance")
    step("recall-two-budgets", "recall", "x", "--budget-chars", "60", "--budget-tokens", "10")
    status = cli("maintenance", "status")  # the daemons differ by deployment: the team server runs its own
    daemons = status.data.pop("daemons") if isinstance(status.data, dict) else None
    seen.append(("status", status.code, status.error_code, same(status.data)))
    seen.append(("daemon-statuses", sorted(str(d["status"]) for d in daemons or [])))
    step("status-bad-scope", "maintenance", "status", "--scope", "not a scope")
    step("tombstones-none", "purge", fact, "--list")
    step("purge-no-reason", "purge", fact, "--yes")
    step("purge-unconfirmed", "purge", fact, "--reason", "leaked")
    step("purge", "purge", fact, "--yes", "--reason", "leaked a host name")
    step("tombstones", "purge", fact, "--list")
    step("purge-unknown", "purge", "ent_01M8RC00TC02RDF3185HSEDKRA", "--yes", "--reason", "x")
    step("list-after-purge", "list", "--inactive")
    step("review-empty", "review", "list", "--status", "all")
    step("review-unknown", "review", "accept", "cap_nothing00000000000000000")
    exported = step("export", "export", str(out), keep=False)
    names = sorted(re.sub(r"-[0-9a-z]{8}\.md$", "-X.md", p.relative_to(out).as_posix()) for p in out.rglob("*.md"))
    seen.append(("export-files", exported.code, names))
    seen.append(("export-text", [same(p.read_text()) for p in sorted(out.rglob("*.md"))]))
    return seen


def test_the_other_commands_give_the_same_outcomes_locally_and_against_a_team_server(
    team: Team, tmp_path: Path
) -> None:
    cli, _ = local_cli(tmp_path / "l")
    (tmp_path / "l").mkdir()
    local = scenario(cli, tmp_path / "l" / "export")
    (tmp_path / "r").mkdir()
    remote = scenario(remote_cli(team, admin_token(team), tmp_path / "r"), tmp_path / "r" / "export")
    for mine, theirs in zip(local, remote, strict=True):
        if mine[0] == "daemon-statuses":  # no daemon ran on the local store; the server runs one in serve
            assert (mine[1], theirs[1]) == ([], ["ok"])
            continue
        assert theirs == mine, mine[0]
    codes = {s[0]: (s[1], s[2]) for s in local if len(s) == 4}
    assert codes["purge-no-reason"] == (2, "invalid_input") and codes["purge-unknown"] == (4, "not_found")
    assert codes["recall-two-budgets"][0] == 2 and codes["review-unknown"] == (4, "not_found")
    assert codes["list"] == (0, None) and codes["purge"] == (0, None)
    listed = next(s[3] for s in local if s[0] == "list")
    assert [r["kind"] for r in listed["records"]] == ["constraint", "procedure", "fact"]
    assert next(s[2] for s in local if s[0] == "export-files"), "the export wrote files"


def test_purge_on_a_team_server_needs_admin(team: Team, tmp_path: Path) -> None:
    writer = remote_cli(team, team.writer, tmp_path)
    made = writer("remember", "--kind", "fact", "--text", "Writers cannot erase history.")
    entry = str(made.data["entries"][0])  # type: ignore[index]
    refused = writer("purge", entry, "--yes", "--reason", "try")
    assert (refused.code, refused.error_code) == (7, "forbidden")
    assert writer("show", entry).code == 0  # nothing was erased


async def test_a_428_is_the_local_stale_update_error(team: Team, tmp_path: Path) -> None:
    writer = remote_cli(team, team.writer, tmp_path)
    entry = str(writer("remember", "--kind", "fact", "--text", "A 428 is a conflict.").data["entries"][0])  # type: ignore[index]
    async with httpx2.AsyncClient(base_url=team.url, headers={"Authorization": f"Bearer {team.writer}"}) as raw:
        answer = await raw.patch(f"/api/memories/{entry}", json={"text": "No precondition."})
    assert answer.status_code == 428 and answer.json()["error"]["code"] == "precondition_required"
    async with RemoteClient(team.url, token=team.writer) as client:
        with pytest.raises(RevisionConflictError) as caught:
            await client.call("PATCH", f"/api/memories/{entry}", json={"text": "No precondition."})
    assert caught.value.code == "revision_conflict"  # what a stale update gives locally (exit 3)
    local, _ = local_cli(tmp_path)
    made = local("remember", "--kind", "fact", "--text", "Stale locally.")
    stale = local("remember", "--revise", str(made.data["entries"][0]), "--text", "x", "--expected-version", "9")  # type: ignore[index]
    assert (stale.code, stale.error_code) == (3, caught.value.code)


def _prompt_hook(env: dict[str, str], cwd: Path, prompt: str) -> None:
    payload = {"session_id": "s-1", "hook_event_name": "UserPromptSubmit", "cwd": str(cwd), "prompt": prompt}
    done = subprocess.run([MEMSTONE, "hook", "user-prompt-submit", "--agent", "claude-code"],
                          input=json.dumps(payload), env=env, cwd=cwd, capture_output=True, text=True, timeout=120,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr


def _cli(url: str, env: dict[str, str], scope: str, cwd: Path) -> Cli:
    return lambda *args: memstone("--url", url, "--scope", scope, *args, env=env, cwd=cwd)


def _queued(cli: Cli, want: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 90  # the hook captures in a detached child, after it answered
    while True:
        items = cli("review", "list").data.get("items", [])
        assert isinstance(items, list)
        if len(items) >= want or time.monotonic() > deadline:
            return items
        time.sleep(0.5)


def test_a_hook_on_a_team_server_captures_into_the_servers_review_queue(team: Team, tmp_path: Path) -> None:
    scope = "memstone://orgs/acme/projects/capture"
    granted = memstone("--url", team.store, "token", "grant", "--user", "alice", "--scope", scope, "--permission",
                       "write", env=team.env, cwd=team.tmp)  # fmt: skip
    assert granted.code == 0, granted.data
    project = {"MEMSTONE_PROJECT_SCOPE": scope, "MEMSTONE_USER_SCOPE": "memstone://users/alice"}
    local_store = f"sqlite:///{tmp_path / 'hooks.db'}"
    sides = {
        "local": (local_store, local_store, isolated_env(tmp_path, MEMSTONE_URL=local_store, MEMSTONE_AUTHOR="alice",
                                                         **project)),
        "remote": (team.store, team.url, isolated_env(tmp_path, MEMSTONE_URL=team.url, MEMSTONE_TOKEN=team.writer,
                                                      **project)),
    }  # fmt: skip
    seen = {}
    for side, (store, url, env) in sides.items():
        review = memstone("--url", store, "capture-settings", "set", "--mode", f"{scope}=review",
                          env=isolated_env(tmp_path), cwd=tmp_path)  # fmt: skip
        assert review.code == 0, review.data
        _prompt_hook(env, tmp_path, "We use pnpm, not npm, for every package in this repository.")
        cli = _cli(url, env, scope, tmp_path)
        (item,) = _queued(cli, 1)
        accepted = cli("review", "accept", str(item["item_id"]))
        found = cli("search", "pnpm")
        seen[side] = (same(item), accepted.code, same(accepted.data), [h["text"] for h in found.data["hits"]])  # type: ignore[union-attr]
    assert seen["remote"] == seen["local"]
    item, code, accepted, hits = seen["local"]
    assert item["status"] == "pending" and item["scope"] == scope and code == 0  # type: ignore[index]
    assert accepted["item"]["status"] == "accepted" and len(accepted["entries"]) == 1 and hits  # type: ignore[index]
    # Nothing was captured into a file on the laptop: the remote hook's home holds no store.
    assert not list((tmp_path / ".memstone").glob("*.db")) if (tmp_path / ".memstone").exists() else True
