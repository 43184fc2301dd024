"""PostgreSQL stores a profile of 2,001–4,000 dimensions as pgvector ``halfvec`` with an HNSW index (issue 13,
item 6: pgvector's HNSW caps ``vector`` at 2,000 dimensions and ``halfvec`` at 4,000), and refuses a larger one
with a clear error before anything changes, at open and at ``reembed``. Before, a 2,001-d profile failed with a
bare ValueError from the DDL builder."""

from __future__ import annotations

import psycopg
import pytest

from memstone import EntryInput, open_service
from memstone.domain.errors import CapabilityNotSupportedError
from memstone.embedding.hashing import HashingEmbedder

TEXTS = ("Backups run nightly at two.", "The canary gets ten percent of traffic.", "Deploys go out with uv.")


def _column(url: str) -> tuple[str, str] | None:
    """The embedding column's type and the HNSW index's definition, or None without a vector table."""
    with psycopg.connect(url) as conn:
        col = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = to_regclass('memory_entry_vectors') AND attname = 'embedding'"
        ).fetchone()
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'idx_memory_entry_vectors_hnsw'"
        ).fetchone()
    return None if col is None or index is None else (str(col[0]), str(index[0]))


async def _finds_each(url: str, model: HashingEmbedder) -> None:
    async with open_service(url, embedding=model) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=t) for t in TEXTS])
        assert rev is not None
        for text in TEXTS:
            for exact in (False, True):
                found = await svc.search(text, memories=[rev], mode="vector", limit=1, exact=exact)
                assert [h.text for h in found.hits] == [text], (text, exact)
        assert (await svc.verify()).ok


async def test_a_3000_dimension_profile_is_stored_as_halfvec_with_hnsw_and_searches(postgres_url: str) -> None:
    await _finds_each(postgres_url, HashingEmbedder(dimension=3000))
    found = _column(postgres_url)
    assert found is not None
    column, index = found
    assert column == "halfvec(3000)"
    assert "USING hnsw" in index and "halfvec_l2_ops" in index


async def test_up_to_2000_dimensions_stay_float32_vector(postgres_url: str) -> None:
    await _finds_each(postgres_url, HashingEmbedder(dimension=2000))
    found = _column(postgres_url)
    assert found is not None and found[0] == "vector(2000)" and "vector_l2_ops" in found[1]


async def test_more_than_4000_dimensions_is_refused_and_records_nothing(postgres_url: str) -> None:
    with pytest.raises(CapabilityNotSupportedError, match="at most 2000 dimensions as vector and 4000 as halfvec"):
        async with open_service(postgres_url, embedding=HashingEmbedder(dimension=4001)):
            pass
    assert _column(postgres_url) is None
    async with open_service(postgres_url, embedding=None) as svc:
        assert svc.backend.state.embedding_profile is None


async def test_reembed_moves_to_halfvec_and_refuses_beyond_it_before_embedding(postgres_url: str) -> None:
    async with open_service(postgres_url, embedding=HashingEmbedder(dimension=32)) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=t) for t in TEXTS])
        assert rev is not None
        with pytest.raises(CapabilityNotSupportedError, match="4000 as halfvec"):
            await svc.reembed(HashingEmbedder(dimension=4001))
        assert svc.backend.state.embedding_profile == HashingEmbedder(dimension=32).profile  # nothing changed
        assert await svc.reembed(HashingEmbedder(dimension=2500)) == len(TEXTS)
        found = await svc.search(TEXTS[1], memories=[rev], mode="vector", limit=1)
        assert [h.text for h in found.hits] == [TEXTS[1]]
    found_col = _column(postgres_url)
    assert found_col is not None and found_col[0] == "halfvec(2500)"
