"""Harness side of the worker protocol: start a system's worker in its own interpreter and call it."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from pathlib import Path

WORKER = Path(__file__).resolve().parent / "worker.py"


class WorkerError(Exception):
    def __init__(self, msg: str, not_run: bool = False) -> None:
        super().__init__(msg)
        self.not_run = not_run


class Worker:
    def __init__(self, python: str, adapter: str, log_path: Path, env: dict[str, str] | None = None) -> None:
        self.python, self.adapter, self.log_path = python, adapter, log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log = open(log_path, "a")  # noqa: SIM115 - lives as long as the worker, closed in kill()
        full_env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "MEM0_TELEMETRY": "False",
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            **(env or {}),
        }
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(
            [python, str(WORKER), adapter],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=full_env,
            bufsize=1,
        )
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.n = 0

    def call(self, op: str, timeout: float = 7200.0, **args):
        """Send one request; return (result, cost). Raises WorkerError on failure or timeout."""
        self.n += 1
        try:
            self.proc.stdin.write(json.dumps({"id": self.n, "op": op, "args": args}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise WorkerError(f"worker died: {self._tail()}") from exc
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise WorkerError(f"{op} timed out after {timeout:.0f} s")
            if self.sel.select(timeout=min(left, 5.0)):
                line = self.proc.stdout.readline()
                if not line:
                    raise WorkerError(f"worker died during {op}: {self._tail()}")
                resp = json.loads(line)
                if not resp["ok"]:
                    raise WorkerError(resp["error"], not_run=resp.get("not_run", False))
                return resp["result"], resp.get("cost", {})
            if self.proc.poll() is not None:
                raise WorkerError(f"worker exited ({self.proc.returncode}) during {op}: {self._tail()}")

    def _tail(self) -> str:
        self.log.flush()
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
            return " | ".join(lines[-3:])[-400:]
        except OSError:
            return "?"

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.call("exit", timeout=60)
        except WorkerError:
            pass
        self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # only the worker this harness started, by its own handle
            self.proc.wait()
        self.log.close() if not self.log.closed else None
