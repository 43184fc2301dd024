"""Retrieval benchmark (issues 3, 15): quality per search mode and family, speed at 1k/10k/100k.

    .venv/bin/python bench/bench_retrieval.py [--quick] [--parts quality,families,speed,throughput]
        [--models minilm-l6-int8,use-multilingual-v3] [--sizes 1000,10000,100000] [--runs 3] [--json out.json]

Everything goes through the public service (``open_service``, ``remember``, ``search``); tables are printed to
stdout as Markdown, progress goes to stderr. Embeddings are cached by (profile, text) in
``bench/.cache/vectors-<profile>.sqlite`` and the built stores in ``bench/.cache/*.db`` (git-ignored), so only
the first run pays for embedding (~1 h on 2 shared cores for MiniLM); a rerun with the cache takes minutes.
The models are deterministic (bit-identical vectors alone or in a batch), so cached vectors are the vectors a
fresh ``remember`` would compute.

Quality sets
------------
(a) MemoryCode (``/work/shared/data/memorycode/``, read in place, never copied). Framing: *retrieval of the sessions
    that state a convention*. One Memory per dialogue (the long dialogues 211-360 by default: 20-100 sessions each;
    the short ones have <= 15 sessions, which makes recall@10 trivial), one note per session (the whole session
    text, kind ``note``; long sessions get several vectors, one per model window, scored by max-similarity; the 9
    sessions over memstone's 8 KiB entry limit are split at turn boundaries into parts, and a hit on any part counts
    as its session). One query per (dialogue, coding instruction) pair: the instruction's text from ``topics.json``
    with the words that change between its versions removed (``always start function argument names with 'e_'`` /
    ``'f_'`` ... becomes ``always start function argument names with``), i.e. the agent asks what the convention is,
    not whether a value it already knows holds. Gold = every session of that dialogue whose ``instructions`` field
    lists that instruction id, i.e. whose ``type`` is ``instruction-add`` or ``instruction-update`` for it (1-8
    sessions). Other sessions (fillers, filler instructions such as "use Vim", other coding conventions) are the
    distractors. A secondary family, ``task``, asks with the instruction's ``eval_query`` (what the mentee is then
    asked to write, e.g. "function that merges two sorted lists") with the same gold; it is reported for information
    only, because a task names no convention (every function convention applies to it) and it is not used for
    calibration.
(b) The paraphrase set ``bench/data/paraphrase.jsonl`` (hand-written notes and queries that share few words
    with their gold note; one Memory holding every note), or ``bench/data/paraphrase_retrieval.jsonl``.
    ``paraphrase+2k`` runs the same queries and gold on a Memory that also holds 2,000 MemoryCode turns
    (``--distractors``): in a 64-note Memory FTS seldom fills the top 10, in a real Memory it always does.

Metrics per query (limit=10): recall@5 and recall@10 = |gold in top k| / |gold|, MRR@10 = 1 / rank of the first
gold hit (0 if none in the top 10), averaged over queries. ``auto`` is searched as ``auto`` and the mode it
used is reported.

Speed
-----
One Memory per size (1k, 10k, 100k entries; its own store file), loaded with ``remember`` in batches of 1000.
Texts: MemoryCode dialogue turns (one note per turn, dialogue order, exact duplicates dropped), topped up with
``bench/corpus.py`` notes if needed. Queries: the MemoryCode instruction, eval-query and filler topics plus the
paraphrase queries. Per mode, p50/p95 of ``search(limit=10)`` with the real model (the query is embedded in
every vector/hybrid search), median over ``--runs`` runs with the min-max of the per-run p50. "embed" is the
p50 of embedding one query alone, "index" the vector search p50 with the query vector served from the cache.
Fast-path recall@10 vs exact: |fast top-10 and exact top-10| / |exact top-10| per query, with the admission
threshold disabled so both lists are full.

Families (issue 15)
-------------------
``--parts families`` (``bench/families.py``): every family (MemoryCode convention and task, paraphrase,
paraphrase+2k, the conversational set ``bench/data/conversation.jsonl`` built by
``bench/build_conversation_set.py``, the Chinese/English set ``bench/data/multilingual.jsonl``) split into a
dev and a held-out half (by dialogue, or by gold note for the one-Memory sets); the fusion calibration is
fitted on the dev halves only and every mode is reported on both halves, beside a textbook BM25 over the same
entries and the RFC's RRF.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import apsw  # noqa: E402
import engines  # noqa: E402
from corpus import Corpus  # noqa: E402

import memstone  # noqa: E402
from memstone import EntryInput  # noqa: E402
from memstone.embedding import load_model  # noqa: E402
from memstone.indexing import CALIBRATIONS, Calibration  # noqa: E402
from memstone.ports import (  # noqa: E402
    EmbeddingModel,
    EmbeddingProfile,
    EmbeddingResult,
    InferenceUsage,
)

MEMORYCODE = Path(os.environ.get("MEMORYCODE_DIR", "/work/shared/data/memorycode"))
CACHE = HERE / ".cache"
LIMIT = 10
BUILD_VERSION = "1"  # bump to invalidate cached stores when the framing changes
# The SQLite speed stores' own key: "2" since their FTS index is kept in one segment by the write that adds to it
# (backends/sqlite/fts.py, issue 15); the stores of "1" stay in the cache for runs of older code.
SQLITE_SPEED_BUILD = "2"


def calibration_fields(cal: Calibration) -> dict[str, Any]:
    """A calibration's numbers, for the printed tables and the JSON results."""
    return {f.name: getattr(cal, f.name) for f in fields(cal) if f.name != "fitted"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f}/{b:.2f}/{c:.2f}"


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# ---------------------------------------------------------------------------------------------- vector cache
class VectorCache:
    """(profile, text) -> float32 vector, in one SQLite file per profile; written as it fills (resumable)."""

    def __init__(self, profile: EmbeddingProfile) -> None:
        CACHE.mkdir(parents=True, exist_ok=True)
        self.path = CACHE / f"vectors-{profile.profile_id}.sqlite"
        self.conn = apsw.Connection(str(self.path))
        self.conn.set_busy_timeout(120_000)  # several bench processes may fill one cache
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("CREATE TABLE IF NOT EXISTS vec (key BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
        self.salt = json.dumps(profile.canonical(), sort_keys=True).encode()
        self.dim = profile.dimension

    def key(self, text: str) -> bytes:
        return hashlib.sha256(self.salt + b"\0" + text.encode("utf-8")).digest()

    def get(self, texts: Sequence[str]) -> dict[str, tuple[float, ...]]:
        import numpy as np

        out: dict[str, tuple[float, ...]] = {}
        keyed = {self.key(t): t for t in texts}
        items = list(keyed.items())
        for i in range(0, len(items), 500):
            chunk = items[i : i + 500]
            rows = self.conn.execute(
                f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(chunk))})", [k for k, _ in chunk]
            ).fetchall()
            for k, v in rows:
                out[keyed[k]] = tuple(float(x) for x in np.frombuffer(v, dtype="<f4"))
        return out

    def put(self, pairs: Sequence[tuple[str, tuple[float, ...]]]) -> None:
        import numpy as np

        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO vec (key, v) VALUES (?, ?)",
                [(self.key(t), np.asarray(v, dtype="<f4").tobytes()) for t, v in pairs],
            )


