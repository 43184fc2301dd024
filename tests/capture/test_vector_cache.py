"""Issue 16: the capture path keeps the vectors of a Memory's live entries between events, so an event embeds
only its own new texts, and the cache holds nothing of an entry once it is no longer live."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from capture_helpers import PROJECT

from memstone import MemoryService
from memstone.capture import UserPrompt, capture
from memstone.capture.admission import semantic_key
from memstone.capture.candidates import Candidate
from memstone.capture.pipeline import CapturePipeline
from memstone.capture.vector_cache import VectorCache, text_digest
from memstone.embedding import load_model
from memstone.ports import EmbeddingModel, EmbeddingProfile, EmbeddingResult

RULES = [
    "Background jobs must be safe to retry: a retried job may never send a second email.",
    "The public API is versioned under /v2 and old clients keep /v1 until March.",
    "Every migration must be reversible, with a down step tested in CI.",
]
RESTATED = "Make sure a retried background job never emails anyone twice."


class Counting:
    """The real MiniLM model, counting the texts it is asked to embed (the model is the process edge here)."""

    def __init__(self, model: EmbeddingModel) -> None:
        self.model = model
        self.texts: list[str] = []

    @property
    def profile(self) -> EmbeddingProfile:
        return self.model.profile

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        self.texts.extend(texts)
        return await self.model.embed(texts)


@pytest.fixture(scope="module")
def minilm() -> EmbeddingModel:
    pytest.importorskip("onnxruntime")
    return load_model("minilm-l6-int8")


def test_the_cache_keeps_vectors_across_processes_and_only_of_live_texts(tmp_path: Path) -> None:
    path = tmp_path / "capture-vectors.sqlite"
    VectorCache(path).keep("p", "mem_1", {"a": (1.0, 0.0), "b": (0.0, 1.0)}, live=["a", "b"])
    again = VectorCache(path)  # the next event's child: a new process, the same file
    assert again.lookup("p", "mem_1", ["a", "b", "c"]) == {"a": (1.0, 0.0), "b": (0.0, 1.0)}
    assert again.lookup("p", "mem_2", ["a"]) == {} and again.lookup("q", "mem_1", ["a"]) == {}
    again.keep("p", "mem_1", {"c": (0.6, 0.8)}, live=["a"])  # "b" is no longer live (revised, forgotten, purged)
    rows = sqlite3.connect(path).execute("SELECT digest FROM capture_vectors").fetchall()
    assert sorted(d for (d,) in rows) == sorted([text_digest("a"), text_digest("c")])
    VectorCache(path).keep("q", "mem_1", {"a": (1.0, 0.0)}, live=["a"])  # another profile replaces the old one
    assert VectorCache(path).lookup("p", "mem_1", ["a"]) == {}


def test_a_cache_file_that_cannot_be_opened_is_skipped(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    cache = VectorCache(blocker / "capture-vectors.sqlite")
    cache.keep("p", "m", {"a": (1.0,)}, live=["a"])
    assert cache.lookup("p", "m", ["a"]) == {"a": (1.0,)}  # still this process's copy


async def test_a_second_event_embeds_only_its_own_texts(
    service: MemoryService, minilm: EmbeddingModel, tmp_path: Path
) -> None:
    path = tmp_path / "capture-vectors.sqlite"
    for text in RULES:
        await capture(service, UserPrompt(text=text), scope=PROJECT)

    cold = Counting(minilm)
    first = await capture(
        service,
        UserPrompt(text="Background jobs run on the worker pool, never in the web process."),
        scope=PROJECT,
        pipeline=CapturePipeline(embedding=cold, vector_cache=VectorCache(path)),
    )
    assert semantic_key(RULES[0]) in cold.texts  # the first event embeds the live entries it compares with
    assert [o.action for o in first.outcomes] == ["added"]

    head = await service.resolve(PROJECT)
    assert head is not None
    rule = next(v.entry_id for v in await service.entries(head) if v.text == RULES[0])
    warm = Counting(minilm)  # the next event, in a new process: only the file is shared
    again = await capture(
        service,
        UserPrompt(text=RESTATED),
        scope=PROJECT,
        pipeline=CapturePipeline(embedding=warm, vector_cache=VectorCache(path)),
    )
    assert warm.texts == [semantic_key(RESTATED)]  # the live entries' vectors came from the cache
    assert [(o.action, o.entry_id) for o in again.outcomes] == [("revised", rule)]


async def test_cached_vectors_are_the_models_own(
    service: MemoryService, minilm: EmbeddingModel, tmp_path: Path
) -> None:
    from memstone.capture.pipeline import _semantic

    for text in RULES:
        await capture(service, UserPrompt(text=text), scope=PROJECT)
    head = await service.resolve(PROJECT)
    assert head is not None
    live = await service.entries(head)
    cands = [Candidate(kind="constraint", text=RESTATED, origin="statement")]
    path = tmp_path / "capture-vectors.sqlite"
    await _semantic(minilm, cands, live, VectorCache(path), head.memory_id)
    cached = await _semantic(minilm, cands, live, VectorCache(path), head.memory_id)
    fresh = await _semantic(minilm, cands, live)
    assert cached is not None and fresh is not None and set(cached.vectors) == set(fresh.vectors)
    for key, vector in fresh.vectors.items():
        assert cached.vectors[key] == pytest.approx(vector, abs=1e-6)
    assert RULES[0].encode() not in path.read_bytes()  # digests and vectors, never the text
