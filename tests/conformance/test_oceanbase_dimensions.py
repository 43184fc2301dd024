"""OceanBase refuses an embedding profile its HNSW index cannot take (more than 4,096 dimensions) with a clear
error before anything changes, at open and at ``reembed`` (before, a bare ValueError came from the DDL builder,
and a reembed embedded the whole store before the swap failed)."""

from __future__ import annotations

import pytest

from memstone import EntryInput, open_service
from memstone.domain.errors import CapabilityNotSupportedError
from memstone.embedding.hashing import HashingEmbedder


async def test_more_than_4096_dimensions_is_refused_at_open_and_at_reembed(oceanbase_url: str) -> None:
    with pytest.raises(CapabilityNotSupportedError, match="at most 4096 dimensions"):
        async with open_service(oceanbase_url, embedding=HashingEmbedder(dimension=4097)):
            pass
    async with open_service(oceanbase_url, embedding=None) as svc:
        assert svc.backend.state.embedding_profile is None  # nothing recorded
    small = HashingEmbedder(dimension=32)
    async with open_service(oceanbase_url, embedding=small) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text="Backups run nightly.")])
        assert rev is not None
        with pytest.raises(CapabilityNotSupportedError, match="at most 4096 dimensions"):
            await svc.reembed(HashingEmbedder(dimension=4097))
        assert svc.backend.state.embedding_profile == small.profile
        found = await svc.search("Backups run nightly.", memories=[rev], mode="vector", limit=1)
        assert [h.text for h in found.hits] == ["Backups run nightly."]
