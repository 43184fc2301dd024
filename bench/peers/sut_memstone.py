"""memstone through its public API only: ``open_service``, ``remember``, ``search`` (runs in memstone's .venv).

One store file per workdir, one Memory in it holding every note (``svc.search(q, memories=[head])``). A single
write is ``remember(head, entries=[one])``; bulk is ``remember`` with 1,000 entries per call (one Revision per
call). An update revises the entry: ``remember(head, entries=[EntryInput(kind, text=new, entry=entry_id)])``.
Modes ``fts``, ``vector``, ``hybrid``, ``auto``; a mode this memstone cannot serve raises
``CapabilityNotSupportedError``, reported as "not run".

With ``compare.py --embed-cache`` the store is opened with ``open_service(url, embedding=CachedBulkModel(...))``
(``cached_model.py``): the real ``minilm-l6-int8`` model, except that a bulk load takes its vectors from the
embedding cache (``embcache.py``). Without the flag, ``open_service(url)`` picks the same model itself.
"""

from __future__ import annotations

import asyncio
import os
import unicodedata
from importlib.metadata import version

from base import Note, NotRun, SystemUnderTest

BULK_BATCH = 1000


class System(SystemUnderTest):
    name = "memstone"

    def __init__(self) -> None:
        import memstone

        self.ms = memstone
        self.loop = asyncio.new_event_loop()
        self._cm = None
        self.svc = None
        self.head = None
        self.key_of: dict[str, str] = {}  # entry id -> note key
        self.entry_of: dict[str, str] = {}  # note key -> entry id
        self.model = None
        from embcache import cache_dir

        if cache_dir() is not None:
            from cached_model import CachedBulkModel
            from embcache import BulkStage

            from memstone.embedding import load_model

            self.real_model = load_model("minilm-l6-int8")  # lazy: the model loads on its first embed
            self.bulk_stage = BulkStage(self._embed_real)
            self.model = CachedBulkModel(self.real_model, self.bulk_stage)

    def modes(self) -> list[str]:
        return ["fts", "vector", "hybrid", "auto"]

    def info(self) -> dict[str, object]:
        return {"memstone": self.ms.__version__, "apsw": version("apsw"), "sqlite-vec": version("sqlite-vec")}

    def _run(self, coro):
        return self.loop.run_until_complete(coro)

    def setup(self, workdir: str, fresh: bool = True) -> None:
        self.workdir = workdir
        os.makedirs(workdir, exist_ok=True)
        path = os.path.join(workdir, "memstone.db")
        if self.model is None:
            self._cm = self.ms.open_service(f"sqlite:///{path}")
        else:
            self._cm = self.ms.open_service(f"sqlite:///{path}", embedding=self.model)
        self.svc = self._run(self._cm.__aenter__())
        self.head = None
        if not fresh:  # cold start: reopen and answer; hits are reported as entry ids
            heads = self._run(self.svc.memories())
            if heads:
                self.head = heads[0]

    def _remember(self, notes: list[Note]) -> None:
        # The note key is not stored (no title): every system indexes exactly the same text.
        entries = [self.ms.EntryInput(kind="fact", text=n.text) for n in notes]
        rev = self._run(self.svc.remember(self.head, entries=entries))
        if rev is None or rev is self.head:
            return
        self.head = rev
        # The Revision's changes name the added entries in input order (an exact duplicate of a live entry is
        # folded into it by memstone; the duplicate's key is then not mapped).
        added = [c.entry_id for c in rev.changes if c.op == "add"]
        seen: set[str] = set()
        unique = [n for n in notes if not (n.text in seen or seen.add(n.text))]  # first note per distinct text
        if len(added) == len(unique):
            for n, eid in zip(unique, added, strict=True):
                self.key_of[eid] = n.key
                self.entry_of[n.key] = eid

    def write(self, notes: list[Note]) -> None:
        for n in notes:
            self._remember([n])

    def _embed_real(self, texts: list[str]):
        """memstone's own vectors of ``texts`` (float32), to fill the embedding cache."""
        import numpy as np

        res = self._run(self.real_model.embed(tuple(texts)))
        return np.asarray(res.vectors, dtype=np.float32)

    def embed_prefetch(self, notes: list[Note]) -> dict[str, object]:
        # The ONNX session is resident during an uncached bulk load: keep it so with the cache (peak RSS).
        self.real_model.load()
        return super().embed_prefetch(notes)

    def bulk_texts(self, notes: list[Note]) -> list[str]:
        # What memstone embeds for a note: the windows of its stored text (memstone's normalize_text: NFC, strip).
        out: list[str] = []
        for n in notes:
            text = unicodedata.normalize("NFC", n.text).strip()
            out.extend(self.real_model.windows(text) or (text,))
        return out

    def write_bulk(self, notes: list[Note]) -> None:
        for i in range(0, len(notes), BULK_BATCH):
            self._remember(notes[i : i + BULK_BATCH])

    def update(self, key: str, new_text: str) -> None:
        entry = self.entry_of[key]
        rev = self._run(
            self.svc.remember(self.head, entries=[self.ms.EntryInput(kind="fact", text=new_text, entry=entry)])
        )
        if rev is not None:
            self.head = rev

    def search(self, query: str, k: int, mode: str) -> list[tuple[str, str]]:
        if self.head is None:
            return []
        try:
            res = self._run(self.svc.search(query, memories=[self.head], limit=k, mode=mode))
        except self.ms.CapabilityNotSupportedError as exc:
            raise NotRun(f"{mode} search not available in this memstone ({exc})") from exc
        return [(self.key_of.get(h.entry_id, h.entry_id), h.text) for h in res.hits]

    def close(self) -> None:
        if self._cm is not None:
            self._run(self._cm.__aexit__(None, None, None))
            self._cm = None
