"""Retrieval families with dev and held-out halves (issue 15); run as ``bench_retrieval.py --parts families``.

Families: MemoryCode ``convention`` and ``task`` (session notes, one Memory per dialogue), ``paraphrase`` and
``paraphrase+2k``, ``conversation`` (``bench/data/conversation.jsonl``: turn entries, one Memory per dialogue,
one ``remember`` per session) and ``multilingual`` (``bench/data/multilingual.jsonl``: Chinese, English and
mixed notes and queries in one Memory). Every query has a split: MemoryCode families and ``conversation`` by
dialogue (``build_conversation_set.split``), the one-Memory sets by gold note. Only dev halves are read by the
fit; the printed tables give dev and held-out separately.

For every query both channel lists are fetched once, the way ``backends.sql.search.SearchPart.search_sync`` builds them
(depth max(limit*4, 32), the RFC's FTS admission, the engine's BM25, per-entry max cosine), so the fusion fit
replays ``memstone.domain.search.convex_fuse`` offline; the reported rows then come from the real ``search``
with the fitted calibration, and the replay is checked against them. A textbook BM25 (Okapi, k1 1.5, b 0.75,
rank_bm25's epsilon floor for negative idf) over the same entries' Analyzer v1 tokens is the baseline.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench_retrieval as br
from build_conversation_set import conversation, split

import memstone
from memstone import EntryInput
from memstone.domain.analyzer import STOPWORDS, informative_terms, query_terms
from memstone.domain.calibration import FTS_COVERAGE_POWER
from memstone.domain.search import (
    Candidate,
    admit_dense,
    candidate_depth,
    convex_fuse,
    fts_required_terms,
    l2_to_cosine,
    matched_share,
    rrf_fuse,
)
from memstone.indexing import CALIBRATIONS, Calibration
from memstone.ports import SearchRequest

HERE = Path(__file__).resolve().parent
MODES = ("fts", "vector", "hybrid", "auto")
LOWS = (0.0, 0.05, 0.1, 0.2)  # the dense share when the query's words are all found
HIGHS = (0.7, 0.9, 1.0)  # ... when few are
POWERS = (1.0, 2.0)
PIVOTS = (0.3, 0.35, 0.4, 0.45, 0.5)
WIDTHS = (0.02, 0.05)
FLOORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


def note_split(note_id: str) -> str:
    return "dev" if hashlib.sha256(f"split:{note_id}".encode()).digest()[0] % 2 == 0 else "heldout"


@dataclass
class Family:
    name: str
    qset: br.QualitySet
    queries: list[br.Query]
    splits: dict[str, str]  # qid -> dev | heldout
    by_session: bool = False  # conversation: one remember per session


def load_families(dialogues: Sequence[int]) -> list[Family]:
    out: list[Family] = []
    mc = br.load_memorycode(dialogues)
    for fam in ("convention", "task"):
        qs = [q for q in mc.queries if q.family == fam]
        out.append(Family(f"memorycode-{fam}", mc, qs, {q.qid: split(int(q.group[1:])) for q in qs}))
    for qset in (br.load_paraphrase(), br.load_paraphrase(2000)):
        out.append(Family(qset.name, qset, qset.queries, {q.qid: note_split(min(q.gold)) for q in qset.queries}))
    rows = [json.loads(line) for line in (HERE / "data" / "conversation.jsonl").read_text().splitlines()]
    convs = sorted({r["conv"] for r in rows})
    notes: dict[str, dict[str, str]] = {}
    sessions: dict[str, list[list[str]]] = {}
    for conv in convs:
        sess = conversation(int(conv[1:]))
        notes[conv] = {tid: text for s in sess for tid, text in s}
        sessions[conv] = [[tid for tid, _ in s] for s in sess]
    qs = [br.Query(r["id"], r["conv"], r["text"], frozenset(r["gold"]), r["kind"]) for r in rows]
    conv_set = br.QualitySet(
        "conversation",
        notes,
        qs,
        f"bench/data/conversation.jsonl: {len(convs)} MemoryCode dialogues, one Memory each, one entry per turn "
        f"({sum(len(v) for v in notes.values())} turns), one remember per session; {len(qs)} questions",
        {"sessions": sessions},
    )
    out.append(Family("conversation", conv_set, qs, {r["id"]: r["split"] for r in rows}, by_session=True))
    rows = [json.loads(line) for line in (HERE / "data" / "multilingual.jsonl").read_text().splitlines()]
    mnotes = {r["id"]: r["text"] for r in rows if r["type"] == "note"}
    mqs = [br.Query(r["id"], "multilingual", r["text"], frozenset(r["gold"]), r["kind"]) for r in rows if "gold" in r]
    ml = br.QualitySet("multilingual", {"multilingual": mnotes}, mqs, "bench/data/multilingual.jsonl", {})
    out.append(Family("multilingual", ml, mqs, {q.qid: note_split(min(q.gold)) for q in mqs}))
    return out


async def session_store(
    qset: br.QualitySet, cached: br.CachedModel | None
) -> tuple[Path, dict[str, str], dict[str, str]]:
    """A conversation store: one Memory per dialogue, one remember (Revision) per session, in order (a set without
    sessions: one remember per 1,000 notes). ``cached`` None: built without a model (``bench/fts_prune.py``)."""
    fp = br.fingerprint([br.BUILD_VERSION, qset.name, qset.notes])
    profile = "none" if cached is None else cached.profile.profile_id
    path = br.CACHE / f"quality-{qset.name}-{profile}-{fp}.db"
    side = path.with_suffix(".json")
    if side.exists() and path.exists():
        meta = json.loads(side.read_text())
        return path, meta["memories"], meta["entries"]
    br._remove_db(path)
    br.CACHE.mkdir(parents=True, exist_ok=True)
    if cached is not None:
        await cached.prefetch([t for g in qset.notes.values() for t in g.values()], f"{qset.name} notes")
    memories: dict[str, str] = {}
    entries: dict[str, str] = {}
    async with memstone.open_service(f"sqlite:///{path}", embedding=cached) as svc:
        for i, (group, notes) in enumerate(qset.notes.items()):
            head = None
            ids = list(notes)
            batches = qset.stats["sessions"][group] if "sessions" in qset.stats else None
            for sess in batches or [ids[i : i + 1000] for i in range(0, len(ids), 1000)]:
                slugs = {tid.lower().replace("_", "-"): tid for tid in sess}
                head = await svc.remember(
                    head, entries=[EntryInput(kind="note", text=notes[tid], slug=s) for s, tid in slugs.items()]
                )
                assert head is not None
                for v in await svc.entries(head):
                    if v.content.slug in slugs:
                        entries[v.entry_id] = slugs[v.content.slug]
            assert head is not None
            memories[group] = head.memory_id
            br.log(f"  {qset.name} store: {i + 1}/{len(qset.notes)} memories")
    side.write_text(json.dumps({"memories": memories, "entries": entries}))
    return path, memories, entries


SUPPORT_PREFIXES = (0, 4, 5, 6)  # the prefix lengths of lexical support the nonsense fit tries


@dataclass
class Lists:
    fts: list[tuple[Candidate, float, float]]
    vector: list[tuple[Candidate, float]]
    support: dict[int, bool]  # lexical support of the query by prefix length (0: exact terms only)
    prose: bool  # the query holds a stopword (it gets the prose no-match bar)


async def channel_lists(svc: Any, head: Any, query: str) -> Lists:
    backend = svc.backend
    vec = await svc.indexer.query_vector(query)
    request = SearchRequest(
        query=query, memories=(head.ref,), limit=br.LIMIT, channels=("fts", "vector"), query_vector=vec
    )

    def run() -> Lists:
        search = backend._search  # the store core's search part (backends/sql/search.py)
        with backend.engine.read_txn():
            depth = candidate_depth(br.LIMIT)
            terms = query_terms(query)
            informative = informative_terms(terms)
            required = fts_required_terms(terms) / max(1, len(informative))
            fts = []
            if informative:
                for row in search._fts_candidates([head.memory_id], informative, depth, request):
                    share = matched_share(informative, set(row.searchable_text.split()))
                    if share >= required - 1e-9:
                        fts.append((Candidate(row.memory_id, row.entry_id, row.entry_version_id), row.bm25, share))
            cands = backend._vectors.candidates([head.memory_id], vec, depth, request)
            vector = [(Candidate(c.memory_id, c.entry_id, c.entry_version_id), l2_to_cosine(c.distance)) for c in cands]
            support = {}
            for k in SUPPORT_PREFIXES:
                probe = SearchRequest(
                    query=query,
                    memories=(head.ref,),
                    limit=br.LIMIT,
                    channels=("vector",),
                    query_vector=vec,
                    calibration=Calibration(support_prefix=k),
                )
                support[k] = bool(fts) or search._lexical_support([head.memory_id], probe)
            return Lists(fts, vector, support, any(t in STOPWORDS for t in terms))

    return await backend._run(run)


def replay(
    ch: Lists,
    entries: dict[str, str],
    mode: str,
    cal: Calibration,
    fusion: str = "convex",
    fts_power: float = FTS_COVERAGE_POWER,
    context: float = 0.0,
) -> list[str]:
    fts = ch.fts if mode in ("fts", "hybrid", "auto") else None
    vec = (
        admit_dense(
            ch.vector,
            floor=cal.vector_min_cosine,
            min_top=cal.prose_bar if ch.prose else cal.vector_min_top,
            supported=ch.support[cal.support_prefix],
        )
        if mode in ("vector", "hybrid", "auto")
        else None
    )
    if fusion == "rrf":
        channels: dict[str, Sequence[Candidate]] = {}
        if fts is not None:
            channels["fts"] = [c for c, *_ in fts]
        if vec is not None:
            channels["vector"] = [c for c, _ in vec]
        cands = [c for c, _, _ in rrf_fuse(channels)]
    else:
        fused = convex_fuse(
            fts,
            vec,
            vector_share=cal.share(),
            coverage_power=cal.coverage_power if mode in ("hybrid", "auto") else fts_power,
            cosine_floor=cal.vector_min_cosine,
        )
        if context:
            return with_context([(br.unit(entries[f.candidate.entry_id]), f.score) for f in fused], context)
        cands = [f.candidate for f in fused]
    return list(dict.fromkeys(br.unit(entries[c.entry_id]) for c in cands[: br.LIMIT]))


def _turn_neighbours(unit: str) -> tuple[str, ...]:
    """The previous and next turn of a conversation turn id (cDDD-sSSS-tTTT), in the same session."""
    head, _, t = unit.rpartition("-t")
    if not head or not t.isdigit():
        return ()
    n = int(t)
    return tuple(f"{head}-t{m:03d}" for m in (n - 1, n + 1) if m >= 0)


def with_context(scored: list[tuple[str, float]], lam: float) -> list[str]:
    """What-if (not in the service): smooth each turn's score with its neighbours' and let a strong turn lift the
    turn after or before it: s'(u) = s(u) + lam * max(s(neighbour))."""
    base: dict[str, float] = {}
    for u, sc in scored:
        base[u] = max(base.get(u, 0.0), sc)
    out = dict(base)
    for u, sc in base.items():
        for n in _turn_neighbours(u):
            out[n] = max(out.get(n, 0.0), base.get(n, 0.0) + lam * sc)
    ranked = sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))
    return [u for u, _ in ranked[: br.LIMIT]]


