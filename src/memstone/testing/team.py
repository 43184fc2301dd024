"""Real ``memstone serve`` processes for the team-path tests and the load bench (issue 13).

``serve_process(url)`` starts ``memstone serve --port 0 --json`` on a store URL (SQLite file or PostgreSQL) and
yields the server's base URL once it listens; ``memstone(...)`` runs one CLI command in a child process, as a
user's shell would. Both take an ``env`` so a test keeps its settings out of the user's home.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .servers import stop_process

MEMSTONE = str(Path(sys.executable).parent / "memstone")


def isolated_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment with no MEMSTONE_* from the caller, a home and settings file of its own, and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTONE_")}
    env.update(HOME=str(home), MEMSTONE_CONFIG=str(home / "no-config.toml"), MEMSTONE_EMBEDDING="none")
    env.update(extra)
    return env


@dataclass(frozen=True, slots=True)
class Result:
    """One CLI run: its exit code, its ``--json`` answer (``{}`` when none) and its stderr."""

    code: int
    data: dict[str, object]
    stderr: str

    @property
    def error_code(self) -> str | None:
        error = self.data.get("error")
        return str(error.get("code")) if isinstance(error, dict) else None


def memstone(*args: str, env: Mapping[str, str], cwd: Path, timeout: float = 120) -> Result:
    """Run ``memstone ARGS --json`` in a child process."""
    done = subprocess.run(
        [MEMSTONE, *args, "--json"], env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip
    try:
        data = json.loads(done.stdout) if done.stdout.strip() else {}
    except json.JSONDecodeError:
        data = {"stdout": done.stdout}
    return Result(done.returncode, data if isinstance(data, dict) else {"value": data}, done.stderr)


@contextlib.contextmanager
def serve_process(
    url: str, *, env: Mapping[str, str], cwd: Path, auth: str = "local", timeout: float = 120, extra: Sequence[str] = ()
) -> Iterator[str]:
    """``memstone serve`` on ``url`` (a free port, 127.0.0.1; ``extra``: more serve options); yields its base URL
    (``http://127.0.0.1:PORT``)."""
    args = [MEMSTONE, "--url", url, "serve", "--host", "127.0.0.1", "--port", "0", "--auth", auth, "--json", *extra]
    log = (cwd / f"serve-{time.monotonic_ns()}.log").open("w+")
    proc = subprocess.Popen(args, env=dict(env), cwd=cwd, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        while True:  # serve --json prints one JSON object once it listens
            line = proc.stdout.readline()
            if not line:
                log.seek(0)
                raise RuntimeError(f"memstone serve exited ({proc.wait()}): {log.read()[-2000:]}")
            lines.append(line)
            if line.startswith("}"):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("memstone serve did not start")
        yield str(json.loads("".join(lines))["url"]).rstrip("/")
    finally:
        stop_process(proc, 20)
        if proc.stdout is not None:
            proc.stdout.close()
        log.close()


class Team:
    """A token-mode team server's store (a SQLite file in ``tmp``) and the tokens of a writer and a reader of
    ``scope``; ``url`` is set once a server runs on it (see tests/remote/conftest.py)."""

    def __init__(self, tmp: Path, scope: str) -> None:
        self.tmp = tmp
        self.env = isolated_env(tmp)
        self.store = f"sqlite:///{tmp / 'team.db'}"
        self.writer = self._token("alice", f"{scope}=write")
        self.reader = self._token("bob", f"{scope}=read")
        self.url = ""

    def _token(self, user: str, grant: str) -> str:
        made = memstone("--url", self.store, "token", "create", "--user", user, "--org", "acme", "--grant", grant,
                        env=self.env, cwd=self.tmp)  # fmt: skip
        assert made.code == 0, made.stderr
        return str(made.data["token"])


__all__ = ["MEMSTONE", "Result", "Team", "isolated_env", "memstone", "serve_process"]
