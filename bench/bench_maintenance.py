"""Maintenance benchmark (issue 14): one APPLY run over appended memory, then a second run over unchanged memory.

Two stores, each built by appending every statement as its own entry (no capture dedup), so the restatements are
all there for maintenance to find:

- ``capture``: every storable line of the capture data sets (``bench/data/capture``, or ``--data``), one scope per
  project, with the labels' ``duplicate_of`` pairs as the planted restatements and ``revises`` as corrections;
- ``seeded``: ~1,000 synthetic rules in one scope: distinct rules, planted restatements (some flagged important or
  mandatory), conflicting pairs (the same rule with one value swapped: merging them is a false merge), stale
  entries superseded by a newer one (a ``supersedes`` relation), and a mandatory tier far over its budget.

Printed per store: restatement pairs still separate after one APPLY run, false merges (two entries of different
groups merged: target 0), flags preserved on merges (target 100%), important/mandatory entries removed by a bare
delete (target 0), the mandatory tier before and after, model calls and writes on a second run over unchanged
memory (target 0 and 0), and the run times.

    nice .venv/bin/python bench/bench_maintenance.py                 # lexical judges only
    nice .venv/bin/python bench/bench_maintenance.py --model minilm-l6-int8
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from memstone import EntryInput, MemoryService, open_service
from memstone.maintenance import maintain
from memstone.ports import EmbeddingModel

HERE = Path(__file__).resolve().parent


@dataclass
class Planted:
    """What was written: entry id -> group (restatements and corrections share a group), and the flags."""

    scope_of: dict[str, str] = field(default_factory=dict)
    group: dict[str, str] = field(default_factory=dict)
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (restatement, original) entry ids
    flags: dict[str, tuple[bool, bool]] = field(default_factory=dict)


async def append(svc: MemoryService, scope: str, items: list[tuple[str, EntryInput]], planted: Planted) -> None:
    """Write ``items`` (key, entry) to ``scope`` in batches; record each key's entry id in ``planted``."""
    for start in range(0, len(items), 100):
        batch = items[start : start + 100]
        rev = await svc.remember(scope=scope, entries=[e for _, e in batch])
        assert rev is not None
        by_text = {v.text: v for v in await svc.entries(rev)}
        for key, e in batch:
            v = by_text[e.text]
            planted.scope_of[key] = scope
            planted.group.setdefault(key, key)
            planted.flags[key] = (v.content.important, v.content.mandatory)
            planted.group[v.entry_id] = planted.group.pop(key)
            planted.flags[v.entry_id] = planted.flags.pop(key)
            planted.scope_of[v.entry_id] = planted.scope_of.pop(key)
            for i, (r, o) in enumerate(planted.pairs):
                planted.pairs[i] = (v.entry_id if r == key else r, v.entry_id if o == key else o)
            for other, g in list(planted.group.items()):
                if g == key:
                    planted.group[other] = planted.group[v.entry_id]


async def capture_store(svc: MemoryService, data: Path) -> Planted:
    planted = Planted()
    for path in sorted(data.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
        scope = f"memstone://orgs/bench/projects/{path.stem}"
        items: list[tuple[str, EntryInput]] = []
        seen: set[str] = set()
        for r in rows:
            label = r["label"]
            if not label["should_store"] or r["text"] in seen:
                continue
            seen.add(r["text"])
            key = f"{path.stem}:{r['seq']}"
            items.append((key, EntryInput(kind=label["kind"] or "fact", text=r["text"])))
            link = label["duplicate_of"] or label["revises"]
            if link is not None:
                planted.group[key] = f"{path.stem}:{link}"
            if label["duplicate_of"] is not None:
                planted.pairs.append((key, f"{path.stem}:{link}"))
        # groups point at keys; resolve chains to the root key before ids replace them
        for key in list(planted.group):
            root = planted.group[key]
            while root in planted.group and planted.group[root] != root:
                root = planted.group[root]
            planted.group[key] = root
        await append(svc, scope, items, planted)
    return planted


SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "nu",
    "pe",
    "ra",
    "si",
    "tu",
    "vo",
    "xe",
    "za",
    "bo",
    "di",
    "fu",
    "gi",
    "ha",
    "ju",
    "ke",
    "li",
    "mo",
]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3))


async def seeded_store(svc: MemoryService, size: int, seed: int) -> Planted:
    rng = random.Random(seed)
    planted = Planted()
    scope = "memstone://orgs/bench/projects/seeded"
    used: set[str] = set()

    def fresh() -> str:
        while (w := word(rng)) in used:
            pass
        used.add(w)
        return w

    items: list[tuple[str, EntryInput]] = []
    n_rules = int(size * 0.7)
    rules: list[tuple[str, str, str]] = [(fresh(), fresh(), fresh()) for _ in range(n_rules)]
    for i, (a, b, c) in enumerate(rules):
        mandatory = i < size // 5  # an oversized tier: a fifth of the store, none of it workflow rules
        items.append((f"r{i}", EntryInput(kind="convention", text=f"Module {a} must call {b} before {c}.",
                                          mandatory=mandatory)))  # fmt: skip
    for i in range(int(size * 0.12)):  # restatements, some flagged
        a, b, c = rules[i * 3 % n_rules]
        key = f"d{i}"
        important, mandatory = rng.random() < 0.3, rng.random() < 0.15
        items.append((key, EntryInput(kind="convention", text=f"Before {c}, the {a} module has to call {b}.",
                                      important=important, mandatory=mandatory)))  # fmt: skip
        planted.group[key] = f"r{i * 3 % n_rules}"
        planted.pairs.append((key, f"r{i * 3 % n_rules}"))
    for i in range(int(size * 0.08)):  # conflicting pairs: one value swapped, another rule
        a, b, _ = rules[(i * 7 + 1) % n_rules]
        items.append((f"c{i}", EntryInput(kind="convention", text=f"Module {a} must call {b} before {fresh()}.")))
    stale: list[tuple[str, str]] = []
    for i in range(int(size * 0.05)):  # stale: a newer entry supersedes an older one (relation added below)
        x, y = fresh(), fresh()
        items.append((f"o{i}", EntryInput(kind="procedure", text=f"Deploy {x} with the {y} script.",
                                          important=rng.random() < 0.5)))  # fmt: skip
        items.append((f"n{i}", EntryInput(kind="procedure", text=f"Deploy {x} through the {fresh()} pipeline.")))
        planted.group[f"n{i}"] = f"o{i}"
        stale.append((f"n{i}", f"o{i}"))
    ids: dict[str, str] = {}
    for key, _ in items:
        ids[key] = key
    keyed = dict(items)
    await append(svc, scope, items, planted)
    head = await svc.resolve(scope)
    assert head is not None
    by_text = {v.text: v.entry_id for v in await svc.entries(head)}
    for new, old in stale:
        head = await svc.resolve(scope)
        assert head is not None
        await svc.relate(head, by_text[keyed[new].text], by_text[keyed[old].text], "supersedes")
    return planted


