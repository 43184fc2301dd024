"""Maintenance benchmark (issue 14): one APPLY run over appended memory, then a second run over unchanged memory.

Three stores, each built by appending every statement as its own entry (no capture dedup), so the restatements are
all there for maintenance to find:

- ``capture`` (dev) and ``capture-heldout``: every storable line of the capture data sets (``bench/data/capture``
  and ``bench/data/capture-heldout``, capture's own split by project), one scope per project, with the labels'
  ``duplicate_of`` pairs as the planted restatements and ``revises`` as corrections;
- ``seeded``: ~1,000 synthetic rules in one scope: distinct rules, planted restatements (some flagged important or
  mandatory), conflicting pairs (the same rule with one value swapped: merging them is a false merge), stale
  entries superseded by a newer one (a ``supersedes`` relation), and a mandatory tier far over its budget. Its
  pairs are split in two halves by a stable hash of the pair's keys (:func:`half`: ``d3|r9``, entry ``r9``).

Printed per store and half: restatement pairs still separate after one APPLY run, false merges (two entries of
different groups merged: target 0), flags preserved on merges (target 100%), important/mandatory entries removed by
a bare delete (target 0); per store: the mandatory tier before and after, model calls and writes on a second run
over unchanged memory (target 0 and 0), and the run times.

Every tuned number of the judges is fitted on the dev halves only: ``--fit`` sweeps the duplicate judge's subject
share (``JudgeSettings.subject_share``) over the capture dev projects and the seeded set's dev pairs, without a
model and with ``--model``, and prints the lowest value from which no higher one adds a dev false merge. It never
builds the held-out store nor reads a held-out pair.

    nice .venv/bin/python bench/bench_maintenance.py                 # lexical judges only
    nice .venv/bin/python bench/bench_maintenance.py --model minilm-l6-int8
    nice .venv/bin/python bench/bench_maintenance.py --model minilm-l6-int8 --fit 0,0.1,0.2,0.3,0.4,0.5,0.6,0.7
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from memstone import EntryInput, MemoryService, open_service
from memstone.maintenance import JudgeSettings, MaintenanceSettings, Proposal, maintain
from memstone.ports import EmbeddingModel

HERE = Path(__file__).resolve().parent


@dataclass
class Planted:
    """What was written: entry id -> group (restatements and corrections share a group), and the flags."""

    scope_of: dict[str, str] = field(default_factory=dict)
    group: dict[str, str] = field(default_factory=dict)
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (restatement, original) entry ids
    flags: dict[str, tuple[bool, bool]] = field(default_factory=dict)
    key_of: dict[str, str] = field(default_factory=dict)  # entry id -> the stable key it was written under
    part: str | None = None  # the half every pair of this store belongs to (None: by hash of the pair's keys)

    def half_of(self, *entries: str) -> str:
        return self.part or half(*(self.key_of.get(e, e) for e in entries))


def half(*keys: str) -> str:
    """The half a pair (or an entry) belongs to: a stable hash of its sorted keys, even first byte = dev."""
    digest = hashlib.sha256("|".join(sorted(keys)).encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "held-out"


async def append(svc: MemoryService, scope: str, items: list[tuple[str, EntryInput]], planted: Planted) -> None:
    """Write ``items`` (key, entry) to ``scope`` in batches; record each key's entry id in ``planted``."""
    for start in range(0, len(items), 100):
        batch = items[start : start + 100]
        rev = await svc.remember(scope=scope, entries=[e for _, e in batch])
        assert rev is not None
        by_text = {v.text: v for v in await svc.entries(rev)}
        for key, e in batch:
            v = by_text[e.text]
            planted.key_of[v.entry_id] = key
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


async def capture_store(svc: MemoryService, data: Path, part: str) -> Planted:
    planted = Planted(part=part)
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


async def measure(
    svc: MemoryService, name: str, planted: Planted, model: EmbeddingModel | None, settings: MaintenanceSettings
) -> list[dict[str, object]]:
    """One APPLY run per scope, then a second one; a row per half of the store (its run-level figures in each)."""
    scopes = sorted(set(planted.scope_of.values()))
    tier_before = sum(1 for f in planted.flags.values() if f[1])
    t0 = time.perf_counter()
    merges: list[Proposal] = []
    applied = demotions = 0
    for scope in scopes:
        report = await maintain(svc, scope=scope, mode="apply", model=model, settings=settings)
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
    kept: dict[str, bool] = {}  # merge proposal id -> the survivor kept every flag of what it absorbed
    for p in merges:
        survivor = await svc.get(p.entries[0])
        want_i = any(planted.flags.get(e, (False, False))[0] for e in p.entries)
        want_m = any(planted.flags.get(e, (False, False))[1] for e in p.entries)
        demoted = survivor.content.important and not survivor.content.mandatory and want_m  # the audit's choice
        ok_m = survivor.content.mandatory or not want_m or demoted
        kept[p.proposal_id] = survivor.content.important >= want_i and ok_m
    heads = [await svc.resolve(s) for s in scopes]
    t1 = time.perf_counter()
    calls = writes = 0
    for scope, head in zip(scopes, heads, strict=True):
        again = await maintain(svc, scope=scope, mode="apply", model=model, settings=settings)
        calls += again.run.usage.model_calls
        writes += (await svc.resolve(scope)).revision - head.revision  # type: ignore[union-attr]
    second_s = time.perf_counter() - t1
    rows: list[dict[str, object]] = []
    for part in sorted({planted.half_of(e) for e in planted.flags}):
        mine = [p for p in merges if planted.half_of(*p.entries[:2]) == part]
        pairs = [(r, o) for r, o in planted.pairs if planted.half_of(r, o) == part]
        entries = [e for e in planted.flags if planted.half_of(e) == part]
        bare = sum(1 for e in entries if any(planted.flags[e]) and e not in active and not _merged(e, merges))
        preserved = sum(1 for p in mine if kept[p.proposal_id])
        rows.append(
            {
                "store": f"{name} {part}" if planted.part is None else name,
                "entries": len(entries),
                "planted restatements": len(pairs),
                "remaining after 1 APPLY": sum(1 for r, o in pairs if r in active and o in active),
                "merges": len(mine),
                "false merges": sum(1 for p in mine if len({root.get(e, e) for e in p.entries}) > 1),
                "flags preserved": f"{100 * preserved / len(mine):.0f}%" if mine else "n/a",
                "bare deletes of important/mandatory": bare,
                "proposals applied (store)": applied,
                "mandatory tier before -> after (store)": f"{tier_before} -> {tier_after} ({demotions} demoted)",
                "run 2: model calls (store)": calls,
                "run 2: writes (store)": writes,
                "run 1 s (store)": f"{first_s:.2f}",
                "run 2 s (store)": f"{second_s:.2f}",
            }
        )
    return rows


