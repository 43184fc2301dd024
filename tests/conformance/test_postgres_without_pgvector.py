"""A PostgreSQL store whose database has no pgvector: its owner is not a superuser, so ``CREATE EXTENSION vector``
(not a trusted extension) is refused and the store opens without vectors. On the session's real server: full-text
search works, the capabilities say there is no vector search, and an explicit vector search is refused with
CapabilityNotSupportedError that says why, never an empty answer. A new store opened with the default model
takes none (it failed to open before); an explicit model is refused by name, and the store stays usable."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from psycopg import sql

from memstone import CapabilityNotSupportedError, EntryInput, open_service
from memstone.service.facade import UNSET

TEXTS = ["We deploy with uv on the build host.", "The cache of each job is kept for a week."]


@pytest.fixture
def plain_owner_url(postgres_server_url: str) -> Iterator[str]:
    """A fresh database owned by a new role that is not a superuser (the usual hosted-PostgreSQL account)."""
    name = "memstone_plain_" + secrets.token_hex(6)
    role, database = sql.Identifier(name), sql.Identifier(name)
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE").format(role))
        conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(database, role))
    try:
        parts = urlsplit(postgres_server_url)
        yield parts._replace(netloc=f"{name}@{parts.hostname}:{parts.port}", path=f"/{name}").geturl()
    finally:
        with psycopg.connect(postgres_server_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(database))
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(role))


def _has_pgvector(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is not None


@pytest.mark.parametrize("embedding", [None, UNSET], ids=["no-model", "default-model"])
async def test_a_store_without_pgvector_searches_by_text_and_refuses_vector_search(
    plain_owner_url: str, embedding: Any
) -> None:
    async with open_service(plain_owner_url, embedding=embedding) as svc:
        capabilities = svc.backend.capabilities
        assert capabilities.fts
        assert not (capabilities.vector or capabilities.hybrid or capabilities.vector_later)
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=t) for t in TEXTS])
        assert rev is not None
        fts = await svc.search("deploy build host", memories=[rev], mode="fts")
        assert [h.text for h in fts.hits] == [TEXTS[0]]
        auto = await svc.search("deploy build host", memories=[rev])  # the default mode falls back to text
        assert auto.mode == "fts" and [h.text for h in auto.hits] == [TEXTS[0]]
        for mode in ("vector", "hybrid"):
            with pytest.raises(CapabilityNotSupportedError) as refused:
                await svc.search("deploy build host", memories=[rev], mode=mode)  # type: ignore[arg-type]
            assert refused.value.code == "capability_not_supported"
            assert "vector" in str(refused.value) or "model" in str(refused.value), str(refused.value)
        assert (await svc.verify()).ok
    assert not _has_pgvector(plain_owner_url)
    async with open_service(plain_owner_url, embedding=embedding) as svc:  # reopened: the same, nothing lost
        assert not svc.backend.capabilities.vector
        again = await svc.search("cache job week", memories=[rev.memory_id], mode="fts")
        assert [h.text for h in again.hits] == [TEXTS[1]]


async def test_an_explicit_model_on_a_store_without_pgvector_is_refused_and_the_store_still_opens(
    plain_owner_url: str,
) -> None:
    with pytest.raises(CapabilityNotSupportedError, match="no vector projection") as refused:
        async with open_service(plain_owner_url, embedding="hashing-64"):
            pass
    assert refused.value.capability == "vector"
    assert "--embedding none" in (refused.value.hint or "") and "CREATE EXTENSION vector" in (refused.value.hint or "")
    async with open_service(plain_owner_url) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=TEXTS[0])])
        assert rev is not None and svc.backend.state.embedding_profile is None
        assert [h.text for h in (await svc.search("deploy", memories=[rev])).hits] == [TEXTS[0]]
