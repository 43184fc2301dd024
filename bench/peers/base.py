"""The system-under-test interface shared by every adapter (stdlib only: it is imported inside peer venvs too).

An adapter is a module ``sut_<name>.py`` in this folder with a class ``System(SystemUnderTest)``. It runs inside
its own process (``worker.py``), started with the Python of the system's own virtualenv, so the system's
dependencies never mix with memstone's. The harness (``client.py``) speaks JSON lines to it.

Contract (every call in the order a user would make them):

- ``setup(workdir, fresh=True)``: open (``fresh``: create) the store under ``workdir``.
- ``write(notes)``: store notes *one at a time*, each as its own write; returns per-note latencies.
- ``write_bulk(notes)`` then ``finish_bulk()``: store many notes the fastest way the system documents (batch
  API, or files + its indexer); index builds a user runs after a load belong to ``finish_bulk``.
- ``update(key, new_text)``: replace the statement stored under ``key`` the way a user of the system would.
- ``search(query, k, mode)``: ranked (note key, text) pairs, best first; ``modes()`` names the system's modes.
- ``size_on_disk()``: bytes under ``workdir`` (after the system flushed what it buffers).
- ``close()``.
- ``embed_prefetch(notes)`` (only with ``compare.py --embed-cache``): untimed, before a ``write_bulk`` of the
  same notes; fills the embedding cache and stages the vectors that ``write_bulk`` then takes
  (``embcache.py``). A system that embeds sets ``bulk_stage``; the worker opens the stage around
  ``write_bulk`` only, so no other call can see it.

Costs (wall time, peak RSS) are measured by the worker around each call (see ``worker.py``).
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Note:
    key: str
    text: str


class NotRun(Exception):
    """The system (or one of its modes) cannot run here; the message is the reason shown in the table."""


class SystemUnderTest:
    name = "base"
    #: True when the system keeps process-global state (config read at import, caches): the harness then
    #: starts a fresh worker process for every store instead of calling setup() again in the same one.
    one_store_per_process = False

    def modes(self) -> list[str]:
        raise NotImplementedError

    def info(self) -> dict[str, object]:
        """Versions and configuration, recorded in the result file."""
        return {}

    def setup(self, workdir: str, fresh: bool = True) -> None:
        raise NotImplementedError

    def write(self, notes: list[Note]) -> None:
        """Store each note as a separate write (the worker times each call)."""
        raise NotImplementedError

    def write_bulk(self, notes: list[Note]) -> None:
        """Part of a bulk load (the harness sends it in chunks); ``finish_bulk`` ends the load."""
        raise NotImplementedError

    def finish_bulk(self) -> None:
        """End of a bulk load: build the indexes a user builds after loading (timed as part of the load)."""

    def update(self, key: str, new_text: str) -> None:
        raise NotImplementedError

    def search(self, query: str, k: int, mode: str) -> list[tuple[str, str]]:
        """Ranked ``(note key, stored text)`` pairs, best first."""
        raise NotImplementedError

    def prepare_search(self) -> dict[str, float]:
        """Maintenance a user runs after writing and before reading (index merge, optimize); timed apart."""
        return {}

    def size_on_disk(self) -> int:
        return dir_bytes(self.workdir)

    def close(self) -> None:
        pass

    workdir: str = ""
    #: ``embcache.BulkStage`` of a system that embeds, when the worker runs with the embedding cache on
    bulk_stage = None

    def bulk_texts(self, notes: list[Note]) -> list[str]:
        """The texts the system's bulk path hands to its embedding model for ``notes``."""
        return [n.text for n in notes]

    def embed_prefetch(self, notes: list[Note]) -> dict[str, object]:
        if self.bulk_stage is None:
            return {"not_applicable": "this system takes no embedding from the harness"}
        return self.bulk_stage.prefetch(self.bulk_texts(notes))


def dir_bytes(path: str) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, f)).st_size
    return total


_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """Plain word tokens (lowercase), for systems where the harness must build a keyword query itself."""
    return [w.lower() for w in _WORD.findall(text)]
