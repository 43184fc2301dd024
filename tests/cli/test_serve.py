"""``memstone serve`` and ``memstone token …``: CliRunner for the token commands, a real process for serve."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import httpx2
import pytest
from click.testing import CliRunner

from memstone.cli.main import cli


def run(url: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--url", url, *args], catch_exceptions=False)
    assert result.exit_code == code, f"exit {result.exit_code}\n{result.stdout}\n{result.stderr}"
    return json.loads(result.stdout) if "--json" in args else result.stdout


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'm.db'}"


def test_token_create_shows_the_secret_once_and_stores_only_its_hash(url: str, tmp_path: Path) -> None:
    out = run(url, "token", "create", "--user", "alice", "--org", "acme", "--grant", "*=read", "--json")
    secret = out["token"]
    assert secret.startswith("mst_") and out["principal"]["user_scope"] == "memstone://users/alice"
    assert out["grants"] == [{"scope": "*", "permission": "read"}]
    listed = run(url, "token", "list", "--json")
    assert secret not in json.dumps(listed)
    assert listed["tokens"][0]["prefix"] == secret[:10]
    conn = apsw.Connection(str(tmp_path / "m.db"))
    (stored,) = conn.execute("SELECT token_hash FROM auth_tokens").fetchone()
    conn.close()
    assert stored == hashlib.sha256(secret.encode()).hexdigest()
    human = run(url, "token", "create", "--user", "alice", "--org", "acme")
    assert "only time the token is shown" in human


def test_token_revoke_and_list(url: str) -> None:
    made = run(url, "token", "create", "--user", "bob", "--org", "acme", "--label", "ci", "--json")
    token_id = made["token_info"]["token_id"]
    revoked = run(url, "token", "revoke", token_id, "--json")
    assert revoked["token"]["revoked_at"] and revoked["token"]["active"] is False
    assert run(url, "token", "list", "--json")["tokens"] == []
    (row,) = run(url, "token", "list", "--all", "--json")["tokens"]
    assert row["token_id"] == token_id and row["label"] == "ci"
    missing = run(url, "token", "revoke", "tok_nope", "--json", code=4)
    assert missing["error"]["code"] == "not_found"


def test_token_grant_sets_and_removes(url: str) -> None:
    run(url, "token", "create", "--user", "carol", "--org", "acme")
    out = run(
        url, "token", "grant", "--user", "carol", "--scope", "memstone://orgs/acme/*", "--permission", "write", "--json"
    )
    assert out["grants"] == [{"scope": "memstone://orgs/acme/*", "permission": "write"}]
    gone = run(
        url, "token", "grant", "--user", "carol", "--scope", "memstone://orgs/acme/*", "--permission", "none", "--json"
    )
    assert gone["grants"] == []
    run(url, "token", "grant", "--user", "nobody", "--scope", "*", "--permission", "read", code=4)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--user", "dave", "--org", "acme", "--grant", "memstone://orgs/globex=read"], id="other-org"),
        pytest.param(["--user", "dave", "--org", "acme", "--grant", "memstone://users/erin=read"], id="user-scope"),
        pytest.param(["--user", "dave", "--org", "acme", "--grant", "*=owner"], id="bad-permission"),
        pytest.param(["--user", "dave", "--org", "acme", "--grant", "no-equals"], id="bad-syntax"),
        pytest.param(["--user", "Anonymous", "--org", "acme"], id="reserved-user"),
        pytest.param(["--user", "dave", "--org", "Not An Org"], id="bad-org"),
    ],
)
def test_token_create_refuses_bad_input(url: str, args: list[str]) -> None:
    out = run(url, "token", "create", *args, "--json", code=2)
    assert out["error"]["code"] == "invalid_input"
    assert run(url, "token", "list", "--all", "--json")["tokens"] == []


def test_a_user_belongs_to_one_org(url: str) -> None:
    run(url, "token", "create", "--user", "erin", "--org", "acme")
    out = run(url, "token", "create", "--user", "erin", "--org", "globex", "--json", code=2)
    assert "already belongs to organization 'acme'" in out["error"]["message"]


def test_tokens_need_a_file(tmp_path: Path) -> None:
    out = run("sqlite:///:memory:", "token", "create", "--user", "x", "--org", "y", "--json", code=2)
    assert ":memory:" in out["error"]["message"]


def test_serve_refuses_a_public_address_without_tokens(url: str) -> None:
    out = run(url, "--embedding", "none", "serve", "--host", "0.0.0.0", "--json", code=2)
    assert "without access control" in out["error"]["message"]
    local = run(url, "--embedding", "none", "serve", "--host", "0.0.0.0", "--auth", "local", "--json", code=2)
    assert "serves only 127.0.0.1" in local["error"]["message"]


def _serve(url: str, *args: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    env = {**os.environ, "MEMSTONE_EMBEDDING": "none"}
    cmd = [sys.executable, "-m", "memstone.cli.main", "--url", url, "serve", "--port", "0", "--json", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("}"):
            break
    try:
        return proc, json.loads("".join(lines))
    except ValueError:
        proc.kill()
        raise AssertionError(f"no URL printed: {''.join(lines)} {proc.stderr.read() if proc.stderr else ''}") from None


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_serve_runs_the_api_and_the_explorer_on_one_port(url: str) -> None:
    proc, info = _serve(url)
    try:
        assert info["mode"] == "local" and info["url"].startswith("http://127.0.0.1:")
        with httpx2.Client(base_url=info["url"], timeout=10) as client:
            assert client.get("/api/session").json()["mode"] == "local"
            made = client.post("/api/memories", json={"kind": "fact", "text": "Served."})
            assert made.status_code == 201
            assert client.get("/memory/explorer/").status_code == 200
            assert client.get("/api/openapi.json").json()["openapi"] == "3.1.0"
    finally:
        _stop(proc)


def test_serve_in_token_mode_needs_a_token(url: str) -> None:
    secret = run(url, "token", "create", "--user", "alice", "--org", "acme", "--json")["token"]
    proc, info = _serve(url, "--auth", "token")
    try:
        assert info["mode"] == "token"
        with httpx2.Client(base_url=info["url"], timeout=10) as client:
            assert client.get("/api/session").status_code == 401
            me = client.get("/api/session", headers={"Authorization": f"Bearer {secret}"})
            assert me.json()["principal"]["user"] == "alice"
    finally:
        _stop(proc)


def test_serve_on_a_taken_port_says_so_and_exits_2(url: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        out = run(url, "--embedding", "none", "serve", "--port", str(port), "--json", code=2)
        assert out["error"]["code"] == "invalid_input"
        assert f"port {port} on 127.0.0.1 is taken" in out["error"]["message"]
        assert "--port" in out["error"]["hint"]
        human = CliRunner().invoke(cli, ["--url", url, "--embedding", "none", "serve", "--port", str(port)])
        assert human.exit_code == 2 and f"port {port} on 127.0.0.1 is taken" in human.stderr
