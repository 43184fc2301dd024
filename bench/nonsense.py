"""A calibrated "no match" for the dense channel (issue 15); run as ``bench_retrieval.py --parts nonsense``.

Real queries are every family's queries (``families.load_families``, dev and held-out halves); nonsense queries
are pseudo-word strings in three styles (syllables, consonant clusters, letters and digits) searched against the
same families' Memories. The dev half of the nonsense set is the even seeds of the first two styles; the held-out
half is the odd seeds of those styles plus every query of the third style, which no fit reads.

Each query's channel lists are fetched once (``families.channel_lists``, the backend's own candidate build) and
cached in ``bench/.cache/nonsense-<model>.pickle``; the "no match" rules are then replayed offline on them with
``memstone.domain.search.admit_dense``. For every candidate rule the fit reads the dev halves only and the table
gives, per half: the rejection rate of nonsense queries (no dense hit), the false "no match" rate of real queries
(a real query left with no dense hit) and the dense R@10 of the real queries.
"""

from __future__ import annotations

import hashlib
import itertools
import pickle
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import bench_retrieval as br
import families as fm

import memstone
from memstone.domain.analyzer import STOPWORDS, query_terms
from memstone.domain.search import admit_dense
from memstone.indexing import CALIBRATIONS, Calibration

STYLES = ("syllables", "clusters", "letters", "offtopic")
OFFTOPIC = (br.HERE / "data" / "offtopic.txt").read_text().splitlines()  # English questions no family answers
PER_FAMILY = 40  # nonsense queries per style and family
TOPS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 2.0)  # the strong-semantic bar; 2.0: lexical support alone
TOPS_PROSE = (-1.0, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)  # the bar for prose queries; -1: none


def nonsense(style: str, seed: int) -> str:
    """One deterministic pseudo-word query of 2-4 words in ``style`` (``offtopic``: line ``seed`` of offtopic.txt)."""
    if style == "offtopic":
        return OFFTOPIC[seed % len(OFFTOPIC)]
    h = hashlib.sha256(f"nonsense:{style}:{seed}".encode()).digest()
    cons, vow = "bdfgklmnprstvz", "aeiou"
    n = 2 + h[0] % 3
    words = []
    for w in range(n):
        b = h[1 + w * 7 : 8 + w * 7]
        if style == "syllables":
            words.append("".join(cons[b[j] % len(cons)] + vow[b[j + 3] % len(vow)] for j in range(3)))
        elif style == "clusters":
            words.append("".join(cons[b[j] % len(cons)] for j in range(3)) + vow[b[3] % 5] + cons[b[4] % len(cons)])
        else:
            alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
            words.append("".join(alphabet[x % len(alphabet)] for x in b[: 4 + b[6] % 4]))
    return " ".join(words)


def prose(text: str) -> bool:
    return any(t in STOPWORDS for t in query_terms(text))


def nonsense_split(style: str, seed: int) -> str:
    return "dev" if style != "letters" and seed % 2 == 0 else "heldout"


@dataclass
class Probe:
    family: str
    half: str
    real: bool
    lists: fm.Lists
    style: str  # "real" or the nonsense style
    prose: bool  # the query holds a stopword
    gold: frozenset[str]
    units: dict[str, str]  # entry id -> unit


async def probes(dialogues: Sequence[int], model_name: str, threads: int, per_family: int) -> list[Probe]:
    path = (
        br.CACHE
        / f"nonsense-{model_name}-{br.fingerprint([dialogues, per_family, br.BUILD_VERSION, STYLES, OFFTOPIC])}.pickle"
    )
    if path.exists():
        loaded: list[Probe] = pickle.loads(path.read_bytes())
        return loaded
    fams = fm.load_families(dialogues)
    real = br.real_model(model_name, threads)
    cached = br.CachedModel(real, br.VectorCache(real.profile))
    out: list[Probe] = []
    for fam in fams:
        if fam.by_session:
            db, memories, entries = await fm.session_store(fam.qset, cached)
        else:  # quality_store answers with the store's URL
            url, memories, entries = await br.quality_store(fam.qset, cached)
            db = Path(url.removeprefix("sqlite:///"))
        groups = sorted(memories)
        fake = [(s, i) for s in STYLES for i in range(per_family)]
        texts = [nonsense(s, i) for s, i in fake]
        await cached.prefetch(list({q.text for q in fam.queries} | set(texts)), f"{fam.name} queries")
        units = {e: br.unit(n) for e, n in entries.items()}
        async with memstone.open_service(f"sqlite:///{db}", embedding=cached) as svc:
            heads = {g: await svc.head(m) for g, m in memories.items()}
            for q in fam.queries:
                ls = await fm.channel_lists(svc, heads[q.group], q.text)
                out.append(Probe(fam.name, fam.splits[q.qid], True, ls, "real", prose(q.text), q.gold, units))
            for k, ((style, seed), text) in enumerate(zip(fake, texts, strict=True)):
                ls = await fm.channel_lists(svc, heads[groups[k % len(groups)]], text)
                out.append(
                    Probe(fam.name, nonsense_split(style, seed), False, ls, style, prose(text), frozenset(), units)
                )
        br.log(f"  {fam.name}: {len(fam.queries)} real and {len(fake)} nonsense probes (load {br.load()})")
    # The unit map is shared per family; keep one copy per family in the pickle.
    path.write_bytes(pickle.dumps(out))
    return out


