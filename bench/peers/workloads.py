"""The data of every workload, identical for every system (harness side; stdlib only).

MemoryCode framing (documented here, in the result file and in docs/peers-benchmark.md):

- Haystack: one fresh store per *long* dialogue (ids 211–360, 20–100 sessions each); every session of the
  dialogue is one note (key ``d<dialogue>-s<index>``, text = the session's ``text``), written in session order.
- Gold: for each coding instruction id the dialogue carries (``dialogue["instructions"][session]`` lists the
  ``[instruction_id, variant]`` pairs a session introduces or updates, aligned with its ``instruction-add`` /
  ``instruction-update`` types), the gold set is every session that introduces or updates that instruction.
  Filler topics and filler instructions (``filler-*``) are never gold.
- Queries, three sets: **convention** = the instruction's text from ``topics.json`` with the words that differ
  between its versions removed (``always start function argument names with 'e_'`` / ``'f_'`` ... becomes
  ``always start function argument names with``; an instruction with one version keeps its whole text), the same
  construction as ``bench/bench_retrieval.py`` (issue 3) so the figures can be set side by side; **task** = the
  instruction's ``eval_query`` (``topics.json``; it is exactly the ``session_eval_query`` of the sessions that
  carry the instruction): the coding task the mentee is then given, the question an agent has before it writes
  code, sharing few words with the convention; **aspect** = ``"our coding convention for <object>"`` where
  ``<object>`` is the instruction's first regex field (for example ``function argument names``, ``method
  docstring``, ``class decorator``, ``import``; " names" is added for the six naming objects): what an agent asks
  when it looks the convention up, without the answer's words (``e_``, ``chx``, ``@timer``).
- Metrics over all (dialogue, instruction) queries: recall@5 and recall@10 (fraction of the gold set in the top
  k, averaged), MRR (1/rank of the first gold session within the top 10, 0 if none).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
DATA = BENCH / "data"
MEMORYCODE = BENCH.parent.parent / "shared" / "data" / "memorycode"

sys.path.insert(0, str(BENCH))


def paraphrase() -> tuple[list[tuple[str, str]], list[tuple[str, str, list[str]]]]:
    notes, queries = [], []
    for line in (DATA / "paraphrase.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if r["type"] == "note":
            notes.append((r["id"], r["text"]))
        else:
            queries.append((r["id"], r["text"], r["gold"]))
    return notes, queries


def knowledge_update() -> list[dict]:
    return [json.loads(x) for x in (DATA / "knowledge_update.jsonl").read_text().splitlines() if x.strip()]


def convention_query(variants: list[str]) -> str:
    """The instruction text with the words that differ between its versions removed (as bench_retrieval.py)."""
    if len(variants) == 1:
        return variants[0]
    split = [v.split() for v in variants]
    common = set(split[0]).intersection(*map(set, split[1:]))
    return " ".join(w for w in split[0] if w in common)


NAMED = {"class", "function", "variable", "method", "attribute", "function argument"}


def memorycode(n_dialogues: int | None) -> list[dict]:
    """Long dialogues as {id, notes: [(key, text)], queries: [(qid, set, text, gold_keys)]}."""
    root = MEMORYCODE
    if not (root / "dataset").is_dir():
        raise FileNotFoundError(f"MemoryCode not found at {root}")
    topics = json.loads((root / "topics.json").read_text())
    instr = {t["id"]: t for t in topics["instructions"]}
    ids = list(range(211, 361))
    if n_dialogues is not None and n_dialogues < len(ids):
        step = len(ids) / n_dialogues
        ids = [ids[int(i * step)] for i in range(n_dialogues)]
    out = []
    for did in ids:
        d = json.loads((root / "dataset" / f"dialogue_{did}.json").read_text())
        notes = [(f"d{did}-s{i}", s["text"].strip()) for i, s in enumerate(d["sessions"])]
        gold: dict[int, list[str]] = {}
        for i, pairs in enumerate(d["instructions"]):
            if pairs == [-1]:
                continue
            for iid, _variant in pairs:
                gold.setdefault(iid, []).append(f"d{did}-s{i}")
        queries = []
        for iid, keys in sorted(gold.items()):
            t = instr[iid]
            queries.append((f"d{did}-i{iid}-convention", "convention", convention_query(t["text"]), keys))
            queries.append((f"d{did}-i{iid}-task", "task", t["eval_query"], keys))
            obj = t["regex"][0][0]
            obj = f"{obj} names" if obj in NAMED else obj
            queries.append((f"d{did}-i{iid}-aspect", "aspect", f"our coding convention for {obj}", keys))
        out.append({"id": did, "notes": notes, "queries": queries})
    return out


def speed_notes(n: int, seed: int, prefix: str) -> list[tuple[str, str]]:
    """``n`` distinct synthetic notes from bench/corpus.py (Zipf pseudo-words, 10–30 words)."""
    from corpus import Corpus

    c = Corpus(seed=seed)
    seen: set[str] = set()
    out = []
    while len(out) < n:
        t = c.note()
        if t in seen:
            continue
        seen.add(t)
        out.append((f"{prefix}{len(out)}", t))
    return out


def speed_queries(n: int, seed: int) -> list[str]:
    from corpus import Corpus

    c = Corpus(seed=seed)
    c.rng = random.Random(seed * 7 + 1)
    return [c.query() for _ in range(n)]


def ranking_metrics(ranked: list[list[str]], golds: list[list[str]]) -> dict[str, float]:
    r5 = r10 = mrr = 0.0
    for keys, gold in zip(ranked, golds, strict=True):
        g = set(gold)
        r5 += len(g & set(keys[:5])) / len(g)
        r10 += len(g & set(keys[:10])) / len(g)
        for i, k in enumerate(keys[:10]):
            if k in g:
                mrr += 1.0 / (i + 1)
                break
    n = max(len(golds), 1)
    return {"recall@5": r5 / n, "recall@10": r10 / n, "mrr": mrr / n, "queries": len(golds)}
