"""The warm hook server (agents/hook_server.py), with real processes: the first hook starts it, later hooks are
answered by a forked child of it with the caller's own stdin/stdout, working directory and environment, the same
output as a hook run in its own process, and it steps aside (the hook runs itself) whenever it cannot be trusted:
changed code, a folder that is not private, the setting turned off."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_helpers import MANDATORY, payload

from memstone.agents import hook_server

pytestmark = pytest.mark.skipif(not hasattr(__import__("socket"), "SO_PEERCRED"), reason="Linux only (SO_PEERCRED)")


@pytest.fixture
def server_env(env: dict[str, str], store_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A hook environment with the server on, its socket folder under this test's own TMPDIR."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = {**env, "MEMSTONE_URL": store_url, "MEMSTONE_HOOK_SERVER": "30", "MEMSTONE_HOOK_FOREGROUND": "1"}
    out["TMPDIR"] = str(tmp)
    yield out
    for pid in _server_pids(tmp):
        os.kill(pid, signal.SIGTERM)


def _server_pids(tmp: Path) -> list[int]:
    done = subprocess.run(["pgrep", "-f", "memstone.agents.hook_server"], capture_output=True, text=True)
    pids = []
    for pid in map(int, done.stdout.split()):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"TMPDIR={tmp}".encode() in environ:
            pids.append(pid)
    return pids


def hook(
    args: list[str], stdin: str, env: dict[str, str], *, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memstone", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
        timeout=60,
    )


def imported(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def socket_of(env: dict[str, str]) -> Path:
    """Where a hook process (``python -m memstone`` from this interpreter) looks for the server's socket."""
    code = "from memstone.agents.hook_client import socket_name; print(socket_name())"
    done = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, check=True
    )
    return Path(env["TMPDIR"]) / f"memstone-{os.getuid()}" / done.stdout.strip()