def dense_units(p: Probe, cal: Calibration) -> list[str]:
    bar = cal.prose_bar if p.prose else cal.vector_min_top
    vec = admit_dense(
        p.lists.vector,
        floor=cal.vector_min_cosine,
        min_top=bar,
        supported=p.lists.support[cal.support_prefix],
    )
    return list(dict.fromkeys(p.units[c.entry_id] for c, _ in vec))[: br.LIMIT]


@dataclass
class Outcome:
    rejected: float  # nonsense queries left with no dense hit
    false_no_match: float  # real queries left with no dense hit
    lost_r10: float  # dense R@10 of real queries with the rule minus without it (<= 0)
    n_real: int
    n_fake: int


def outcome(ps: Sequence[Probe], cal: Calibration) -> Outcome:
    real = [p for p in ps if p.real]
    fake = [p for p in ps if not p.real]
    off = replace(cal, vector_min_top=-1.0, vector_min_top_prose=-1.0)
    lost = [
        (len(p.gold & set(dense_units(p, cal))) - len(p.gold & set(dense_units(p, off)))) / len(p.gold) for p in real
    ]
    return Outcome(
        rejected=sum(not dense_units(p, cal) for p in fake) / max(1, len(fake)),
        false_no_match=sum(not dense_units(p, cal) for p in real) / max(1, len(real)),
        lost_r10=statistics.mean(lost) if lost else 0.0,
        n_real=len(real),
        n_fake=len(fake),
    )


REJECT_TARGET = 0.99  # the share of dev nonsense queries the rule must leave with no dense hit


def fit(ps: Sequence[Probe], base: Calibration) -> tuple[Calibration, list[str]]:
    """Fit the no-match rule on the dev halves only.

    1. Among the (prefix, bar) cells that reject at least REJECT_TARGET of the dev pseudo-word queries (bare word
       lists), the one with the smallest worst per-family loss of dense R@10 of the dev real queries; ties go to
       the lower bar, then the shorter prefix.
    2. With those, the prose bar (queries holding a stopword) maximising the dev off-topic questions' rejection
       minus that worst loss; ties go to the lower bar.
    """
    dev = [p for p in ps if p.half == "dev"]
    words = [p for p in dev if not p.real and p.style != "offtopic"]
    off = [p for p in dev if p.style == "offtopic"]
    real = {f: [p for p in dev if p.family == f and p.real] for f in sorted({p.family for p in dev})}
    notes = []

    def worst(cal: Calibration) -> float:
        return min(outcome(r, cal).lost_r10 for r in real.values())

    best: tuple[float, float, int, Calibration] | None = None
    for k, top in itertools.product(fm.SUPPORT_PREFIXES, TOPS):
        cal = replace(base, vector_min_top=top, vector_min_top_prose=None, support_prefix=k)
        rej, loss = outcome(words, cal).rejected, worst(cal)
        notes.append(f"prefix {k} bar {top}: dev pseudo-words rejected {rej:.3f}, worst dev R@10 loss {loss:+.3f}")
        if rej >= REJECT_TARGET and (best is None or (round(loss, 4), -top, -k) > best[:3]):
            best = (round(loss, 4), -top, -k, cal)
    if best is None:
        return replace(base, vector_min_top=-1.0), [*notes, "no cell meets the rejection target: no bar"]
    chosen = best[3]
    prose_best: tuple[float, float, Calibration] | None = None
    for top in TOPS_PROSE:
        cal = replace(chosen, vector_min_top_prose=top)
        rej, loss = outcome(off, cal).rejected, worst(cal)
        notes.append(f"prose bar {top}: dev off-topic rejected {rej:.3f}, worst dev R@10 loss {loss:+.3f}")
        if prose_best is None or (round(rej + loss, 4), -top) > prose_best[:2]:
            prose_best = (round(rej + loss, 4), -top, cal)
    assert prose_best is not None
    return prose_best[2], notes