def _merged(entry: str, merges: list[Proposal]) -> bool:
    return any(entry in p.entries[1:] for p in merges)


STORES = {"capture": "capture", "capture-heldout": "capture-heldout", "seeded": None}


async def build(name: str, url: str, args: argparse.Namespace) -> Planted:
    """Write one store at ``url``: a capture data set (its directory's half) or the seeded set."""
    async with open_service(url, embedding=None) as svc:
        if name == "seeded":
            return await seeded_store(svc, args.size, args.seed)
        part = "dev" if name == "capture" else "held-out"
        return await capture_store(svc, Path(args.data if name == "capture" else args.heldout), part)


async def run_stores(
    names: list[str], model: EmbeddingModel | None, share: float | None, args: argparse.Namespace, tmp: Path
) -> list[dict[str, object]]:
    """Measure each store on a fresh copy of its built file (built once per process, in ``tmp``)."""
    settings = MaintenanceSettings(judges=JudgeSettings() if share is None else JudgeSettings(subject_share=share))
    rows = []
    for name in names:
        built = tmp / f"{name}.db"
        if name not in BUILT:
            BUILT[name] = await build(name, f"sqlite:///{built}", args)
        copy = tmp / f"{name}-run.db"
        for f in tmp.glob(f"{name}-run.db*"):
            f.unlink()
        for f in tmp.glob(f"{name}.db*"):  # the file and its WAL, if one is left
            shutil.copyfile(f, tmp / f.name.replace(f"{name}.db", f"{name}-run.db", 1))
        planted = BUILT[name]
        async with open_service(f"sqlite:///{copy}", embedding=None) as svc:
            rows += await measure(svc, name, planted, model, settings)
    return rows


BUILT: dict[str, Planted] = {}


async def fit(args: argparse.Namespace, model: EmbeddingModel | None, tmp: Path) -> list[dict[str, object]]:
    """Sweep the subject share over the dev halves only (capture dev projects, the seeded set's dev pairs)."""
    grid = [float(x) for x in args.fit.split(",")]
    modes: list[tuple[str, EmbeddingModel | None]] = [("none", None)] + ([(args.model, model)] if model else [])
    rows: list[dict[str, object]] = []
    dirty: set[float] = set()  # shares with a dev false merge
    for share in grid:
        for label, m in modes:
            for r in await run_stores(["capture", "seeded"], m, share, args, tmp):
                if not str(r["store"]).endswith("held-out"):
                    rows.append({"share": share, "model": label, **r})
                    if r["false merges"] != 0:
                        dirty.add(share)
    clean = [s for s in grid if not any(d >= s for d in dirty)]
    print(f"fitted subject share (dev halves only): {min(clean) if clean else 'none clean on this grid'}")
    return rows


async def main_async(args: argparse.Namespace) -> list[dict[str, object]]:
    model = None
    if args.model != "none":
        from memstone.embedding import load_model

        model = load_model(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        if args.fit:
            return await fit(args, model, Path(tmp))
        return await run_stores(list(STORES), model, args.share, args, Path(tmp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(HERE / "data" / "capture"), help="the dev capture *.jsonl directory")
    parser.add_argument("--heldout", default=str(HERE / "data" / "capture-heldout"), help="the held-out one")
    parser.add_argument("--size", type=int, default=1000, help="entries of the seeded store (about)")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--model", default="none", help="embedding profile for the paraphrase rule, or none")
    parser.add_argument("--share", type=float, default=None, help="the judge's subject share (default: the fitted)")
    parser.add_argument("--fit", default="", help="comma-separated subject shares to sweep on the dev halves")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    args = parser.parse_args()
    rows = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"model: {args.model}")
    if args.fit:
        keys = ["share", "model", "store", "planted restatements", "remaining after 1 APPLY", "merges", "false merges"]
        print("| " + " | ".join(keys) + " |")
        print("|" + "|".join("---" for _ in keys) + "|")
        for r in rows:
            print("| " + " | ".join(str(r[k]) for k in keys) + " |")
        return
    keys = list(rows[0])
    width = max(len(k) for k in keys)
    print(f"| {'':<{width}} | " + " | ".join(f"{r['store']:>17}" for r in rows) + " |")
    print(f"|{'-' * (width + 2)}|" + "|".join("-" * 19 for _ in rows) + "|")
    for k in keys[1:]:
        print(f"| {k:<{width}} | " + " | ".join(f"{r[k]!s:>17}" for r in rows) + " |")


if __name__ == "__main__":
    main()