async def measure(svc: MemoryService, name: str, planted: Planted, model: EmbeddingModel | None) -> dict[str, object]:
    scopes = sorted(set(planted.scope_of.values()))
    tier_before = sum(1 for f in planted.flags.values() if f[1])
    t0 = time.perf_counter()
    merges, applied, demotions = [], 0, 0
    for scope in scopes:
        report = await maintain(svc, scope=scope, mode="apply", model=model)
        assert report.run.status == "COMPLETED", report.run.error
        applied += report.run.totals.get("status:APPLIED", 0)
        merges += [p for p in report.proposals if p.action == "merge" and p.status == "APPLIED"]
        demotions += sum(1 for p in report.proposals if p.action == "demote" and p.status == "APPLIED")
    first_s = time.perf_counter() - t0
    active: set[str] = set()
    tier_after = 0
    for scope in scopes:
        head = await svc.resolve(scope)
        assert head is not None
        live = await svc.entries(head)
        active |= {v.entry_id for v in live}
        tier_after += sum(1 for v in live if v.content.mandatory)
    root = {e: planted.group.get(e, e) for e in planted.flags}
    false_merges = sum(1 for p in merges if len({root.get(e, e) for e in p.entries}) > 1)
    preserved = 0
    for p in merges:
        survivor = await svc.get(p.entries[0])
        want_i = any(planted.flags.get(e, (False, False))[0] for e in p.entries)
        want_m = any(planted.flags.get(e, (False, False))[1] for e in p.entries)
        demoted = survivor.content.important and not survivor.content.mandatory and want_m  # the audit's choice
        ok_m = survivor.content.mandatory or not want_m or demoted
        preserved += survivor.content.important >= want_i and ok_m
    bare = sum(1 for e, (i, m) in planted.flags.items() if (i or m) and e not in active and not _merged(e, merges))
    remaining = sum(1 for r, o in planted.pairs if r in active and o in active)
    heads = [await svc.resolve(s) for s in scopes]
    t1 = time.perf_counter()
    calls = writes = 0
    for scope, head in zip(scopes, heads, strict=True):
        again = await maintain(svc, scope=scope, mode="apply", model=model)
        calls += again.run.usage.model_calls
        writes += (await svc.resolve(scope)).revision - head.revision  # type: ignore[union-attr]
    second_s = time.perf_counter() - t1
    return {
        "store": name,
        "entries": len(planted.flags),
        "planted restatements": len(planted.pairs),
        "remaining after 1 APPLY": remaining,
        "proposals applied": applied,
        "merges": len(merges),
        "false merges": false_merges,
        "flags preserved": f"{100 * preserved / len(merges):.0f}%" if merges else "n/a",
        "bare deletes of important/mandatory": bare,
        "mandatory tier before -> after": f"{tier_before} -> {tier_after} ({demotions} demoted)",
        "run 2: model calls": calls,
        "run 2: writes": writes,
        "run 1 s": f"{first_s:.2f}",
        "run 2 s": f"{second_s:.2f}",
    }


def _merged(entry: str, merges: list[object]) -> bool:
    return any(entry in getattr(p, "entries", ())[1:] for p in merges)


async def main_async(args: argparse.Namespace) -> list[dict[str, object]]:
    model = None
    if args.model != "none":
        from memstone.embedding import load_model

        model = load_model(args.model)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("capture", "seeded"):
            async with open_service(f"sqlite:///{tmp}/{name}.db", embedding=None) as svc:
                if name == "capture":
                    planted = await capture_store(svc, Path(args.data))
                else:
                    planted = await seeded_store(svc, args.size, args.seed)
                rows.append(await measure(svc, name, planted, model))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(HERE / "data" / "capture"), help="a directory of capture *.jsonl")
    parser.add_argument("--size", type=int, default=1000, help="entries of the seeded store (about)")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--model", default="none", help="embedding profile for the paraphrase rule, or none")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    args = parser.parse_args()
    rows = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    keys = list(rows[0])
    width = max(len(k) for k in keys)
    print(f"model: {args.model}")
    print(f"| {'':<{width}} | " + " | ".join(f"{r['store']:>24}" for r in rows) + " |")
    print(f"|{'-' * (width + 2)}|" + "|".join("-" * 26 for _ in rows) + "|")
    for k in keys[1:]:
        print(f"| {k:<{width}} | " + " | ".join(f"{r[k]!s:>24}" for r in rows) + " |")


if __name__ == "__main__":
    main()
