"""``LanceMemoryBackend``: the store core (``backends/sql``) over the LanceDB engine (``engine.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from ...domain.errors import BackendUnavailable, MemstoneError
from ...domain.model import VerifyReport
from ..sql.core import StoreCore
from .engine import LanceEngine
from .location import LanceLocation
from .log import LanceLog


class LanceMemoryBackend(StoreCore):
    """A store whose authority is a transaction log on LanceDB, local or on S3; many processes and machines may
    share it (docs/engines/lancedb.md)."""

    def __init__(self, location: LanceLocation, *, create: bool = True) -> None:
        self.location = location
        log = LanceLog(location.uri, location.storage_options, where=location.where)
        self.lance = LanceEngine(log, create=create, eager_feed=location.eager_feed, use_index=location.use_index)
        super().__init__(self.lance)

    async def open(self) -> LanceMemoryBackend:
        await super().open()
        return self

    async def maintain(self, task: Literal["verify", "rebuild"]) -> VerifyReport:
        report = await super().maintain(task)
        damage = await self._run(self._log_damage_sync)
        if damage:
            report = replace(report, authority_damage=(*report.authority_damage, *damage))
        return report

    async def storage_due(self, *, writes: int = 100, versions: int = 200) -> bool:
        """The due-time gate: whether ``maintain_storage`` has work (``writes`` transactions since the last
        checkpoint, or ``versions`` LanceDB versions of the log table since its last cleanup)."""

        def run() -> bool:
            log = self.lance.log
            if log.head().seq - log.checkpoint_seq() >= writes:
                return True
            return len(log._txns.list_versions()) >= versions

        return await self._run(run)

    async def maintain_storage(
        self, *, orphan_grace_s: float = 600.0, keep_versions_s: float = 3600.0
    ) -> dict[str, int]:
        """The due-time gate's work on LanceDB: sweep orphaned transactions, write a checkpoint of the replica (a
        cold open then replays only what came after it), compact fragments, drop old table versions, and feed the
        search tables (building the FTS index, and the vector index once enough vectors exist).

        Returns what it did and the log's size afterwards. Committed transactions are rows of the latest table
        version and are never touched; old versions are kept ``keep_versions_s`` for readers that opened one.
        """

        def run() -> dict[str, int]:
            try:
                swept = self.lance.log.sweep(grace_s=orphan_grace_s)
                written = self.lance.checkpoint()
                fed = self.lance.feed_search()
            except MemstoneError:
                raise
            except Exception as exc:  # a race with another process's maintenance: it commits nothing
                raise BackendUnavailable(
                    f"maintenance of {self.location.where} failed: {exc}", orig=exc, hint="retry later"
                ) from exc
            self.lance.log.optimize(keep_versions_s=keep_versions_s)
            return {
                "orphans_swept": swept,
                **fed,
                "checkpoint_seq": written.seq if written is not None else self.lance.log.checkpoint_seq(),
                **self.lance.log.stats(),
            }

        return await self._run(run)

    def _log_damage_sync(self) -> list[str]:
        _, damage = self.lance.log.chain_ids(self.lance.log.head())
        return damage


__all__ = ["LanceMemoryBackend"]
