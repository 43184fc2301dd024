"""PostgreSQL starts a hybrid search while the model still embeds the query: the search's reads and its FTS
statement run meanwhile, the HNSW statement takes the vector when it is ready. Observed at the process edges: a
model that embeds only once the server shows the search's transaction past its FTS statement (the old code began
the search after the vector, so the model waited in vain), with the hits and errors of a model that is at once."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest

from memstone import EntryInput, open_service
from memstone.domain.errors import InvalidInput
from memstone.embedding.hashing import HashingEmbedder
from memstone.ports import EmbeddingProfile, EmbeddingResult

# The search's connection, idle inside its read transaction right after its FTS step: the BM25 statement over the
# postings, or the texts of its top rows read after it.
_AFTER_FTS = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
    "AND state = 'idle in transaction' AND (query LIKE '%memory_entry_postings%' "
    "OR query LIKE '%searchable_text FROM memory_entry_heads%')"
)
QUERY = "deploy step 3 build host"


class EmbedsAfterFts:
    """The hashing model behind a query embedding that waits (up to ``patience`` s) until the server shows a search
    transaction past its FTS statement, then embeds, or fails with ``error``; it records what it saw."""

    def __init__(self, url: str, *, error: Exception | None = None, patience: float = 3.0) -> None:
        self.inner = HashingEmbedder(64)
        self.url, self.error, self.patience = url, error, patience
        self.saw: list[bool] = []
        self.free = 0  # embeddings made at once first, unrecorded (a warm-up search's)

    @property
    def profile(self) -> EmbeddingProfile:
        return self.inner.profile

    def windows(self, text: str) -> tuple[str, ...]:
        return self.inner.windows(text)

    def _wait(self) -> bool:
        deadline = time.monotonic() + self.patience
        with psycopg.connect(self.url, autocommit=True) as conn:
            while time.monotonic() < deadline:
                row = conn.execute(_AFTER_FTS).fetchone()
                if row is not None and row[0]:
                    return True
                time.sleep(0.005)
        return False

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        if self.free:
            self.free -= 1
            return await self.inner.embed(texts)
        self.saw.append(await asyncio.to_thread(self._wait))
        if self.error is not None:
            raise self.error
        return await self.inner.embed(texts)


def _texts() -> list[str]:
    texts = [f"deploy step {i} runs with uv on the build host" for i in range(30)]
    return texts + [f"the cache of job {i} is kept for a week" for i in range(30)]


def _shown(hits: object) -> list[tuple[str, float, tuple[str, ...]]]:
    return [(h.entry_version_id, round(h.score, 9), h.matched_by) for h in hits]  # type: ignore[attr-defined]


async def test_a_hybrid_search_runs_its_fts_statement_while_the_query_embeds(postgres_url: str) -> None:
    async with open_service(postgres_url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=t) for t in _texts()])
        assert rev is not None
        at_once = await svc.search(QUERY, memories=[rev], mode="hybrid", limit=10)
    slow = EmbedsAfterFts(postgres_url)
    slow.free = 1
    async with open_service(postgres_url, embedding=slow) as svc:
        # Warm: the head's Revision and its vector completeness read once (cached by head revision). The FTS
        # statement travels with the search's first read; a cold search's later reads are then the server's last.
        await svc.search(QUERY, memories=[rev], mode="hybrid", limit=10)
        late = await svc.search(QUERY, memories=[rev], mode="hybrid", limit=10)
        auto = await svc.search(QUERY, memories=[rev.memory_id], limit=10)
    assert slow.saw == [True, True]  # the old code: [False, False], the search began after the vector
    assert late.mode == auto.mode == "hybrid"
    assert len(at_once.hits) == 10 and any(m == ("fts", "vector") for _, _, m in _shown(at_once.hits))
    assert _shown(late.hits) == _shown(auto.hits) == _shown(at_once.hits)


async def test_a_failed_query_embedding_fails_a_hybrid_search_with_the_models_error(postgres_url: str) -> None:
    async with open_service(postgres_url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=t) for t in _texts()])
        assert rev is not None
    failing = EmbedsAfterFts(postgres_url, error=InvalidInput("the model failed"))
    failing.free = 1
    async with open_service(postgres_url, embedding=failing) as svc:
        await svc.search(QUERY, memories=[rev.memory_id], mode="hybrid", limit=10)  # warm, as in the test above
        for mode in ("hybrid", "auto"):  # ``auto`` on a complete vector projection needs the model too
            with pytest.raises(InvalidInput, match="the model failed"):
                await svc.search(QUERY, memories=[rev.memory_id], mode=mode, limit=10)
        assert failing.saw == [True, True]
        fts = await svc.search(QUERY, memories=[rev.memory_id], mode="fts", limit=10)  # the store still serves
    assert len(fts.hits) == 10


class StuckModel(EmbedsAfterFts):
    """A query embedding that hangs once the search is past its FTS statement, until the test ends (then fails)."""

    release: asyncio.Event | None = None

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        if self.free:
            self.free -= 1
            return await self.inner.embed(texts)
        self.saw.append(await asyncio.to_thread(self._wait))
        self.release = asyncio.Event()
        await self.release.wait()
        raise InvalidInput("released at the end of the test")


async def test_a_cancelled_hybrid_search_ends_its_read_transaction(postgres_url: str) -> None:
    """The engine's worker waits for the vector inside the search's read transaction: cancelling the search (a
    caller that gave up) stops that wait, so the transaction ends and its connection serves the next search."""
    async with open_service(postgres_url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=t) for t in _texts()])
        assert rev is not None
    stuck = StuckModel(postgres_url)
    stuck.free = 1
    async with open_service(postgres_url + "?pool_size=1", embedding=stuck) as svc:
        await svc.search(QUERY, memories=[rev.memory_id], mode="hybrid", limit=10)  # warm, as in the test above
        search = asyncio.ensure_future(svc.search(QUERY, memories=[rev.memory_id], mode="hybrid", limit=10))
        try:
            while stuck.release is None:
                await asyncio.sleep(0.01)
            assert stuck.saw == [True]
            search.cancel()
            with pytest.raises(asyncio.CancelledError):
                await search
            fts = await asyncio.wait_for(svc.search(QUERY, memories=[rev.memory_id], mode="fts", limit=10), 10)
            assert len(fts.hits) == 10  # the one pooled connection was given back
        finally:
            if stuck.release is not None:
                stuck.release.set()  # a worker still waiting (the old code's) fails instead of holding the close
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND state LIKE 'idle in transaction%'"
        ).fetchone()
    assert row == (0,)