# ---------------------------------------------------------------------------------------------- BM25 baseline
class OkapiBM25:
    """rank_bm25's BM25Okapi, written out: idf = ln((N - n + .5) / (n + .5)), negative idf -> eps * mean idf."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75, eps: float = 0.25) -> None:
        self.k1, self.b = k1, b
        self.tf = [Counter(d) for d in docs]
        self.len = [len(d) for d in docs]
        self.avg = statistics.mean(self.len) if docs else 1.0
        df: Counter[str] = Counter()
        for d in self.tf:
            df.update(d.keys())
        n = len(docs)
        idf = {t: math.log((n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        floor = eps * (sum(idf.values()) / max(1, len(idf)))
        self.idf = {t: (v if v >= 0 else floor) for t, v in idf.items()}
        self.post: dict[str, list[int]] = {}
        for i, d in enumerate(self.tf):
            for t in d:
                self.post.setdefault(t, []).append(i)

    def top(self, q: Sequence[str], k: int) -> list[int]:
        scores: dict[int, float] = {}
        for t in dict.fromkeys(q):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.post[t]:
                f = self.tf[i][t]
                denom = f + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg)
                scores[i] = scores.get(i, 0.0) + idf * f * (self.k1 + 1) / denom
        return [i for i, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def _stemmer() -> Any:
    """Snowball English (``pip install snowballstemmer``; measurement only, memstone does not depend on it)."""
    try:
        import snowballstemmer  # type: ignore[import-not-found]
    except ImportError:
        return None
    return snowballstemmer.stemmer("english")


def _stem(stemmer: Any, tokens: list[str]) -> list[str]:
    # CJK tokens (u_/b_ prefixes) and digits pass through; Latin words are stemmed.
    return [t if "_" in t or not t.isalpha() else stemmer.stemWord(t) for t in tokens]


def bm25_ranked(
    svc: Any, memories: dict[str, str], entries: dict[str, str], queries: Sequence[br.Query], stop: bool, stem: bool
) -> list[list[str]]:
    backend = svc.backend
    stemmer = _stemmer() if stem else None
    wanted = {q.group for q in queries}
    index: dict[str, tuple[OkapiBM25, list[str]]] = {}
    for group, mid in memories.items():
        if group not in wanted:
            continue
        rows = list(backend.parts.proj.head_rows(mid))
        docs = [r.searchable_text.split() for r in rows]
        if stemmer is not None:
            docs = [_stem(stemmer, d) for d in docs]
        index[group] = (OkapiBM25(docs), [r.entry_id for r in rows])
    out = []
    for q in queries:
        bm, ids = index[q.group]
        terms = query_terms(q.text)
        if stop:
            terms = [t for t in terms if t not in STOPWORDS] or terms
        if stemmer is not None:
            terms = _stem(stemmer, terms)
        out.append(list(dict.fromkeys(br.unit(entries[ids[i]]) for i in bm.top(terms, br.LIMIT))))
    return out


def nonsense_queries(n: int) -> list[str]:
    """Deterministic pseudo-words ("vorzek plimu tarqen"): no real word, so no hit should come back."""
    cons, vow = "bdfgklmnprstvz", "aeiou"
    out = []
    for i in range(n):
        h = hashlib.sha256(f"nonsense:{i}".encode()).digest()
        words = []
        for w in range(3):
            syl = [cons[h[w * 6 + j] % len(cons)] + vow[h[w * 6 + j + 3] % len(vow)] for j in range(3)]
            words.append("".join(syl) + cons[h[20 + w] % len(cons)])
        out.append(" ".join(words))
    return out


# ---------------------------------------------------------------------------------------------- fit
def r10(ranked: Sequence[Sequence[str]], qs: Sequence[br.Query]) -> tuple[float, float]:
    s = br.score(ranked, qs)
    return s.r10, s.mrr


def fit(
    data: dict[str, tuple[list[Lists], list[br.Query], dict[str, str]]], no_match: Calibration
) -> tuple[Calibration, list[str]]:
    """Fit the floor, then the share and power, on dev halves only (``data``: family -> dev lists, queries)."""
    notes = []
    # 1. The floor (minimum relevance): the highest whose dev vector R@10 stays within 0.005 of floor 0's.
    base = {
        f: r10([replay(c, e, "vector", Calibration(vector_min_cosine=-1.0)) for c in ls], qs)[0]
        for f, (ls, qs, e) in data.items()
    }
    floor = 0.0
    for fl in FLOORS:
        cal = Calibration(vector_min_cosine=fl)
        got = {f: r10([replay(c, e, "vector", cal) for c in ls], qs)[0] for f, (ls, qs, e) in data.items()}
        if all(got[f] >= base[f] - 0.005 for f in data):
            floor = fl
        notes.append(f"floor {fl}: dev vector R@10 " + ", ".join(f"{f} {got[f]:.3f}" for f in sorted(got)))
    # 1b. The query-level "no match" bar and its lexical support: fitted on the dev nonsense and real queries by
    # bench/nonsense.py (``no_match``), kept here.
    min_top, prose, support_prefix = no_match.vector_min_top, no_match.vector_min_top_prose, no_match.support_prefix
    notes.append(
        f"no match (bench/nonsense.py, dev halves): bar {min_top}, prose bar {prose}, support prefix {support_prefix}"
    )
    # 2. The per-query share and the power: maximise the worst dev margin of hybrid R@10 over max(fts, vector).
    ref = {}
    for f, (ls, qs, e) in data.items():
        fts0 = max(
            r10([replay(c, e, "fts", Calibration(), fts_power=p) for c in ls], qs)[0] for p in (0.0, FTS_COVERAGE_POWER)
        )
        vec0 = r10(
            [
                replay(
                    c,
                    e,
                    "vector",
                    Calibration(
                        vector_min_cosine=floor,
                        vector_min_top=min_top,
                        vector_min_top_prose=prose,
                        support_prefix=support_prefix,
                    ),
                )
                for c in ls
            ],
            qs,
        )[0]
        ref[f] = max(fts0, vec0)
    best: tuple[float, float, Calibration] | None = None
    for low, high, power, pivot, width in itertools.product(LOWS, HIGHS, POWERS, PIVOTS, WIDTHS):
        cal = Calibration(
            vector_min_cosine=floor,
            vector_min_top=min_top,
            vector_min_top_prose=prose,
            support_prefix=support_prefix,
            share_low=low,
            share_high=high,
            share_pivot=pivot,
            share_width=width,
            coverage_power=power,
        )
        margins, mrrs = [], []
        for _f, (ls, qs, e) in data.items():
            r, m = r10([replay(c, e, "hybrid", cal) for c in ls], qs)
            margins.append(r - ref[_f])
            mrrs.append(m)
        key = (round(min(margins), 3), round(statistics.mean(mrrs), 4))
        notes.append(
            f"low {low} high {high} power {power} pivot {pivot} width {width}: worst dev margin {min(margins):+.3f}, "
            f"mean MRR {key[1]:.3f}"
        )
        if best is None or key > (best[0], best[1]):
            best = (key[0], key[1], cal)
    assert best is not None
    return best[2], notes


async def run(dialogues: Sequence[int], model_name: str, threads: int, fit_only: bool = False) -> dict[str, Any]:
    fams = load_families(dialogues)
    real = br.real_model(model_name, threads)
    cached = br.CachedModel(real, br.VectorCache(real.profile))
    out: dict[str, Any] = {"rows": [], "bm25": [], "fit": [], "nonsense": [], "model": model_name}
    stores: dict[str, tuple[Path, dict[str, str], dict[str, str]]] = {}
    lists: dict[str, list[Lists]] = {}
    for fam in fams:
        if fam.qset.name not in stores:
            if fam.by_session:
                stores[fam.qset.name] = await session_store(fam.qset, cached)
            else:  # quality_store answers with the store's URL (it may be a PostgreSQL one); families run on SQLite
                url, memories, entries = await br.quality_store(fam.qset, cached)
                stores[fam.qset.name] = (Path(url.removeprefix("sqlite:///")), memories, entries)
        path, memories, entries = stores[fam.qset.name]
        await cached.prefetch(list({q.text for q in fam.queries}), f"{fam.name} queries")
        t0 = time.perf_counter()
        async with memstone.open_service(f"sqlite:///{path}", embedding=cached) as svc:
            heads = {g: await svc.head(m) for g, m in memories.items()}
            lists[fam.name] = [await channel_lists(svc, heads[q.group], q.text) for q in fam.queries]
        br.log(f"  {fam.name}: channel lists of {len(fam.queries)} queries ({time.perf_counter() - t0:.0f} s)")
    dev = {}
    for fam in fams:
        entries = stores[fam.qset.name][2]
        idx = [i for i, q in enumerate(fam.queries) if fam.splits[q.qid] == "dev"]
        dev[fam.name] = ([lists[fam.name][i] for i in idx], [fam.queries[i] for i in idx], entries)
    import nonsense

    ps = await nonsense.probes(dialogues, model_name, threads, nonsense.PER_FAMILY)
    no_match, _ = nonsense.fit(ps, CALIBRATIONS.get(model_name, Calibration()))
    cal, notes = fit(dev, no_match)
    out["fit"] = notes
    out["calibration"] = br.calibration_fields(cal)
    br.log(f"  fitted on dev halves: {cal}")
    for fam in fams:
        path, memories, entries = stores[fam.qset.name]
        async with memstone.open_service(f"sqlite:///{path}", embedding=cached) as svc:
            svc.indexer.calibration = cal
            heads = {g: await svc.head(m) for g, m in memories.items()}
            for half in ("dev", "heldout"):
                idx = [i for i, q in enumerate(fam.queries) if fam.splits[q.qid] == half]
                qs = [fam.queries[i] for i in idx]
                if not qs:
                    continue
                for mode in MODES:
                    ranked, used = await br.run_queries(svc, heads, entries, qs, mode)
                    s = br.score(ranked, qs)
                    same = sum(
                        a == replay(lists[fam.name][i], entries, mode, cal) for a, i in zip(ranked, idx, strict=True)
                    )
                    out["rows"].append(
                        {
                            "family": fam.name,
                            "half": half,
                            "mode": mode,
                            "used": ",".join(sorted(used)),
                            "replay_same": same,
                            **s.__dict__,
                        }
                    )
                extra = {
                    "hybrid, fusion=rrf (replay)": [
                        replay(lists[fam.name][i], entries, "hybrid", cal, "rrf") for i in idx
                    ],
                    "fts, engine BM25 order (replay)": [
                        replay(lists[fam.name][i], entries, "fts", cal, fts_power=0.0) for i in idx
                    ],
                }
                if fam.name == "conversation":
                    for lam in (0.1, 0.2, 0.3, 0.5):
                        extra[f"hybrid + neighbour context {lam} (what-if replay)"] = [
                            replay(lists[fam.name][i], entries, "hybrid", cal, context=lam) for i in idx
                        ]
                for label, ranked in extra.items():
                    s = br.score(ranked, qs)
                    out["rows"].append({"family": fam.name, "half": half, "mode": label, "used": "", **s.__dict__})
                for stop, stem in ((False, False), (True, False), (True, True)):
                    if stem and _stemmer() is None:
                        continue
                    s = br.score(bm25_ranked(svc, memories, entries, qs, stop, stem), qs)
                    out["bm25"].append({"family": fam.name, "half": half, "stop": stop, "stem": stem, **s.__dict__})
            if fam.name == "conversation":
                groups = list(heads)
                for mode in ("fts", "vector", "hybrid", "auto"):
                    empty = 0
                    qs_n = nonsense_queries(40)
                    for i, q in enumerate(qs_n):
                        res = await svc.search(q, memories=[heads[groups[i % len(groups)]]], limit=10, mode=mode)
                        empty += not res.hits
                    out["nonsense"].append({"mode": mode, "queries": len(qs_n), "no_hit": empty})
        br.log(f"  {fam.name}: service rows done (load {br.load()})")
    return out


def print_results(out: dict[str, Any]) -> None:
    print(f"\n## Families, dev and held-out halves ({out['model']}; limit=10)\n")
    print(f"Fitted on dev halves: {out['calibration']}\n")
    rows = [
        [
            r["family"],
            r["half"],
            r["mode"] + (f" ({r['used']})" if r["mode"] == "auto" else ""),
            r["n"],
            f"{r['r5']:.3f}",
            f"{r['r10']:.3f}",
            f"{r['mrr']:.3f}",
            r["empty"],
            r.get("replay_same", ""),
        ]
        for r in out["rows"]
    ]
    rows += [
        [
            r["family"],
            r["half"],
            "textbook BM25" + (" -stopwords" if r["stop"] else "") + (" +stem" if r["stem"] else ""),
            r["n"],
            f"{r['r5']:.3f}",
            f"{r['r10']:.3f}",
            f"{r['mrr']:.3f}",
            r["empty"],
            "",
        ]
        for r in out["bm25"]
    ]
    rows.sort(key=lambda r: (r[0], r[1]))
    print(br.table(["family", "half", "mode", "n", "R@5", "R@10", "MRR", "no hit", "replay = service"], rows))
    print("\nNonsense queries (40 pseudo-word queries over the conversation Memories): queries with no hit\n")
    print(br.table(["mode", "queries", "no hit"], [[r["mode"], r["queries"], r["no_hit"]] for r in out["nonsense"]]))
    print("\nFit (dev halves only):\n")
    for n in out["fit"]:
        print(f"- {n}")
