"""The optional model extractor against a fake OpenAI-compatible server on 127.0.0.1 started by the test."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from capture_helpers import PROJECT

from memstone import MemoryService
from memstone.capture import (
    CapturePipeline,
    CaptureSettings,
    EventContext,
    ExtractorSettings,
    ModelExtractor,
    TokenUsage,
    TurnStop,
    UserPrompt,
    capture,
)


class FakeServer:
    """Answers POST /v1/chat/completions with the next canned reply; records every request it got."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                outer.requests.append(json.loads(self.rfile.read(length)))
                outer.headers.append(dict(self.headers))
                status, body = outer.replies.pop(0) if outer.replies else (500, {"error": "no reply queued"})
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: object) -> None:  # keep test output clean
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, candidates: list[dict[str, object]], *, prompt: int, completion: int) -> None:
        content = json.dumps({"candidates": candidates})
        self.replies.append(
            (200, {"choices": [{"message": {"role": "assistant", "content": content}}],
                   "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}})
        )  # fmt: skip


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
        server.thread.join(timeout=5)


async def test_model_candidates_pass_the_same_admission_and_tokens_are_counted(
    service: MemoryService, fake: FakeServer
) -> None:
    fake.reply(
        [
            {"kind": "lesson", "text": "Flaky webhook tests come from a shared Redis database; give each test its "
             "own key prefix.", "scope": "project"},  # supported by the report: admitted
            {"kind": "fact", "text": "The team deploys with ArgoCD to three Kubernetes clusters."},  # invented
            {"kind": "fact", "text": "Maybe the retries should use jitter."},  # speculation
            {"kind": "vibe", "text": "Good work on the webhook tests today."},  # unknown kind
        ],
        prompt=812,
        completion=96,
    )  # fmt: skip
    extractor = ModelExtractor(fake.base_url, "fake-model", api_key="test-key-not-real")
    pipeline = CapturePipeline(extractor=extractor)
    report = (
        "Fixed the flaky webhook tests: they shared one Redis database, so each test now gets its own key prefix. "
        "go test passes."
    )
    turn = TurnStop(final_report=report, changed_paths=("internal/webhook/sender_test.go",),
                    context=EventContext(session_id="sess-A"))  # fmt: skip
    result = await capture(service, turn, scope=PROJECT, pipeline=pipeline)

    by_reason = {o.candidate.text[:20]: (o.action, o.reason) for o in result.outcomes if o.candidate}
    assert by_reason["Flaky webhook tests "][0] == "added"
    assert by_reason["The team deploys wit"] == ("rejected", "unsupported")
    assert by_reason["Maybe the retries sh"] == ("rejected", "speculation")
    assert by_reason["Good work on the web"] == ("rejected", "unknown_kind")
    kinds = sorted([(await service.get(e)).kind for e in result.entries()])
    assert kinds == ["lesson", "working_note"]  # the mechanical note is still there

    assert result.usage == TokenUsage(calls=1, prompt_tokens=812, completion_tokens=96, total_tokens=908)
    assert extractor.session_usage("sess-A") == result.usage
    request = fake.requests[0]
    assert request["model"] == "fake-model" and request["temperature"] == 0
    assert report in request["messages"][1]["content"]
    assert fake.headers[0]["Authorization"] == "Bearer test-key-not-real"
    assert "test-key-not-real" not in repr(extractor)


async def test_usage_adds_up_per_session_and_for_the_extractor(service: MemoryService, fake: FakeServer) -> None:
    extractor = ModelExtractor(fake.base_url, "fake-model")
    pipeline = CapturePipeline(extractor=extractor)
    fake.reply([], prompt=100, completion=5)
    fake.reply([], prompt=120, completion=7)
    fake.reply([{"kind": "constraint", "text": "Never deploy ledgerd on Fridays."}], prompt=90, completion=20)
    for session, text in (
        ("s1", "hello there"),
        ("s1", "what does this do?"),
        ("s2", "Never deploy ledgerd on Fridays."),
    ):
        await capture(service, UserPrompt(text=text, context=EventContext(session_id=session)), scope=PROJECT,
                      pipeline=pipeline)  # fmt: skip
    assert extractor.session_usage("s1") == TokenUsage(
        calls=2, prompt_tokens=220, completion_tokens=12, total_tokens=232
    )
    assert extractor.session_usage("s2").total_tokens == 110
    assert extractor.usage.calls == 3 and extractor.usage.total_tokens == 342
    head = await service.resolve(PROJECT)
    assert head is not None
    assert [v.text for v in await service.entries(head)] == ["Never deploy ledgerd on Fridays."]  # one entry, deduped


async def test_a_failing_model_never_fails_capture(service: MemoryService, fake: FakeServer) -> None:
    fake.replies.append((503, {"error": "overloaded"}))
    fake.replies.append((200, b"not json"))
    fake.replies.append((200, {"choices": [{"message": {"content": "I think there are no memories here."}}]}))
    pipeline = CapturePipeline(extractor=ModelExtractor(fake.base_url, "fake-model"))
    errors = []
    for text in ("Never push to main directly.", "Prefer squash merges for features.", "We use pnpm, not npm."):
        result = await capture(service, UserPrompt(text=text), scope=PROJECT, pipeline=pipeline)
        assert result.status == "stored"  # the deterministic candidate is written anyway
        errors.append(result.extractor_error)
    assert errors[0] is not None and "HTTP 503" in errors[0]
    assert errors[1] == "extractor response is not JSON"
    assert errors[2] == "extractor message is not JSON"
    unreachable = ModelExtractor("http://127.0.0.1:9/v1", "m", timeout=2)
    extraction = await unreachable.extract("We use uv.")
    assert extraction.candidates == () and extraction.error and extraction.usage.calls == 1


async def test_the_model_never_sees_an_event_with_a_secret(service: MemoryService, fake: FakeServer) -> None:
    pipeline = CapturePipeline(extractor=ModelExtractor(fake.base_url, "fake-model"))
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    result = await capture(service, UserPrompt(text=f"use {secret} for the API"), scope=PROJECT, pipeline=pipeline)
    assert result.status == "refused" and fake.requests == []


def test_extractor_settings_read_the_key_from_the_environment_only() -> None:
    settings = ExtractorSettings(base_url="http://127.0.0.1:8080/v1", model="m", api_key_env="MEMSTONE_TEST_KEY")
    extractor = ModelExtractor.from_settings(settings, {"MEMSTONE_TEST_KEY": "k-123"})
    assert extractor._api_key == "k-123"
    saved = CaptureSettings(extractor=settings).to_dict()
    assert saved["extractor"] == {"base_url": "http://127.0.0.1:8080/v1", "model": "m",
                                  "api_key_env": "MEMSTONE_TEST_KEY", "timeout": 30.0, "max_candidates": 5}  # fmt: skip
    assert "k-123" not in json.dumps(saved)
