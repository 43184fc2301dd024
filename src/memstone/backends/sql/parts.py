"""What the core's components share: the engine, the row statements, the manifest reader and the vector state."""

from __future__ import annotations

import os
import socket
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import suppress

from ...domain.errors import LiveDuplicateError
from ...domain.manifest import ManifestReader
from ...domain.model import EntryContent, EntryVersion
from ...ports import EmbeddingProfile, LiveVersion
from .engine import Engine
from .projection import ProjectionRows
from .rows import AuthorityRows, content_from_row

# How many verified version rows a process keeps (least recently served or written dropped first). Each costs its
# raw columns and its content: about 0.5 KB beside its text (tracemalloc, 10k bench/corpus.py notes written in one
# process: 712 B a row freed with 195 B texts; docs/benchmarks.md, "The short-query FTS CPU of issue 11"), so at
# most ~10 MB plus the texts.
VERIFIED_ROWS = 20_000

Verified = tuple[tuple[object, ...], str, EntryContent]


class StoreParts:
    """One store's engine and its shared state. Every cache here holds immutable rows or head-keyed facts."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.rows = AuthorityRows(engine)
        self.proj = ProjectionRows(engine)
        self.manifests = ManifestReader(self.rows.load_node, load_many=self.rows.load_nodes)
        self.vector_profile: EmbeddingProfile | None = None  # the profile writes and searches use now
        self.recorded_profile: EmbeddingProfile | None = None  # the store's, as of the last COMMIT seen
        self.org_profiles: dict[str, EmbeddingProfile] = {}  # the organizations' own, as of the last read seen
        self.applied_migrations: tuple[int, ...] = ()  # the schema migrations the last open applied
        self.complete_cache: dict[tuple[str, int], bool] = {}
        self.complete_generation = ""
        # version id -> (the stored content columns as read or written, their hash, the content they hold)
        self.verified: OrderedDict[str, Verified] = OrderedDict()
        # purged version id -> the hash its tombstone records; an engine that can purge sets it (issue 12)
        self.purged_hashes: Callable[[], dict[str, str]] = dict
        self.lease_holder = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(6).hex()}"
        self.migration_lease_s = 120.0

    def verified_content(self, version_id: str, columns: tuple[object, ...], expected_hash: str) -> EntryContent | None:
        """The content stored in ``columns`` (``rows.content_from_row``'s order) when it hashes to
        ``expected_hash``; None when it does not (a tampered or damaged row).

        Remembers the columns it verified per version id: when the same version is read again with equal columns
        (a comparison of the raw values, a fraction of decoding and a canonical-JSON hash) the content verified
        then is returned; a row changed since is unequal, so it is decoded and hashed again, and fails.
        """
        known = self.verified.get(version_id)
        if known is not None and known[1] == expected_hash and known[0] == columns:
            with suppress(KeyError):  # a server engine's other thread may have dropped it since
                self.verified.move_to_end(version_id)
            return known[2]
        content = content_from_row(columns)
        if content.content_hash != expected_hash:
            return None
        self._keep(version_id, (columns, expected_hash, content))
        return content

    def remember_written(self, versions: Sequence[EntryVersion], rows: Sequence[tuple[object, ...]]) -> None:
        """After a write's COMMIT: its versions (hash-checked by ``apply_plan``) with the content columns it bound
        (``rows.insert_versions``' rows), so a search of what this process wrote compares columns and decodes
        nothing. The comparison with the row as read stays: a row changed since the write is decoded and fails."""
        for v, row in zip(versions, rows, strict=True):
            self._keep(v.entry_version_id, (tuple(row[5:15]), v.entry_content_hash, v.content))

    def live(self, versions: Sequence[EntryVersion], root: str) -> list[LiveVersion]:
        """Those of ``versions`` that are current in the manifest ``root``, with their state there."""
        hits = [(v, self.manifests.lookup(root, v.entry_id)) for v in versions]
        return [LiveVersion(v, m.state) for v, m in hits if m and m.entry_version_id == v.entry_version_id]

    def refuse_live(self, versions: Sequence[EntryVersion], root: str) -> None:
        """``WritePlan.unless_live``: LiveDuplicateError when one of ``versions`` is current and active at ``root``."""
        if any(f.state == "active" for f in self.live(versions, root)):
            raise LiveDuplicateError

    def _keep(self, version_id: str, verified: Verified) -> None:
        kept = self.verified
        kept[version_id] = verified
        if len(kept) > VERIFIED_ROWS:
            with suppress(KeyError):
                kept.popitem(last=False)


__all__ = ["StoreParts"]
