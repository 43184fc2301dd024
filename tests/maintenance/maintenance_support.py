"""A fake OpenAI-compatible ``POST /embeddings`` server: the process edge a maintenance judge calls a model at.

It counts requests, can fail the first ``fail_first`` of them with HTTP 503, can hold every answer for
``delay_s`` seconds (a slow model), and with ``hold=True`` holds every answer until ``release`` is set.
Vectors are a bag of hashed words, so texts sharing words are close.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIM = 32


def vector(text: str) -> list[float]:
    out = [0.0] * DIM
    for word in text.lower().split():
        out[int(hashlib.sha256(word.strip(".,").encode()).hexdigest(), 16) % DIM] += 1.0
    norm = math.sqrt(sum(x * x for x in out)) or 1.0
    return [x / norm if any(out) else 1.0 / math.sqrt(DIM) for x in out]


@dataclass
class FakeModel:
    url: str
    fail_first: int = 0
    delay_s: float = 0.0
    requests: int = 0
    texts: int = 0
    release: threading.Event = field(default_factory=threading.Event)


@contextmanager
def _json_server(answer: Callable[[str, Any], tuple[int, bytes]]) -> Iterator[str]:
    """A JSON ``POST`` endpoint on 127.0.0.1, served by a thread: ``answer(path, body)`` gives the status and the
    payload. Yields its ``/v1`` base URL; stopped on exit."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            status, payload = answer(self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


OVERLOADED = (503, b'{"error": "overloaded"}')


@contextmanager
def fake_model_server(*, fail_first: int = 0, delay_s: float = 0.0, hold: bool = False) -> Iterator[FakeModel]:
    state = FakeModel(url="", fail_first=fail_first, delay_s=delay_s)
    if not hold:
        state.release.set()
    lock = threading.Lock()

    def answer(path: str, body: Any) -> tuple[int, bytes]:
        with lock:
            state.requests += 1
            n = state.requests
            state.texts += len(body["input"])
        if state.delay_s:
            time.sleep(state.delay_s)
        state.release.wait(timeout=60)
        if n <= state.fail_first:
            return OVERLOADED
        data = [{"index": i, "embedding": vector(t)} for i, t in enumerate(body["input"])]
        return 200, json.dumps({"data": data, "usage": {"prompt_tokens": 5 * len(data)}}).encode()

    with _json_server(answer) as url:
        state.url = url
        try:
            yield state
        finally:
            state.release.set()  # a held answer ends before the server stops


@dataclass
class FakeChat:
    """A fake OpenAI-compatible ``POST /chat/completions`` server: answers ``reply`` (set it once the ids are
    known), counts requests and the user messages it was sent, fails the first ``fail_first`` with HTTP 503."""

    url: str
    reply: str = '{"merges": []}'
    fail_first: int = 0
    requests: int = 0
    prompts: list[str] = field(default_factory=list)


PROMPT_TOKENS, COMPLETION_TOKENS = 120, 30


@contextmanager
def fake_chat_server(*, fail_first: int = 0) -> Iterator[FakeChat]:
    state = FakeChat(url="", fail_first=fail_first)
    lock = threading.Lock()

    def answer(path: str, body: Any) -> tuple[int, bytes]:
        assert path.endswith("/chat/completions") and body["messages"][0]["role"] == "system"
        with lock:
            state.requests += 1
            n = state.requests
            state.prompts.append(body["messages"][1]["content"])
        if n <= state.fail_first:
            return OVERLOADED
        usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS}
        choice = {"index": 0, "message": {"role": "assistant", "content": state.reply}}
        return 200, json.dumps({"choices": [choice], "usage": usage}).encode()

    with _json_server(answer) as url:
        state.url = url
        yield state