def wait_for(path: Path, *, present: bool = True, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while path.exists() is not present:
        assert time.monotonic() < deadline, f"{path} {'never appeared' if present else 'is still there'}"
        time.sleep(0.05)


def served(done: subprocess.CompletedProcess[str]) -> bool:
    """A call the server answered: the hook process itself loaded neither the service nor the store."""
    modules = imported(done)
    return "memstone.agents.hook_client" in modules and "memstone.service" not in modules


def test_the_first_hook_starts_the_server_and_the_next_is_answered_by_it_the_same(
    server_env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    body = json.dumps(payload("claude-code", "session-start", cwd=project, session="one"))
    first = hook(["hook", "session-start", "--agent", "claude-code"], body, server_env)
    assert first.returncode == 0 and not served(first), first.stderr[-400:]
    wait_for(socket_of(server_env))
    body = json.dumps(payload("claude-code", "session-start", cwd=project, session="two"))
    second = hook(["hook", "session-start", "--agent", "claude-code"], body, server_env)
    assert second.returncode == 0 and served(second), second.stderr[-400:]
    # A served hook's own process only forwards its call: none of the stdlib modules that cost it ~130 M
    # instructions at stop 35 (enums, regular expressions, OpenSSL, typing).
    heavy = {"typing", "json", "re", "socket", "enum", "pathlib", "tempfile", "hashlib"}
    assert heavy & imported(second) == set()
    assert (
        second.stdout == first.stdout
        and MANDATORY in json.loads(second.stdout)["hookSpecificOutput"]["additionalContext"]
    )
    # The socket and its folder are this user's alone.
    assert socket_of(server_env).stat().st_mode & 0o777 == 0o600
    assert socket_of(server_env).parent.stat().st_mode & 0o777 == 0o700


def test_each_call_runs_with_its_own_environment_working_directory_and_json_flag(
    server_env: dict[str, str], project: Path, seeded: dict[str, str], tmp_path: Path
) -> None:
    body = json.dumps(payload("claude-code", "session-start", cwd=project))
    hook(["hook", "session-start", "--agent", "claude-code"], body, server_env)
    wait_for(socket_of(server_env))
    # Another store through the same server: its (empty) briefing, not the first store's.
    other = {**server_env, "MEMSTONE_URL": f"sqlite:///{tmp_path / 'other' / 'memstone.db'}"}
    done = hook(["hook", "session-start", "--agent", "claude-code", "--json"], body, other, cwd=tmp_path)
    assert done.returncode == 0 and served(done), done.stderr[-400:]
    report = json.loads(done.stdout)
    assert report["error"] is None and MANDATORY not in json.dumps(report)
    assert (tmp_path / "other" / "memstone.db").exists()  # the call opened the store its environment named
    done = hook(["hook", "session-start", "--agent", "claude-code", "--json"], body, server_env, cwd=tmp_path)
    assert served(done) and MANDATORY in json.dumps(json.loads(done.stdout))


def test_changed_code_makes_the_server_step_aside_and_exit(
    server_env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    body = json.dumps(payload("claude-code", "session-start", cwd=project))
    hook(["hook", "session-start", "--agent", "claude-code"], body, server_env)
    sock = socket_of(server_env)
    wait_for(sock)
    module = Path(hook_server.__file__).parent / "payloads.py"
    before = module.stat()
    try:
        os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        done = hook(["hook", "session-start", "--agent", "claude-code"], body, server_env)
        assert done.returncode == 0 and not served(done)  # answered by the hook process itself
        assert MANDATORY in done.stdout
    finally:
        os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    wait_for(sock, present=False)  # the stale server is gone


def test_the_setting_0_means_no_server(server_env: dict[str, str], project: Path, seeded: dict[str, str]) -> None:
    env = {**server_env, "MEMSTONE_HOOK_SERVER": "0"}
    body = json.dumps(payload("claude-code", "session-start", cwd=project))
    for _ in range(2):
        done = hook(["hook", "session-start", "--agent", "claude-code"], body, env)
        assert done.returncode == 0 and not served(done) and MANDATORY in done.stdout
    time.sleep(1.0)
    assert not socket_of(env).exists() and _server_pids(Path(env["TMPDIR"])) == []


def test_a_socket_folder_that_is_not_private_is_never_used(
    server_env: dict[str, str], project: Path, seeded: dict[str, str], tmp_path: Path
) -> None:
    # Someone plants the folder as a symlink to a place they control: the hook runs itself, nothing is created there.
    planted = tmp_path / "planted"
    planted.mkdir(mode=0o777)
    (Path(server_env["TMPDIR"]) / f"memstone-{os.getuid()}").symlink_to(planted)
    body = json.dumps(payload("claude-code", "session-start", cwd=project))
    for _ in range(2):
        done = hook(["hook", "session-start", "--agent", "claude-code"], body, server_env)
        assert done.returncode == 0 and not served(done) and MANDATORY in done.stdout
    time.sleep(1.0)
    assert list(planted.iterdir()) == []


def test_the_server_exits_when_idle(server_env: dict[str, str], project: Path, seeded: dict[str, str]) -> None:
    env = {**server_env, "MEMSTONE_HOOK_SERVER": "1"}
    body = json.dumps(payload("claude-code", "session-start", cwd=project))
    hook(["hook", "session-start", "--agent", "claude-code"], body, env)
    sock = socket_of(env)
    wait_for(sock)
    wait_for(sock, present=False, seconds=30)
    deadline = time.monotonic() + 10
    while _server_pids(Path(env["TMPDIR"])):  # the socket goes first, then the process ends
        assert time.monotonic() < deadline, "the idle server did not exit"
        time.sleep(0.05)


def test_the_server_loads_the_capture_pipeline_and_its_weights_before_it_forks() -> None:
    """A prompt or turn hook captures (inline, or in a detached child forked from the answering child): a child that
    imported the capture pipeline and parsed the junk screen's weights itself paid ~90 ms a hook (stop 29)."""
    code = (
        "import sys\n"
        "from memstone.agents import hook_server\n"
        "assert 'memstone.capture.pipeline' not in sys.modules\n"
        "hook_server.preload()\n"
        "from memstone.capture import junk_text\n"
        "assert 'memstone.capture.pipeline' in sys.modules\n"
        "assert junk_text.shipped_text_classifier.cache_info().currsize == 1\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_served_hook_closes_the_agents_pipes_when_it_answers_not_when_its_capture_ends(
    server_env: dict[str, str], project: Path, seeded: dict[str, str], store_url: str
) -> None:
    """The capture a turn defers runs in a child forked from the answering child; that child must hold none of the
    agent's pipes, or the agent (which reads the hook's output to its end) waits for the capture too. It did: the
    answering child kept the descriptors it received beside its 0/1/2, and ~90 ms of every prompt hook's p50 in
    bench/bench_hooks.py was its capture (stop 36)."""
    import select
    import sqlite3

    env = {**server_env, "MEMSTONE_HOOK_FOREGROUND": "0"}
    start = json.dumps(payload("claude-code", "session-start", cwd=project))
    hook(["hook", "session-start", "--agent", "claude-code"], start, env)
    wait_for(socket_of(env))
    turn = json.dumps(payload("claude-code", "stop", cwd=project))
    # A writer holds the store: the deferred capture waits for it (up to the store's busy timeout, 15 s).
    lock = sqlite3.connect(store_url.removeprefix("sqlite:///"), isolation_level=None, timeout=30)
    lock.execute("BEGIN IMMEDIATE")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memstone", "hook", "stop", "--agent", "claude-code"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(turn.encode())
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        eof = time.monotonic() + 5.0
        for stream in (proc.stdout, proc.stderr):
            while True:
                ready, _, _ = select.select([stream], [], [], max(0.0, eof - time.monotonic()))
                assert ready, "the hook exited but its output pipe is still held open (by its capture child)"
                if not os.read(stream.fileno(), 4096):
                    break
        proc.stdout.close()
        proc.stderr.close()
    finally:
        lock.rollback()
        lock.close()


def test_a_call_reaches_the_server_as_the_client_sent_it() -> None:
    """The call is NUL-separated bytes: any argument, path or environment value (not UTF-8, with ``=``, a newline
    or a separator of another format) comes back the same, and a body of another protocol is refused."""
    from memstone.agents.hook_client import decode_call, encode_call, server_key

    argv = ["hook", "stop", "--agent", "claude-code", "--url=a=b\nc"]
    env = {"ODD": "caf\udce9 = 1\n2", "EMPTY": ""}
    saved = dict(os.environ)
    try:
        os.environ.update(env)
        key, cwd, umask, got_argv, got_env = decode_call(encode_call(argv))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert key == server_key() and cwd == os.getcwd() and got_argv == argv
    assert {k: got_env[k] for k in env} == env and umask == os.umask(umask)
    for bad in (b"", b"1\0/\x0018", json.dumps({"protocol": 1}).encode(), b"2\0/\00\09\0a"):
        with pytest.raises(ValueError):
            decode_call(bad)
