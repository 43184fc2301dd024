"""What the core's components share: the engine, the row statements, the manifest reader and the vector state."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable

from ...domain.manifest import ManifestReader
from ...domain.model import EntryContent
from ...ports import EmbeddingProfile
from .engine import Engine
from .projection import ProjectionRows
from .rows import AuthorityRows


class StoreParts:
    """One store's engine and its shared state. Every cache here holds immutable rows or head-keyed facts."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.rows = AuthorityRows(engine)
        self.proj = ProjectionRows(engine)
        self.manifests = ManifestReader(self.rows.load_node, load_many=self.rows.load_nodes)
        self.vector_profile: EmbeddingProfile | None = None  # the profile writes and searches use now
        self.recorded_profile: EmbeddingProfile | None = None  # the store's, as of the last COMMIT seen
        self.applied_migrations: tuple[int, ...] = ()  # the schema migrations the last open applied
        self.complete_cache: dict[tuple[str, int], bool] = {}
        self.complete_generation = ""
        self.verified: dict[str, tuple[EntryContent, str]] = {}  # version id -> content verified, its hash
        # purged version id -> the hash its tombstone records; an engine that can purge sets it (issue 12)
        self.purged_hashes: Callable[[], dict[str, str]] = dict
        self.lease_holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self.migration_lease_s = 120.0
        self.vector_min_cosine = 0.2

    def bytes_match(self, version_id: str, content: EntryContent, expected_hash: str) -> bool:
        """Whether ``content`` hashes to ``expected_hash``.

        Remembers the content it verified per version id and compares field by field next time (a fraction of a
        canonical-JSON hash): a row changed since is unequal to what was verified, so it is re-hashed and fails.
        """
        known = self.verified.get(version_id)
        if known is not None and known[1] == expected_hash and known[0] == content:
            return True
        if content.content_hash != expected_hash:
            return False
        if len(self.verified) > 100_000:
            self.verified.clear()
        self.verified[version_id] = (content, expected_hash)
        return True


__all__ = ["StoreParts"]