class CachedModel:
    """An EmbeddingModel that serves vectors from the cache and embeds (and stores) only the misses."""

    def __init__(self, model: EmbeddingModel, cache: VectorCache) -> None:
        self.model = model
        self.cache = cache
        self._windows: dict[str, tuple[str, ...]] = {}
        self.misses = 0

    @property
    def profile(self) -> EmbeddingProfile:
        return self.model.profile

    def windows(self, text: str) -> tuple[str, ...]:
        w = self._windows.get(text)
        if w is None:
            w = self.model.windows(text)
            if len(self._windows) < 300_000:
                self._windows[text] = w
        return w

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        found = self.cache.get(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            self.misses += len(missing)
            step = 256
            t0 = time.perf_counter()
            for i in range(0, len(missing), step):
                chunk = tuple(missing[i : i + step])
                res = await self.model.embed(chunk)
                pairs = list(zip(chunk, res.vectors, strict=True))
                self.cache.put(pairs)
                found.update(pairs)
                if len(missing) > step:
                    done = min(i + step, len(missing))
                    rate = done / (time.perf_counter() - t0)
                    eta = (len(missing) - done) / rate
                    log(
                        f"  embed {self.profile.profile_id}: {done}/{len(missing)} "
                        f"({rate:.0f}/s, eta {eta / 60:.1f} min, load {load()})"
                    )
        return EmbeddingResult(vectors=tuple(found[t] for t in texts), usage=InferenceUsage(calls=1))

    async def prefetch(self, texts: Sequence[str], what: str) -> None:
        windows = list(dict.fromkeys(w for t in texts for w in (self.windows(t) or (t,))))
        have = self.cache.get(windows)
        todo = [w for w in windows if w not in have]
        log(f"{what}: {len(texts)} texts, {len(windows)} windows, {len(todo)} to embed with {self.profile.profile_id}")
        if todo:
            await self.embed(tuple(todo))


def real_model(name: str, threads: int) -> EmbeddingModel:
    if name.startswith("hashing-"):  # the deterministic test model: a quick smoke run of the harness
        return load_model(name)
    return load_model(name, threads=threads)


# ---------------------------------------------------------------------------------------------- data sets
@dataclass
class Query:
    qid: str
    group: str  # which Memory it searches (dialogue id, or "paraphrase")
    text: str
    gold: frozenset[str]
    family: str = "convention"


@dataclass
class QualitySet:
    name: str
    notes: dict[str, dict[str, str]]  # group -> note id -> text
    queries: list[Query]
    framing: str
    stats: dict[str, Any] = field(default_factory=dict)


def _topics() -> dict[str, Any]:
    return json.loads((MEMORYCODE / "topics.json").read_text())


def convention_query(variants: Sequence[str]) -> str:
    """The instruction text with the words that differ between its versions removed."""
    if len(variants) == 1:
        return variants[0]
    split = [v.split() for v in variants]
    common = set(split[0]).intersection(*map(set, split[1:]))
    return " ".join(w for w in split[0] if w in common)


MAX_ENTRY_BYTES = 8000  # memstone refuses entries over 8192 UTF-8 bytes


def split_entry(text: str) -> list[str]:
    """One entry, or (for the few sessions over memstone's 8 KiB entry limit) parts cut at turn boundaries."""
    if len(text.encode("utf-8")) <= MAX_ENTRY_BYTES:
        return [text]
    parts: list[str] = []
    current = ""
    for turn in text.split("\n\n"):
        candidate = f"{current}\n\n{turn}" if current else turn
        if current and len(candidate.encode("utf-8")) > MAX_ENTRY_BYTES:
            parts.append(current)
            current = turn
        else:
            current = candidate
    parts.append(current)
    assert all(len(p.encode("utf-8")) <= 8192 for p in parts)
    return parts


def unit(note_id: str) -> str:
    """The gold unit a note belongs to: a session's parts count as the session."""
    return note_id.split("-p", 1)[0]


def load_memorycode(dialogues: Sequence[int]) -> QualitySet:
    topics = {t["id"]: t for t in _topics()["instructions"]}
    notes: dict[str, dict[str, str]] = {}
    queries: list[Query] = []
    gold_sizes: list[int] = []
    for d in dialogues:
        data = json.loads((MEMORYCODE / "dataset" / f"dialogue_{d}.json").read_text())
        group = f"d{d}"
        notes[group] = {}
        gold: dict[int, set[str]] = {}
        for s, (session, instr) in enumerate(zip(data["sessions"], data["instructions"], strict=True)):
            nid = f"d{d}-s{s:03d}"
            for part, text in enumerate(split_entry(session["text"].strip())):
                notes[group][nid if part == 0 else f"{nid}-p{part}"] = text
            if instr != [-1]:
                codes = [t for t in session["type"] if t in ("instruction-add", "instruction-update")]
                assert len(codes) == len(instr), (d, s)
                for tid, _version in instr:
                    gold.setdefault(tid, set()).add(nid)
        for tid in sorted(gold):
            t = topics[tid]
            g = frozenset(gold[tid])
            gold_sizes.append(len(g))
            queries.append(Query(f"{group}-i{tid}", group, convention_query(t["text"]), g, "convention"))
            queries.append(Query(f"{group}-t{tid}", group, t["eval_query"], g, "task"))
    n_notes = sum(len({unit(n) for n in v}) for v in notes.values())
    n_parts = sum(len(v) for v in notes.values()) - n_notes
    stats = {
        "dialogues": len(dialogues),
        "notes": n_notes,
        "queries_per_family": len(gold_sizes),
        "mean_gold": statistics.mean(gold_sizes) if gold_sizes else 0,
        "mean_notes_per_memory": n_notes / max(1, len(notes)),
    }
    step = dialogues[1] - dialogues[0] if len(dialogues) > 1 else 1
    span = f"{min(dialogues)}-{max(dialogues)}" + (f" (every {step}th)" if step > 1 else "") if dialogues else "-"
    framing = (
        f"MemoryCode dialogues {span} ({len(dialogues)} dialogues, one Memory each, one note per session: "
        f"{n_notes} notes, {stats['mean_notes_per_memory']:.0f} per Memory; {n_parts} extra notes for the sessions "
        f"over the 8 KiB entry limit, split at turns, a hit on a part counts as its session); "
        f"{len(gold_sizes)} queries per family, "
        f"one per (dialogue, coding instruction); gold = the sessions that add or update that instruction "
        f"(mean {stats['mean_gold']:.2f}). convention = instruction text minus its changing value; "
        f"task = the instruction's eval_query (information only)"
    )
    return QualitySet("memorycode", notes, queries, framing, stats)


def paraphrase_path() -> Path:
    for name in ("paraphrase.jsonl", "paraphrase_retrieval.jsonl"):
        p = HERE / "data" / name
        if p.exists():
            return p
    raise SystemExit("no bench/data/paraphrase.jsonl or bench/data/paraphrase_retrieval.jsonl")


def load_paraphrase(distractors: int = 0) -> QualitySet:
    path = paraphrase_path()
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    notes = {r["id"]: r["text"] for r in rows if r["type"] == "note"}
    queries = [
        Query(r["id"], "paraphrase", r["text"], frozenset(r["gold"]), "paraphrase")
        for r in rows
        if r["type"] == "query"
    ]
    for q in queries:
        assert q.gold <= notes.keys(), q
    framing = f"{path.relative_to(HERE.parent)}: one Memory of {len(notes)} notes, {len(queries)} queries"
    if distractors:
        # The same queries and gold in a Memory that also holds MemoryCode turns (chat about code conventions,
        # company life): in a 64-note Memory FTS rarely fills the top 10, in a real one it does.
        for i, text in enumerate(speed_texts(distractors)):
            notes[f"x{i:05d}"] = text
        framing += f", plus {distractors} MemoryCode turns as distractors in the same Memory"
        name = f"paraphrase+{distractors // 1000}k"
    else:
        name = "paraphrase"
    return QualitySet(name, {"paraphrase": notes}, queries, framing, {"notes": len(notes)})


def fingerprint(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------------- stores
def _remove_db(path: Path) -> None:
    for p in path.parent.glob(path.name + "*"):
        p.unlink()


# ``--url postgresql://…`` / ``--start-postgres``: the quality stores are built on that server instead (a fresh
# database per set, dropped at exit; never cached), so the same queries measure that engine's ranking.
PG_SERVER: str | None = None
PG_DATABASES = contextlib.ExitStack()


async def quality_store(qset: QualitySet, cached: CachedModel) -> tuple[str, dict[str, str], dict[str, str]]:
    """The store for a quality set (cached for SQLite): (URL, group -> memory id, entry id -> note id)."""
    fp = fingerprint([BUILD_VERSION, qset.name, qset.notes])
    path = CACHE / f"quality-{qset.name}-{cached.profile.profile_id}-{fp}.db"
    side = path.with_suffix(".json")
    if PG_SERVER is None and side.exists() and path.exists():
        meta = json.loads(side.read_text())
        return f"sqlite:///{path}", meta["memories"], meta["entries"]
    if PG_SERVER is None:
        _remove_db(path)
        url = f"sqlite:///{path}"
    else:
        from memstone.testing.servers import postgres_database

        url = PG_DATABASES.enter_context(postgres_database(PG_SERVER))
    await cached.prefetch([t for g in qset.notes.values() for t in g.values()], f"{qset.name} notes")
    memories: dict[str, str] = {}
    entries: dict[str, str] = {}
    async with memstone.open_service(url, embedding=cached) as svc:
        for i, (group, notes) in enumerate(qset.notes.items()):
            rev = await svc.remember(
                None,
                entries=[
                    EntryInput(kind="note", text=text, slug=nid.lower().replace("_", "-"))
                    for nid, text in notes.items()
                ],
            )
            assert rev is not None
            memories[group] = rev.memory_id
            by_slug = {nid.lower().replace("_", "-"): nid for nid in notes}
            for v in await svc.entries(rev):
                assert v.content.slug is not None
                entries[v.entry_id] = by_slug[v.content.slug]
            if (i + 1) % 25 == 0:
                log(f"  {qset.name} store: {i + 1}/{len(qset.notes)} memories")
    if PG_SERVER is None:
        side.write_text(json.dumps({"memories": memories, "entries": entries}))
    return url, memories, entries


def speed_texts(n: int) -> list[str]:
    """n distinct short notes: MemoryCode turns in dialogue order, then bench/corpus.py notes."""
    out: dict[str, None] = {}
    for d in range(1, 361):
        data = json.loads((MEMORYCODE / "dataset" / f"dialogue_{d}.json").read_text())
        for session in data["sessions"]:
            for turn in session["text"].split("\n\n"):
                t = turn.strip()
                if len(t) >= 20:
                    out.setdefault(t, None)
                if len(out) >= n:
                    return list(out)
    corpus = Corpus(seed=3)
    while len(out) < n:
        out.setdefault(corpus.note(), None)
    return list(out)


async def speed_store(n: int, texts: list[str], cached: CachedModel) -> tuple[str, Path | None, str]:
    """(URL, SQLite file or None, Memory id) of the speed store of ``n`` entries, built once and kept.

    SQLite: a file in ``bench/.cache``, loaded with ``remember`` (1,000 entries each) and the cached vectors.
    ``--url``: a database on that server named by the same fingerprint, kept after the run (with a ``bench_built``
    row naming its Memory once the build finished), so a rerun against the same server reuses it. A server store
    is built as a bulk import: the entries first, with no model (``load_speed_entries``, marked ``bench_loaded``;
    it needs no vector, so it can run while the vector cache fills), then their vectors by ``backfill`` from the
    cache, with PostgreSQL's HNSW index built once after them (``engines.bulk_vectors``). A database whose build did
    not finish is dropped and built again, or, when its entries were loaded, resumes with the vectors.
    """
    fp = fingerprint([BUILD_VERSION, n, texts[:n]])
    path: Path | None = None
    t0 = time.perf_counter()
    if PG_SERVER is None:
        fp = fingerprint([BUILD_VERSION, SQLITE_SPEED_BUILD, n, texts[:n]])
        path = CACHE / f"speed-{cached.profile.profile_id}-{n}-{fp}.db"
        side = path.with_suffix(".json")
        if side.exists() and path.exists():
            return f"sqlite:///{path}", path, json.loads(side.read_text())["memory_id"]
        _remove_db(path)
        url = f"sqlite:///{path}"
        head = None
        async with memstone.open_service(url, embedding=cached) as svc:
            for i in range(0, n, 1000):
                head = await svc.remember(head, entries=[EntryInput(kind="note", text=t) for t in texts[i : i + 1000]])
                log(f"  speed store {n}: {min(i + 1000, n)}/{n} ({time.perf_counter() - t0:.0f} s, load {load()})")
        assert head is not None
        conn = apsw.Connection(str(path))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        side.write_text(json.dumps({"memory_id": head.memory_id, "n": n}))
        log(f"  speed store {n}: built in {time.perf_counter() - t0:.0f} s (load {load()})")
        return url, path, head.memory_id
    url, memory_id = await load_speed_entries(n, texts, cached.profile.profile_id)
    built = engines.built_memory(url)
    if built is not None:
        log(f"  speed store {n}: reusing database {url.rsplit('/', 1)[-1]}")
        return url, None, built
    async with memstone.open_service(url, embedding=cached) as svc:
        with engines.bulk_vectors(url, cached.profile.dimension):  # PostgreSQL: HNSW built once, after the load

            def progress(done: int, total: int) -> None:
                if done % 10_000 < 1000 or done == total:
                    log(f"  speed store {n}: vectors {done}/{total} ({time.perf_counter() - t0:.0f} s, load {load()})")

            await svc.backfill(batch=1000, progress=progress)
    engines.mark_built(url, memory_id)
    log(f"  speed store {n}: vectors and index in {time.perf_counter() - t0:.0f} s (load {load()})")
    return url, None, memory_id


async def load_speed_entries(n: int, texts: list[str], profile_id: str) -> tuple[str, str]:
    """(URL, Memory id) of the server speed store of ``n`` entries with its entries loaded (no vectors yet)."""
    assert PG_SERVER is not None
    fp = fingerprint([BUILD_VERSION, n, texts[:n]])
    name = f"bench_speed_{profile_id.replace('-', '_')}_{n}_{fp}"
    with engines.server_database(PG_SERVER, name) as (url, existed):
        loaded = engines.built_memory(url, "loaded") if existed else None
    if loaded is not None:
        return url, loaded
    if existed:
        engines.drop_database(PG_SERVER, name)
        with engines.server_database(PG_SERVER, name) as (url, _):
            pass
    head = None
    t0 = time.perf_counter()
    async with memstone.open_service(url, embedding=None) as svc:
        for i in range(0, n, 1000):
            head = await svc.remember(head, entries=[EntryInput(kind="note", text=t) for t in texts[i : i + 1000]])
            log(f"  speed store {n}: {min(i + 1000, n)}/{n} entries ({time.perf_counter() - t0:.0f} s, load {load()})")
    assert head is not None
    engines.mark_built(url, head.memory_id, "loaded")
    return url, head.memory_id


async def raw_speed(
    svc: Any, head: Any, url: str, path: Path | None, queries: Sequence[str], cached: CachedModel
) -> dict[str, dict[str, float]]:
    """memstone and the engine's own statements over the same rows (``bench/engines.py``), timed in pairs.

    For each query, memstone's search (the query vector from the cache: the index-only figure) and then the raw
    statement with the same vector, so both meet the same machine load; raw hybrid runs both statements.
    """
    raw = engines.RawEngine(url, path, head.memory_id, cached.profile.dimension)
    vectors = cached.cache.get(list(queries))
    svc.indexer.model = cached
    out: dict[str, dict[str, float]] = {}
    jobs: dict[str, Callable[[str], object]] = {
        "fts": lambda q: raw.fts(q, LIMIT),
        "vector": lambda q: raw.knn(vectors[q], LIMIT),
        "hybrid": lambda q: (raw.fts(q, LIMIT), raw.knn(vectors[q], LIMIT)),
    }
    for mode, job in jobs.items():
        ours, theirs = [], []
        for i, q in enumerate([*queries[:10], *queries]):
            t = time.perf_counter()
            await svc.search(q, memories=[head], limit=LIMIT, mode=mode)
            t1 = time.perf_counter()
            job(q)
            t2 = time.perf_counter()
            if i >= 10:
                ours.append((t1 - t) * 1000)
                theirs.append((t2 - t1) * 1000)
        out[f"paired-{mode}"] = {"p50": statistics.median(ours), "p95": pct(ours, 0.95)}
        out[f"raw-{mode}"] = {"p50": statistics.median(theirs), "p95": pct(theirs, 0.95)}
    raw.close()
    return out


# ---------------------------------------------------------------------------------------------- quality
@dataclass
class Scores:
    r5: float
    r10: float
    mrr: float
    n: int
    modes: str = ""
    empty: int = 0  # queries with no hit at all


def score(ranked: Sequence[Sequence[str]], queries: Sequence[Query]) -> Scores:
    r5 = r10 = mrr = 0.0
    empty = 0
    for ids, q in zip(ranked, queries, strict=True):
        r5 += len(q.gold.intersection(ids[:5])) / len(q.gold)
        r10 += len(q.gold.intersection(ids[:10])) / len(q.gold)
        empty += not ids
        for rank, nid in enumerate(ids[:10], start=1):
            if nid in q.gold:
                mrr += 1.0 / rank
                break
    n = max(1, len(queries))
    return Scores(r5 / n, r10 / n, mrr / n, len(queries), empty=empty)


async def run_queries(
    svc: Any,
    heads: dict[str, Any],
    entries: dict[str, str],
    queries: Sequence[Query],
    mode: str,
    context: bool | None = None,
) -> tuple[list[list[str]], set[str]]:
    """Each query through ``search(limit=10)``; ``context`` None leaves the service's default."""
    ranked: list[list[str]] = []
    used: set[str] = set()
    extra = {} if context is None else {"context": context}
    for q in queries:
        res = await svc.search(q.text, memories=[heads[q.group]], limit=LIMIT, mode=mode, **extra)
        used.add(res.mode)
        ranked.append(list(dict.fromkeys(unit(entries[h.entry_id]) for h in res.hits)))
    return ranked, used


def set_calibration(svc: Any, cal: Calibration) -> None:
    svc.indexer.calibration = cal


async def quality_part(qsets: list[QualitySet], profiles: list[str], threads: int) -> dict[str, Any]:
    """Quality per mode, with the calibration currently in CALIBRATIONS."""
    out: dict[str, Any] = {"quality": []}
    for name in profiles:
        real = real_model(name, threads)
        cached = CachedModel(real, VectorCache(real.profile))
        for qset in qsets:
            url, memories, entries = await quality_store(qset, cached)
            families = sorted({q.family for q in qset.queries}, key=lambda f: (f == "task", f))
            await cached.prefetch(list({q.text for q in qset.queries}), f"{qset.name} queries")
            async with memstone.open_service(url, embedding=cached) as svc:
                heads = {g: await svc.head(m) for g, m in memories.items()}
                for fam in families:
                    qs = [q for q in qset.queries if q.family == fam]
                    for mode in ("fts", "vector", "hybrid", "auto"):
                        t0 = time.perf_counter()
                        ranked, used = await run_queries(svc, heads, entries, qs, mode)
                        s = score(ranked, qs)
                        s.modes = ",".join(sorted(used))
                        out["quality"].append(
                            {"set": qset.name, "family": fam, "model": name, "mode": mode, **s.__dict__}
                        )
                        log(
                            f"  {name} {qset.name}/{fam} {mode}: R@10 {s.r10:.3f} MRR {s.mrr:.3f} "
                            f"({time.perf_counter() - t0:.0f} s, load {load()})"
                        )
    return out


# ---------------------------------------------------------------------------------------------- speed
def speed_queries(limit: int) -> list[str]:
    t = _topics()
    qs: list[str] = []
    qs += [convention_query(x["text"]) for x in t["instructions"]]
    qs += [x["eval_query"] for x in t["instructions"]]
    qs += [x["text"] for x in t["fillers"]]
    qs += [x["text"][0] for x in t["fillers_instruction"]]
    with contextlib.suppress(SystemExit):  # no paraphrase set: the MemoryCode queries alone
        qs += [q.text for q in load_paraphrase().queries]
    return list(dict.fromkeys(qs))[:limit]


async def timed_search(svc: Any, head: Any, queries: Sequence[str], mode: str, warm: int = 10) -> list[float]:
    for q in queries[:warm]:
        await svc.search(q, memories=[head], limit=LIMIT, mode=mode)
    lat = []
    for q in queries:
        t = time.perf_counter()
        await svc.search(q, memories=[head], limit=LIMIT, mode=mode)
        lat.append((time.perf_counter() - t) * 1000)
    return lat


async def speed_part(
    name: str, sizes: list[int], runs: int, n_queries: int, threads: int, rerank_depths: list[int]
) -> dict[str, Any]:
    real = real_model(name, threads)
    cached = CachedModel(real_model(name, threads), VectorCache(real.profile))
    texts = speed_texts(max(sizes))
    await cached.prefetch(texts, f"speed texts ({max(sizes)})")
    queries = speed_queries(n_queries)
    await cached.prefetch(queries, "speed queries")
    rows: list[dict[str, Any]] = []
    depth_rows: list[dict[str, Any]] = []
    for n in sizes:
        url, path, memory_id = await speed_store(n, texts, cached)
        async with memstone.open_service(url, embedding=real) as svc:
            head = await svc.head(memory_id)
            per: dict[str, list[tuple[float, float]]] = {}
            loads = []
            for run in range(runs):
                loads.append(os.getloadavg()[0])
                for mode in ("fts", "vector", "hybrid"):
                    svc.indexer.model = real
                    lat = await timed_search(svc, head, queries, mode)
                    per.setdefault(mode, []).append((statistics.median(lat), pct(lat, 0.95)))
                # the query embedding alone, and the index alone (query vector from the cache)
                lat = []
                for q in queries:
                    t = time.perf_counter()
                    await real.embed((q,))
                    lat.append((time.perf_counter() - t) * 1000)
                per.setdefault("embed", []).append((statistics.median(lat), pct(lat, 0.95)))
                svc.indexer.model = cached
                for mode, key in (("vector", "vector-index"), ("hybrid", "hybrid-index")):
                    lat = await timed_search(svc, head, queries, mode)
                    per.setdefault(key, []).append((statistics.median(lat), pct(lat, 0.95)))
                log(f"  speed {name} {n}: run {run + 1}/{runs} (load {load()})")
            # fast path vs exact, admission disabled so both top-10 lists are full
            svc.indexer.model = cached
            cal = svc.indexer.calibration
            svc.indexer.calibration = Calibration(vector_min_cosine=-1.0)
            exact_lists = []
            lat_exact = []
            for q in queries:
                t = time.perf_counter()
                res = await svc.search(q, memories=[head], limit=LIMIT, mode="vector", exact=True)
                lat_exact.append((time.perf_counter() - t) * 1000)
                exact_lists.append([h.entry_id for h in res.hits])
            per["vector-exact-index"] = [(statistics.median(lat_exact), pct(lat_exact, 0.95))]
            backend = svc.backend
            # rerank_depth exists only in the 1-bit prefilter design of the fast path; other designs run once.
            default_depth = getattr(backend, "rerank_depth", None)
            depths = [default_depth] if default_depth is None else [default_depth, *rerank_depths]
            for depth in dict.fromkeys(depths):
                if depth is not None:
                    backend.rerank_depth = depth
                recalls = []
                lat = []
                for q, ex in zip(queries, exact_lists, strict=True):
                    t = time.perf_counter()
                    res = await svc.search(q, memories=[head], limit=LIMIT, mode="vector")
                    lat.append((time.perf_counter() - t) * 1000)
                    fast = {h.entry_id for h in res.hits}
                    if ex:
                        recalls.append(len(fast.intersection(ex)) / len(ex))
                depth_rows.append(
                    {
                        "model": name,
                        "entries": n,
                        "rerank_depth": "n/a" if depth is None else depth,
                        "recall10": statistics.mean(recalls),
                        "min_recall10": min(recalls),
                        "index_p50": statistics.median(lat),
                    }
                )
            if default_depth is not None:
                backend.rerank_depth = default_depth
            svc.indexer.calibration = cal
            row: dict[str, Any] = {
                "model": name,
                "engine": engines.engine_of(url),
                "entries": n,
                "queries": len(queries),
                "load_1m": loads,
            }
            for key, vals in per.items():
                p50s = [v[0] for v in vals]
                row[key] = {
                    "p50": statistics.median(p50s),
                    "p95": statistics.median([v[1] for v in vals]),
                    "p50_min": min(p50s),
                    "p50_max": max(p50s),
                }
            row["fast_recall10"] = next(
                r["recall10"]
                for r in depth_rows
                if r["entries"] == n and r["rerank_depth"] == ("n/a" if default_depth is None else default_depth)
            )
            row.update(await raw_speed(svc, head, url, path, queries, cached))
            rows.append(row)
    return {"speed": rows, "rerank": depth_rows}


async def fts_speed_part(sizes: list[int], runs: int, n_queries: int) -> list[dict[str, Any]]:
    """``--speed-models none``: FTS search alone on the speed texts and queries, stores built without a model
    (nothing to embed, so 100k builds in minutes). Wall and thread-CPU p50 / p95 of ``search(mode="fts")``."""
    texts = speed_texts(max(sizes))
    queries = speed_queries(n_queries)
    rows = []
    for n in sizes:
        fp = fingerprint([BUILD_VERSION, SQLITE_SPEED_BUILD, n, texts[:n]])
        path = CACHE / f"speed-none-{n}-{fp}.db"
        side = path.with_suffix(".json")
        if not (side.exists() and path.exists()):
            _remove_db(path)
            head = None
            async with memstone.open_service(f"sqlite:///{path}", embedding=None) as svc:
                for i in range(0, n, 1000):
                    batch = [EntryInput(kind="note", text=t) for t in texts[i : i + 1000]]
                    head = await svc.remember(head, entries=batch)
                    log(f"  speed store {n} (no model): {min(i + 1000, n)}/{n}")
            assert head is not None
            side.write_text(json.dumps({"memory_id": head.memory_id, "n": n}))
        memory_id = json.loads(side.read_text())["memory_id"]
        wall: list[float] = []
        cpu: list[float] = []
        loads = []
        async with memstone.open_service(f"sqlite:///{path}", embedding=None) as svc:
            head = await svc.head(memory_id)
            for q in queries[:10]:
                await svc.search(q, memories=[head], limit=LIMIT, mode="fts")
            for _ in range(runs):
                loads.append(os.getloadavg()[0])
                for q in queries:
                    t, c = time.perf_counter(), time.thread_time()
                    await svc.search(q, memories=[head], limit=LIMIT, mode="fts")
                    cpu.append((time.thread_time() - c) * 1000)
                    wall.append((time.perf_counter() - t) * 1000)
        rows.append(
            {
                "entries": n,
                "queries": len(queries),
                "runs": runs,
                "wall_p50": statistics.median(wall),
                "wall_p95": pct(wall, 0.95),
                "cpu_p50": statistics.median(cpu),
                "cpu_p95": pct(cpu, 0.95),
                "load_1m": loads,
            }
        )
        log(f"  fts speed {n}: wall p50 {rows[-1]['wall_p50']:.2f} ms, cpu p50 {rows[-1]['cpu_p50']:.2f} ms")
    return rows


def print_fts_speed(rows: list[dict[str, Any]]) -> None:
    print("\n## FTS search speed, no model (limit=10; ms; thread CPU = the search's own work)\n")
    print(
        table(
            ["entries", "queries x runs", "wall p50 / p95", "cpu p50 / p95", "load 1m"],
            [
                [
                    r["entries"],
                    f"{r['queries']} x {r['runs']}",
                    f"{r['wall_p50']:.2f} / {r['wall_p95']:.2f}",
                    f"{r['cpu_p50']:.2f} / {r['cpu_p95']:.2f}",
                    "/".join(f"{x:.1f}" for x in r["load_1m"]),
                ]
                for r in rows
            ],
        )
    )


def prefilter_part(name: str, n: int, n_queries: int, sizes: Sequence[int]) -> list[dict[str, Any]]:
    """Where the fast path's time goes at ``n`` entries, and what a smaller prefilter would cost in recall.

    Read-only on the cached speed store. (1) sqlite-vec KNN time against k, on the 1-bit and the float table;
    (2) re-ranking P rowids through the vec0 table (what ``_vector_knn_sync`` does) against a plain
    rowid -> float32 table in a scratch file; (3) recall@10 of "1-bit top P, exact re-rank" against the exact
    top 10, computed in numpy over the same vectors (bit = x > 0, as vec_quantize_binary), window level.
    """
    import numpy as np
    import sqlite_vec

    profile = load_model(name).profile
    paths = sorted(CACHE.glob(f"speed-{profile.profile_id}-{n}-*.db"))
    if not paths:
        raise SystemExit(f"no cached speed store of {n} entries: run --parts speed first")
    path = paths[0]
    memory_id = json.loads(path.with_suffix(".json").read_text())["memory_id"]
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    rowids: list[int] = []
    blobs: list[bytes] = []
    for rid, blob in conn.execute(
        "SELECT rowid, embedding FROM memory_entry_search_vector WHERE memory_artifact_id = ?", (memory_id,)
    ):
        rowids.append(int(rid))
        blobs.append(bytes(blob))
    mat = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
    ids = np.asarray(rowids)
    bits = np.packbits(mat > 0, axis=1)
    cache = VectorCache(profile)
    queries = speed_queries(n_queries)
    qv = cache.get(queries)
    qmat = np.asarray([qv[q] for q in queries], dtype="<f4")
    out: list[dict[str, Any]] = []
    log(f"prefilter analysis: {len(ids)} windows, {len(queries)} queries, load {load()}")
    # (3) recall of 1-bit top P + exact re-rank, numpy
    popcount = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(1)
    exact_top = []
    ham_rank = []
    for q in qmat:
        d = 2.0 - 2.0 * (mat @ q)  # squared L2 of unit vectors
        exact_top.append(set(np.argsort(d, kind="stable")[:LIMIT].tolist()))
        qb = np.packbits(q > 0)
        h = popcount[np.bitwise_xor(bits, qb)].sum(1)
        ham_rank.append((np.argsort(h, kind="stable"), d))
    # (1) and (2): sqlite-vec timings
    blobs_q = [q.tobytes() for q in qmat[:30]]

    def timed(sql: str, args_of: Any) -> float:
        lat = []
        for qb in blobs_q:
            t = time.perf_counter()
            conn.execute(sql, args_of(qb)).fetchall()
            lat.append((time.perf_counter() - t) * 1000)
        return statistics.median(lat)

    scratch = CACHE / f"scratch-floats-{profile.profile_id}-{n}.db"
    _remove_db(scratch)
    sconn = apsw.Connection(str(scratch))
    sconn.enable_load_extension(True)
    sconn.load_extension(sqlite_vec.loadable_path())
    sconn.execute("CREATE TABLE fv (rowid INTEGER PRIMARY KEY, v BLOB NOT NULL)")
    with sconn:
        sconn.executemany("INSERT INTO fv VALUES (?, ?)", list(zip(rowids, blobs, strict=True)))
    for p in sizes:
        recalls = []
        for (order, d), ex in zip(ham_rank, exact_top, strict=True):
            cand = order[:p]
            top = cand[np.argsort(d[cand], kind="stable")[:LIMIT]]
            recalls.append(len(ex.intersection(top.tolist())) / LIMIT)
        bit_ms = timed(
            "SELECT rowid FROM memory_entry_search_vector_bits WHERE embedding MATCH vec_quantize_binary(?) "
            "AND k = ? AND memory_artifact_id = ?",
            lambda qb, p=p: (qb, p, memory_id),
        )
        float_ms = timed(
            "SELECT rowid FROM memory_entry_search_vector WHERE embedding MATCH ? AND k = ? AND memory_artifact_id = ?",
            lambda qb, p=p: (qb, p, memory_id),
        )
        some = [int(x) for x in ids[ham_rank[0][0][:p]]]
        marks = ",".join("?" * len(some))
        vec0_ms = timed(
            f"SELECT rowid, vec_distance_l2(embedding, ?) AS d FROM memory_entry_search_vector "
            f"WHERE rowid IN ({marks}) ORDER BY d LIMIT 120",
            lambda qb, some=some: (qb, *some),
        )
        lat = []
        for qb in blobs_q:
            t = time.perf_counter()
            sconn.execute(
                f"SELECT rowid, vec_distance_l2(v, ?) AS d FROM fv WHERE rowid IN ({marks}) ORDER BY d LIMIT 120",
                (qb, *some),
            ).fetchall()
            lat.append((time.perf_counter() - t) * 1000)
        row = {
            "model": name,
            "entries": n,
            "P": p,
            "recall10": statistics.mean(recalls),
            "bits_knn_ms": bit_ms,
            "float_knn_ms": float_ms,
            "rerank_vec0_ms": vec0_ms,
            "rerank_plain_ms": statistics.median(lat),
            "load_1m": os.getloadavg()[0],
        }
        out.append(row)
        log(f"  P={p}: {row}")
    t = time.perf_counter()
    for q in qmat[:30]:
        np.argpartition(2.0 - 2.0 * (mat @ q), LIMIT)[:LIMIT]
    numpy_ms = (time.perf_counter() - t) * 1000 / 30
    out.append({"model": name, "entries": n, "P": "numpy exact", "numpy_exact_ms": numpy_ms})
    sconn.close()
    conn.close()
    _remove_db(scratch)
    return out


def print_prefilter(rows: list[dict[str, Any]]) -> None:
    print("\n## Fast-path anatomy (sqlite-vec KNN cost vs k; re-rank cost; 1-bit top-P recall, numpy)\n")
    body = [
        [
            r["entries"],
            r["P"],
            f"{r['recall10']:.3f}",
            f"{r['bits_knn_ms']:.1f}",
            f"{r['float_knn_ms']:.1f}",
            f"{r['rerank_vec0_ms']:.1f}",
            f"{r['rerank_plain_ms']:.1f}",
            f"{r['load_1m']:.2f}",
        ]
        for r in rows
        if "recall10" in r
    ]
    print(
        table(
            [
                "entries",
                "P (k)",
                "1-bit top-P + exact re-rank R@10 vs exact",
                "1-bit KNN k=P ms",
                "float KNN k=P ms",
                "re-rank P rowids via vec0 ms",
                "re-rank P rowids via plain table ms",
                "load 1m",
            ],
            body,
        )
    )
    for r in rows:
        if "numpy_exact_ms" in r:
            print(f"\nnumpy exact top-10 over the whole float matrix in memory: {r['numpy_exact_ms']:.1f} ms/query")


async def throughput_part(names: list[str], rounds: int, n_texts: int) -> list[dict[str, Any]]:
    texts = speed_texts(n_texts)  # the real model has no cache: these are embedded from scratch
    sessions = []
    for d in range(1, 30):
        data = json.loads((MEMORYCODE / "dataset" / f"dialogue_{d}.json").read_text())
        sessions += [s["text"] for s in data["sessions"]]
    out = []
    for name in names:
        for threads in (1, 2):
            m = real_model(name, threads)
            windows = [w for s in sessions for w in m.windows(s) if len(w) > 600][: max(64, n_texts // 8)]
            await m.embed(tuple(texts[:32]))
            for what, batch in (("turns", texts), ("windows", windows)):
                rates = []
                for _ in range(rounds):
                    t = time.perf_counter()
                    await m.embed(tuple(batch))
                    rates.append(len(batch) / (time.perf_counter() - t))
                out.append(
                    {
                        "model": name,
                        "threads": threads,
                        "texts": what,
                        "n": len(batch),
                        "mean_chars": statistics.mean(len(b) for b in batch),
                        "median": statistics.median(rates),
                        "min": min(rates),
                        "max": max(rates),
                        "load_1m": os.getloadavg()[0],
                    }
                )
                log(f"  throughput {name} threads={threads} {what}: {statistics.median(rates):.0f}/s (load {load()})")
    return out


# ---------------------------------------------------------------------------------------------- output
def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE, check=False
        ).stdout.strip()
        diff = subprocess.run(
            ["git", "diff", "HEAD", "--", "src"], capture_output=True, cwd=HERE.parent, check=False
        ).stdout
        commit += f" + src diff {hashlib.sha256(diff).hexdigest()[:10]}" if diff else " (clean src)"
    except OSError:
        commit = "?"
    import sqlite_vec  # type: ignore[import-untyped]

    return (
        f"machine: {os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}, python "
        f"{sys.version.split()[0]}, SQLite {apsw.sqlite_lib_version()}, sqlite-vec {sqlite_vec.__version__}, "
        f"commit {commit}, memstone imported from {Path(memstone.__file__).parent}, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, load {load()}"
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def print_quality(results: list[dict[str, Any]], qsets: list[QualitySet]) -> None:
    print("\n## Quality (limit=10; R@k = share of gold in top k, MRR@10)\n")
    for q in qsets:
        print(f"- {q.name}: {q.framing}")
    print("- calibration used: " + "; ".join(f"{k}: {calibration_fields(v)}" for k, v in CALIBRATIONS.items()))
    print()
    rows = []
    for r in results:
        rows.append(
            [
                r["set"],
                r["family"],
                r["model"],
                r["mode"] + (f" ({r['modes']})" if r["mode"] == "auto" else ""),
                r["n"],
                f"{r['r5']:.3f}",
                f"{r['r10']:.3f}",
                f"{r['mrr']:.3f}",
                r["empty"],
            ]
        )
    print(table(["set", "queries", "model", "mode (used)", "n", "R@5", "R@10", "MRR", "no hit"], rows))


def fmt(d: dict[str, float]) -> str:
    return f"{d['p50']:.2f} / {d['p95']:.2f} ({d['p50_min']:.2f}-{d['p50_max']:.2f})"


def print_speed(speed: dict[str, Any], runs: int) -> None:
    print(f"\n## Search speed, one Memory (limit=10; ms p50 / p95, median of {runs} runs; (min-max of p50))\n")
    rows = []
    for r in speed["speed"]:
        rows.append(
            [
                r["engine"],
                r["model"],
                r["entries"],
                fmt(r["fts"]),
                fmt(r["vector"]),
                fmt(r["hybrid"]),
                fmt(r["embed"]),
                fmt(r["vector-index"]),
                fmt(r["hybrid-index"]),
                f"{r['vector-exact-index']['p50']:.2f}",
                f"{r['fast_recall10']:.3f}",
                "/".join(f"{x:.1f}" for x in r["load_1m"]),
            ]
        )
    print(
        table(
            [
                "engine",
                "model",
                "entries",
                "fts",
                "vector",
                "hybrid",
                "query embed",
                "vector index only",
                "hybrid index only",
                "exact vector index p50",
                "fast R@10 vs exact",
                "load 1m",
            ],
            rows,
        )
    )
    print(
        "\nmemstone beside the raw engine, timed in pairs (per query: memstone's search with the query vector from "
        "the cache, then the engine's own full-text / nearest-neighbour statement(s) on a bare connection over the "
        "same rows; raw hybrid = both statements), p50 / p95 ms, and memstone p50 / raw p50:\n"
    )
    rows = []
    for r in speed["speed"]:
        line: list[object] = [r["engine"], r["entries"]]
        for mode in ("fts", "vector", "hybrid"):
            ours, theirs = r[f"paired-{mode}"], r[f"raw-{mode}"]
            line += [
                f"{ours['p50']:.2f} / {ours['p95']:.2f}",
                f"{theirs['p50']:.2f} / {theirs['p95']:.2f}",
                f"{ours['p50'] / theirs['p50']:.2f}x",
            ]
        rows.append(line)
    heads = ["engine", "entries"]
    for mode in ("fts", "vector", "hybrid"):
        heads += [f"{mode} memstone", f"{mode} raw", f"{mode} ratio"]
    print(table(heads, rows))
    print("\nFast path vs exact by rerank_depth (vector mode, admission off, index only):\n")
    rows = [
        [
            r["model"],
            r["entries"],
            r["rerank_depth"],
            f"{r['recall10']:.3f}",
            f"{r['min_recall10']:.2f}",
            f"{r['index_p50']:.2f}",
        ]
        for r in speed["rerank"]
    ]
    print(table(["model", "entries", "rerank_depth", "recall@10 vs exact", "worst query", "index p50 ms"], rows))


def print_throughput(rows: list[dict[str, Any]]) -> None:
    print("\n## Embedding throughput (texts/s, one embed() call per set, median (min-max) of rounds)\n")
    print(
        table(
            ["model", "threads", "texts", "n", "mean chars", "texts/s", "load 1m"],
            [
                [
                    r["model"],
                    r["threads"],
                    r["texts"],
                    r["n"],
                    f"{r['mean_chars']:.0f}",
                    f"{r['median']:.0f} ({r['min']:.0f}-{r['max']:.0f})",
                    f"{r['load_1m']:.2f}",
                ]
                for r in rows
            ],
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10 dialogues, sizes 1000,10000, 1 run")
    ap.add_argument("--parts", default="quality,families,speed,throughput")
    ap.add_argument("--models", default="minilm-l6-int8,use-multilingual-v3")
    ap.add_argument(
        "--speed-models", default="minilm-l6-int8", help="models for the speed part (none: FTS alone, no model)"
    )
    ap.add_argument("--dialogues", help="MemoryCode dialogue ids: 211-360 (default), 1-210, 211-360:5 (every 5th)")
    ap.add_argument("--sizes")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--queries", type=int, help="speed queries")
    ap.add_argument("--threads", type=int, default=1, help="model threads (1 is the library default)")
    ap.add_argument("--prefilter-sizes", default="40,120,240,480,960", help="prefilter sizes P for --parts prefilter")
    ap.add_argument("--rerank-depths", default="", help="extra rerank_depth values to try at every size")
    ap.add_argument(
        "--distractors", type=int, default=2000, help="also run the paraphrase queries with this many turns added"
    )
    ap.add_argument(
        "--analyzer",
        default="v1",
        choices=("v1", "v2-stem"),
        help="v2-stem: bench/stemming.py's candidate Analyzer v2 for the whole run (stores keyed by it)",
    )
    ap.add_argument("--json", dest="json_out", help="also write the raw results to this JSON file")
    ap.add_argument(
        "--url",
        help="quality and speed parts: a postgresql:// (quality, speed) or oceanbase:// (speed) server to build the "
        "stores on; speed stores are kept there and reused by a rerun against the same server",
    )
    ap.add_argument("--start-postgres", action="store_true", help="quality and speed: start the test PostgreSQL")
    args = ap.parse_args()
    global PG_SERVER, BUILD_VERSION
    if args.analyzer != "v1":
        import stemming

        stemming.install()
        BUILD_VERSION = f"{BUILD_VERSION}+{args.analyzer}"
        import bench_retrieval as imported  # the instance families.py and nonsense.py import (this is __main__)

        imported.BUILD_VERSION = BUILD_VERSION
    PG_SERVER = args.url
    if args.start_postgres:
        from memstone.testing.servers import postgres_server

        PG_SERVER = PG_DATABASES.enter_context(postgres_server())
    quick = {
        "dialogues": "211-220",
        "sizes": "1000,10000",
        "runs": 1,
        "queries": 60,
    }
    full = {
        "dialogues": "211-360",
        "sizes": "1000,10000,100000",
        "runs": 3,
        "queries": 200,
    }
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    parts = set(args.parts.split(","))
    span, _, step = args.dialogues.partition(":")
    lo, _, hi = span.partition("-")
    dialogues = list(range(int(lo), int(hi or lo) + 1, int(step or 1)))
    models = [m for m in args.models.split(",") if m]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(f"# bench_retrieval: {' '.join(sys.argv[1:]) or '(defaults)'}\n")
    print(machine())
    results: dict[str, Any] = {"args": vars(args)}
    t0 = time.perf_counter()
    if "quality" in parts:
        qsets = [load_memorycode(dialogues), load_paraphrase()]
        if args.distractors:
            qsets.append(load_paraphrase(args.distractors))
        q = asyncio.run(quality_part(qsets, models, args.threads))
        results.update(q)
        print_quality(q["quality"], qsets)
    if "families" in parts:
        import families

        for name in models:
            fam = asyncio.run(families.run(dialogues, name, args.threads))
            results.setdefault("families", []).append(fam)
            families.print_results(fam)
    if "nonsense" in parts:
        import nonsense

        for name in models:
            ns = nonsense.run(dialogues, name, args.threads)
            results.setdefault("nonsense", []).append({k: v for k, v in ns.items() if k != "calibration"})
            nonsense.print_results(ns)
    if "speed" in parts:
        results["speed"] = []
        merged: dict[str, Any] = {"speed": [], "rerank": []}
        for name in [m for m in args.speed_models.split(",") if m]:
            if name == "none":
                merged["fts_only"] = asyncio.run(fts_speed_part(sizes, args.runs, args.queries))
                print_fts_speed(merged["fts_only"])
                continue
            rerank = [int(x) for x in args.rerank_depths.split(",") if x]
            s = asyncio.run(speed_part(name, sizes, args.runs, args.queries, args.threads, rerank))
            merged["speed"] += s["speed"]
            merged["rerank"] += s["rerank"]
        results["speed"] = merged
        if merged["speed"]:
            print_speed(merged, args.runs)
    if "prefilter" in parts:
        ps = [int(x) for x in args.prefilter_sizes.split(",")]
        results["prefilter"] = prefilter_part(args.speed_models.split(",")[0], max(sizes), args.queries, ps)
        print_prefilter(results["prefilter"])
    if "throughput" in parts:
        results["throughput"] = asyncio.run(throughput_part(models, 3 if not args.quick else 1, 1000))
        print_throughput(results["throughput"])
    print(f"\nwall {time.perf_counter() - t0:.0f} s; load at end {load()}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    with PG_DATABASES:  # drops the PostgreSQL quality databases and stops a started server
        main()