async def service_check(
    dialogues: Sequence[int], model_name: str, threads: int, cal: Calibration
) -> list[list[object]]:
    """Every probe query through the real ``search`` with ``cal``: queries with no hit, per family, half, mode."""
    fams = fm.load_families(dialogues)
    real = br.real_model(model_name, threads)
    cached = br.CachedModel(real, br.VectorCache(real.profile))
    rows: list[list[object]] = []
    for fam in fams:
        builder = fm.session_store if fam.by_session else br.quality_store
        db, memories, _ = await builder(fam.qset, cached)
        groups = sorted(memories)
        url = db if isinstance(db, str) else f"sqlite:///{db}"  # quality_store answers with a URL, session_store a path
        async with memstone.open_service(url, embedding=cached) as svc:
            svc.indexer.calibration = cal
            heads = {g: await svc.head(m) for g, m in memories.items()}
            kind = {"offtopic": "off-topic"}
            work = [(fam.splits[q.qid], "real", q.group, q.text) for q in fam.queries] + [
                (nonsense_split(s, i), kind.get(s, "pseudo-words"), groups[k % len(groups)], nonsense(s, i))
                for k, (s, i) in enumerate((s, i) for s in STYLES for i in range(PER_FAMILY))
            ]
            for mode in ("fts", "vector", "hybrid", "auto"):
                empty: dict[tuple[str, str], list[int]] = {}
                for half, what, group, text in work:
                    res = await svc.search(text, memories=[heads[group]], limit=br.LIMIT, mode=mode)
                    empty.setdefault((half, what), []).append(not res.hits)
                for (half, what), got in sorted(empty.items()):
                    rows.append([fam.name, half, what, mode, len(got), sum(got)])
        br.log(f"  {fam.name}: service check done (load {br.load()})")
    return rows


def run(dialogues: Sequence[int], model_name: str, threads: int) -> dict[str, Any]:
    import asyncio

    ps = asyncio.run(probes(dialogues, model_name, threads, PER_FAMILY))
    base = CALIBRATIONS.get(model_name, Calibration())
    cal, notes = fit(ps, base)
    table = []

    def row(fam: str, half: str, sel: list[Probe]) -> list[object]:
        o = outcome([p for p in sel if p.style != "offtopic"], cal)
        t = outcome([p for p in sel if p.style == "offtopic"], cal)
        return [
            fam,
            half,
            o.n_real,
            f"{o.false_no_match:.3f}",
            f"{o.lost_r10:+.3f}",
            o.n_fake,
            f"{o.rejected:.3f}",
            t.n_fake,
            f"{t.rejected:.3f}",
        ]

    for fam in sorted({p.family for p in ps}):
        for half in ("dev", "heldout"):
            table.append(row(fam, half, [p for p in ps if p.family == fam and p.half == half]))
    for half in ("dev", "heldout"):
        table.append(row("all", half, [p for p in ps if p.half == half]))
    checked = asyncio.run(service_check(dialogues, model_name, threads, cal))
    return {"model": model_name, "calibration": cal, "fit": notes, "table": table, "service": checked}


def print_results(out: dict[str, Any]) -> None:
    cal = out["calibration"]
    print(f"\n## Nonsense queries: a calibrated no match ({out['model']}; limit=10)\n")
    print(
        f"Fitted on dev halves: vector_min_top {cal.vector_min_top}, vector_min_top_prose "
        f"{cal.prose_bar}, support_prefix {cal.support_prefix}\n"
    )
    print(
        br.table(
            [
                "family",
                "half",
                "real queries",
                "false no match",
                "dense R@10 change",
                "pseudo-word queries",
                "rejected",
                "off-topic questions",
                "rejected",
            ],
            out["table"],
        )
    )
    print("\nThrough the service (queries with no hit at all):\n")
    print(br.table(["family", "half", "queries", "mode", "n", "no hit"], out["service"]))
    print("\nFit (dev halves only):\n")
    for n in out["fit"]:
        print(f"- {n}")
