"""Texts the capture path sends to the model, with and without the vector cache (issue 16).

``python bench/capture_embed_count.py bench/data/capture/harbor.jsonl [more dev files]``

Runs each file's lines through ``capture()`` (a fresh SQLite store per file, MiniLM in the pipeline) twice: once
re-embedding the live entries on every event, once with :class:`~memstone.capture.vector_cache.VectorCache`.
Prints the texts embedded, the model calls and the CPU time of the captures (``time.process_time``). The texts
counted do not depend on the machine's load; the CPU time does, a little.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_capture import event_of

import memstone
from memstone.capture import capture
from memstone.capture.pipeline import CapturePipeline
from memstone.capture.vector_cache import VectorCache
from memstone.embedding import load_model
from memstone.ports import EmbeddingModel, EmbeddingProfile, EmbeddingResult


class Counting:
    """The real model, counting what it is asked to embed."""

    def __init__(self, model: EmbeddingModel) -> None:
        self.model, self.texts, self.calls = model, 0, 0

    @property
    def profile(self) -> EmbeddingProfile:
        return self.model.profile

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        self.texts += len(texts)
        self.calls += 1
        return await self.model.embed(texts)


async def run(files: list[str], cache: bool) -> None:
    model = Counting(load_model("minilm-l6-int8"))
    events, cpu = 0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in files:
            rows = [json.loads(line) for line in Path(name).read_text("utf-8").splitlines() if line.strip()]
            async with memstone.open_service(f"sqlite:///{tmp}/{Path(name).stem}.db", embedding=None) as svc:
                pipeline = CapturePipeline(embedding=model, vector_cache=VectorCache() if cache else None)
                for row in rows:
                    scope = f"memstone://orgs/bench/projects/{row['project']}"
                    started = time.process_time()
                    await capture(svc, event_of(row, row["project"]), scope=scope, mode="auto", pipeline=pipeline)
                    cpu += time.process_time() - started
                    events += 1
    print(f"vector cache {'on ' if cache else 'off'}: {events} events, {model.texts} texts embedded in "
          f"{model.calls} model calls, capture CPU {cpu:.1f} s")  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    asyncio.run(run(sys.argv[1:], False))
    asyncio.run(run(sys.argv[1:], True))
