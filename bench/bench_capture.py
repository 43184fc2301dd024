"""Capture benchmark: ``python bench/bench_capture.py [--data bench/data/capture] [--json out.json] [--cold 20]``.

Runs every labelled line of the dev part (``bench/data/capture/*.jsonl``) and of the held-out part
(``bench/data/capture-heldout/*.jsonl``: whole projects no rule is fitted on) through
:func:`memstone.capture.capture` (mode ``auto``, no model) into a fresh SQLite store per project, then prints,
for each part and per language (``lang`` of each line):

- precision and recall of capture against the labels (line level), and recall of explicit + correction lines;
- junk rate: entries created from lines labelled ``should_store: false``, as a share of all entries created;
- duplicates created: restatements (``duplicate_of``) that made a second entry, plus identical live texts;
- secrets stored: every secret string of the dataset searched in the raw bytes of the database (and its WAL)
  and in every Source the runs recorded (also re-scanned with the detector);
- corrections that revised the entry they correct (``revises``), false merges, kind and scope agreement;
- per-call latency p50/p95 of ``capture()`` in process; with ``--cold N`` also a fresh process per call
  (import + open store + one capture), which is what a hook pays.

The issue's targets (issue 16, on the held-out part): explicit + correction recall ≥ 95 %, junk rate ≤ 2 %, no
duplicate created, no secret stored, corrections revising their entry ≥ 90 %. Held-out misses are listed only
with ``--show-heldout``: nothing may be fitted on them.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import memstone
from memstone.capture import (
    CaptureResult,
    EventContext,
    Handoff,
    TurnStop,
    UserPrompt,
    Verification,
    capture,
    find_secrets,
)
from memstone.capture.events import TaskEvent
from memstone.capture.pipeline import CapturePipeline
from memstone.capture.vector_cache import VectorCache

HERE = Path(__file__).resolve().parent
TARGETS = {"junk_rate": 0.02, "explicit_correction_recall": 0.95}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def event_of(row: dict[str, object], project: str) -> TaskEvent:
    ctx = EventContext(agent="bench", session_id=f"{project}-session")
    text = str(row["text"])
    paths = tuple(str(p) for p in row.get("changed_paths", []) or [])  # type: ignore[attr-defined]
    checks = tuple(
        Verification(command=v["command"], outcome=v["outcome"])
        for v in row.get("verification", []) or []  # type: ignore[attr-defined]
    )
    if row["event"] == "turn_stop":
        return TurnStop(final_report=text, changed_paths=paths, verification=checks, context=ctx)
    if row["event"] == "handoff":
        return Handoff(summary=text, changed_paths=paths, verification=checks, context=ctx)
    return UserPrompt(text=text, context=ctx)


@dataclass
class LineResult:
    row: dict[str, object]
    result: CaptureResult
    seconds: float
    added: list[str] = field(default_factory=list)
    revised: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


async def run_project(
    path: Path,
    workdir: Path,
    model: str | None = None,
    *,
    vector_cache: bool = True,
    pipeline: CapturePipeline | None = None,
    junk_screen: bool = True,
) -> dict[str, object]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    project = rows[0]["project"]
    db = workdir / f"{project}.db"
    scope = f"memstone://orgs/bench/projects/{project}"
    lines: list[LineResult] = []
    # As the hook's capture child: the vectors of the Memory's entries kept between events (one cache per store).
    pipeline = pipeline or CapturePipeline(
        vector_cache=VectorCache() if vector_cache else None, junk_screen=junk_screen
    )
    async with memstone.open_service(f"sqlite:///{db}", embedding=model) as svc:
        for row in rows:
            event = event_of(row, project)
            t0 = time.perf_counter()
            result = await capture(svc, event, scope=scope, mode="auto", pipeline=pipeline)
            seconds = time.perf_counter() - t0
            lr = LineResult(row=row, result=result, seconds=seconds)
            for o in result.outcomes:
                if o.entry_id is None:
                    continue
                {"added": lr.added, "revised": lr.revised, "unchanged": lr.unchanged}.get(o.action, []).append(
                    o.entry_id
                )
            lines.append(lr)
        live: list[memstone.EntryVersion] = []
        for _, memory_id in await svc.scopes():
            live.extend(await svc.entries(memory_id))
        sources = [s for lr in lines for s in lr.result.sources]
        recorded = list(await svc.sources([s.source_id for s in sources])) if sources else []
    return {"project": project, "lines": lines, "live": live, "sources": recorded, "db": db}


def lang_of(row: dict[str, object]) -> str:
    return str(row.get("lang") or "en")


def evaluate(projects: list[dict[str, object]], lang: str | None = None) -> dict[str, object]:
    """The figures over every line, or over the lines of one language (``lang``)."""
    m: collections.Counter[str] = collections.Counter()
    by_class: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    latencies: list[float] = []
    misses: list[str] = []
    junk: list[str] = []
    dups: list[str] = []
    merges: list[str] = []
    leaks: list[str] = []
    unrevised: list[str] = []
    skip_reasons: collections.Counter[str] = collections.Counter()
    reject_reasons: collections.Counter[str] = collections.Counter()
    kind_ok = scope_ok = kind_n = 0
    for proj in projects:
        lines: list[LineResult] = proj["lines"]  # type: ignore[assignment]
        entry_of_seq: dict[int, set[str]] = {}
        text_of_seq = {int(lr.row["seq"]): str(lr.row["text"]) for lr in lines}  # type: ignore[arg-type]
        created_by: dict[str, LineResult] = {}
        for lr in lines:
            row, lab = lr.row, lr.row["label"]  # type: ignore[index]
            assert isinstance(lab, dict)
            seq = int(row["seq"])  # type: ignore[arg-type]
            cls = str(lab["class"])
            touched = set(lr.added) | set(lr.revised) | set(lr.unchanged)
            entry_of_seq[seq] = touched
            for eid in lr.added:
                created_by[eid] = lr
            if lang is not None and lang_of(row) != lang:
                continue
            latencies.append(lr.seconds)
            for s in lr.result.skipped:
                skip_reasons[s.reason] += 1
            for o in lr.result.outcomes:
                if o.action == "rejected" and o.reason:
                    reject_reasons[o.reason] += 1
            if lr.result.status == "refused":
                skip_reasons["secret (refused)"] += 1
            m["mandatory_added"] += sum(
                1 for o in lr.result.outcomes if o.action == "added" and o.candidate and o.candidate.mandatory
            )
            wrote = bool(lr.added or lr.revised)
            should = bool(lab["should_store"])
            dup_of, revises = lab.get("duplicate_of"), lab.get("revises")
            tag = f"{proj['project']}#{seq} [{cls}] {str(row['text'])[:90]!r}"
            by_class[cls]["lines"] += 1
            by_class[cls]["should_store"] += should
            by_class[cls]["wrote"] += wrote
            m["lines"] += 1
            m["should_store"] += should
            m["wrote"] += wrote
            m["tp"] += wrote and should
            m["fp"] += wrote and not should
            if wrote and not should:
                junk.append(tag)
            m["entries_created"] += len(lr.added)
            m["junk_entries"] += 0 if should else len(lr.added)
            # captured: the line's content is reflected in memory the way the label wants.
            if dup_of is not None:
                m["restatements"] += 1
                target = entry_of_seq.get(int(dup_of), set())
                if lr.added:
                    m["duplicates_created"] += 1
                    dups.append(f"{tag}\n      restates #{dup_of} {text_of_seq.get(int(dup_of), '?')[:90]!r}")
                    captured = True
                else:
                    captured = bool(target)  # revised/no-op onto it, or skipped while it is already in memory
                    if touched and not (touched & target):
                        merges.append(tag + " (onto a different entry)")
                    m["restatements_merged"] += bool(touched & target)
            elif revises is not None:
                m["corrections_of_entries"] += 1
                target = entry_of_seq.get(int(revises), set())
                captured = wrote
                if set(lr.revised) & target:
                    m["corrections_revised_target"] += 1
                else:
                    m["corrections_added_beside"] += bool(lr.added)
                    unrevised.append(f"{tag}\n      corrects #{revises} {text_of_seq.get(int(revises), '?')[:90]!r}")
            else:
                captured = bool(lr.added) or bool(lr.revised)
                if should and not captured and lr.unchanged:
                    merges.append(tag + " (taken for a duplicate)")
                if should and lr.revised and not lr.added:
                    merges.append(tag + " (merged into an existing entry)")
            if should:
                m["captured"] += captured
                by_class[cls]["captured"] += captured
                if cls in ("explicit", "correction"):
                    m["ec_lines"] += 1
                    m["ec_captured"] += captured
                if not captured:
                    misses.append(tag)
                for o in lr.result.outcomes:
                    if o.action == "added" and o.candidate is not None and dup_of is None:
                        kind_n += 1
                        kind_ok += o.candidate.kind == lab.get("kind")
                        scope_ok += o.candidate.scope == (lab.get("scope") or "project")
        # duplicates among the live entries of each Memory (identical texts)
        live: list[memstone.EntryVersion] = proj["live"]  # type: ignore[assignment]
        seen: collections.Counter[tuple[str, str]] = collections.Counter(
            (v.memory_id, " ".join(v.text.casefold().split())) for v in live
        )
        if lang is None:
            m["identical_live_texts"] += sum(n - 1 for n in seen.values() if n > 1)
        if lang is None:
            m["live_entries"] += len(live)
        # secrets: the raw bytes of the database files and every Source recorded
        db: Path = proj["db"]  # type: ignore[assignment]
        blobs = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*") if p.is_file())
        sources: list[memstone.Source] = proj["sources"]  # type: ignore[assignment]
        for lr in lines:
            if lang is not None and lang_of(lr.row) != lang:
                continue
            for secret in lr.row.get("secrets", []) or []:  # type: ignore[attr-defined]
                m["secret_strings"] += 1
                pieces = [secret] + [ln for ln in secret.splitlines() if len(ln) >= 12]
                where = []
                if any(p.encode("utf-8") in blobs for p in pieces):
                    where.append("database file bytes")
                where.extend(
                    f"Source {s.source_id}"
                    for s in sources
                    if any(p in s.content or p in (s.uri or "") for p in pieces)
                )
                if where:
                    leaks.append(f"{proj['project']}#{lr.row['seq']}: secret found in {', '.join(where)}")
        if lang is None:
            for s in sources:
                if find_secrets(s.content):
                    m["detector_hits_in_sources"] += 1
            m["sources_recorded"] += len(sources)
    precision = m["tp"] / (m["tp"] + m["fp"]) if m["tp"] + m["fp"] else 1.0
    recall = m["captured"] / m["should_store"] if m["should_store"] else 1.0
    return {
        "lines": m["lines"],
        "projects": len(projects),
        "precision": precision,
        "recall": recall,
        "explicit_correction_recall": m["ec_captured"] / m["ec_lines"] if m["ec_lines"] else 1.0,
        "explicit_correction_lines": m["ec_lines"],
        "junk_rate": m["junk_entries"] / m["entries_created"] if m["entries_created"] else 0.0,
        "junk_entries": m["junk_entries"],
        "entries_created": m["entries_created"],
        "junk_writes": m["fp"],
        "duplicates_created": m["duplicates_created"],
        "restatements": m["restatements"],
        "restatements_merged": m["restatements_merged"],
        "identical_live_texts": m["identical_live_texts"],
        "corrections_of_entries": m["corrections_of_entries"],
        "corrections_revised_target": m["corrections_revised_target"],
        "corrections_added_beside": m["corrections_added_beside"],
        "corrections_revised_rate": (
            m["corrections_revised_target"] / m["corrections_of_entries"] if m["corrections_of_entries"] else 1.0
        ),
        "mandatory_added": m["mandatory_added"],
        "secret_strings_checked": m["secret_strings"],
        "secrets_stored": len(leaks),
        "detector_hits_in_sources": m["detector_hits_in_sources"],
        "sources_recorded": m["sources_recorded"],
        "live_entries": m["live_entries"],
        "kind_agreement": kind_ok / kind_n if kind_n else 0.0,
        "scope_agreement": scope_ok / kind_n if kind_n else 0.0,
        "latency_ms_p50": pct(latencies, 0.50) * 1000,
        "latency_ms_p95": pct(latencies, 0.95) * 1000,
        "latency_ms_max": max(latencies) * 1000 if latencies else 0.0,
        "latency_ms_mean": statistics.fmean(latencies) * 1000 if latencies else 0.0,
        "by_class": {k: dict(v) for k, v in sorted(by_class.items())},
        "skip_reasons": dict(skip_reasons.most_common()),
        "reject_reasons": dict(reject_reasons.most_common()),
        "misses": misses,
        "junk": junk,
        "duplicates": dups,
        "merges": merges,
        "leaks": leaks,
        "unrevised": unrevised,
    }


COLD_SCRIPT = """
import asyncio, sys, time
t0 = time.perf_counter()
import memstone
from memstone.capture import UserPrompt, capture
async def main():
    async with memstone.open_service(sys.argv[1], embedding=None) as svc:
        r = await capture(svc, UserPrompt(text=sys.argv[2]), scope="memstone://orgs/bench/projects/cold")
    print(f"{time.perf_counter() - t0:.6f} {r.status}")
asyncio.run(main())
"""


def cold_latency(samples: int, rows: list[dict[str, object]], workdir: Path) -> dict[str, float]:
    url = f"sqlite:///{workdir / 'cold.db'}"
    walls: list[float] = []
    inner: list[float] = []
    for row in rows[:samples]:
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", COLD_SCRIPT, url, str(row["text"])], capture_output=True, text=True, check=True
        )
        walls.append(time.perf_counter() - t0)
        inner.append(float(out.stdout.split()[0]))
    return {
        "cold_samples": len(walls),
        "cold_wall_ms_p50": pct(walls, 0.5) * 1000,
        "cold_wall_ms_p95": pct(walls, 0.95) * 1000,
        "cold_inprocess_ms_p50": pct(inner, 0.5) * 1000,
        "cold_inprocess_ms_p95": pct(inner, 0.95) * 1000,
    }


def report(r: dict[str, object], *, verbose: bool, listing: bool = True) -> None:
    def f(key: str) -> str:
        v = r[key]
        return (
            f"{v:.1%}"
            if isinstance(v, float) and key.endswith(("rate", "precision", "recall", "agreement"))
            else str(v)
        )

    model = r.get("model", "none")
    print(f"capture benchmark: {r['lines']} lines, {r['projects']} projects, mode auto, model {model}\n")
    verbose = verbose and listing
    rows = [
        ("precision (lines that wrote / labelled should_store)", f("precision"), ""),
        ("recall (should_store lines reflected in memory)", f("recall"), ""),
        ("recall, explicit + correction lines",
         f"{f('explicit_correction_recall')} of {r['explicit_correction_lines']}", "target ≥ 95%"),
        ("junk rate (junk entries / entries created)", f"{f('junk_rate')} ({r['junk_entries']}/{r['entries_created']})",
         "target ≤ 2%"),
        ("junk writes (incl. revisions)", f("junk_writes"), ""),
        ("duplicates created", f"{r['duplicates_created']} of {r['restatements']} restatements; "
         f"{r['identical_live_texts']} identical live texts", "target 0"),
        ("restatements merged onto their entry", f("restatements_merged"), ""),
        ("corrections that revised the entry they correct",
         f"{r['corrections_revised_target']} of {r['corrections_of_entries']} "
         f"({r['corrections_added_beside']} added beside it)", "target ≥ 90%"),
        ("mandatory entries added", f"{r['mandatory_added']} of {r['entries_created']}", ""),
        ("secrets stored", f"{r['secrets_stored']} of {r['secret_strings_checked']} secret strings (searched in the "
         f"DB and WAL bytes and {r['sources_recorded']} Sources; detector hits in Sources: "
         f"{r['detector_hits_in_sources']})", "target 0"),
        ("kind agreement of added entries", f("kind_agreement"), ""),
        ("scope agreement of added entries", f("scope_agreement"), ""),
        ("capture() latency p50 / p95 / max", f"{r['latency_ms_p50']:.1f} / {r['latency_ms_p95']:.1f} / "
         f"{r['latency_ms_max']:.1f} ms", ""),
    ]  # fmt: skip
    if "cold_samples" in r:
        rows.append(
            (
                f"fresh process per call (n={r['cold_samples']}) p50 / p95",
                f"{r['cold_wall_ms_p50']:.0f} / {r['cold_wall_ms_p95']:.0f} ms wall "
                f"({r['cold_inprocess_ms_p50']:.0f} / {r['cold_inprocess_ms_p95']:.0f} ms import+open+capture)",
                "hook ≤ 300 ms",
            )
        )
    width = max(len(a) for a, _, _ in rows)
    for a, b, c in rows:
        print(f"  {a:<{width}}  {b}" + (f"   [{c}]" if c else ""))
    print("\nby class (lines / labelled store / wrote / captured):")
    by_class = r["by_class"]
    assert isinstance(by_class, dict)
    for cls, c in by_class.items():
        print(f"  {cls:<20} {c.get('lines', 0):>4} {c.get('should_store', 0):>5} {c.get('wrote', 0):>5} "
              f"{c.get('captured', 0):>5}")  # fmt: skip
    print(f"\nskipped: {r['skip_reasons']}\nrejected by admission: {r['reject_reasons']}")
    for key in ("misses", "junk", "duplicates", "merges", "unrevised", "leaks"):
        items = r[key]
        assert isinstance(items, list)
        if items and (verbose or (listing and key in ("junk", "duplicates", "leaks"))):
            print(f"\n{key} ({len(items)}):")
            for item in items:
                print(f"  {item}")
        elif items:
            print(f"\n{key}: {len(items)} ({'use -v to list' if listing else 'held out: --show-heldout lists them'})")


LANG_KEYS = (
    ("lines", "lines"),
    ("e+c recall", "explicit_correction_recall"),
    ("recall", "recall"),
    ("junk", "junk_rate"),
    ("dups", "duplicates_created"),
    ("secrets stored", "secrets_stored"),
    ("corr. revised", "corrections_revised_rate"),
)


def report_languages(by_lang: dict[str, dict[str, object]]) -> None:
    print("\nper language:")
    print("  " + "".join(f"{title:>16}" for title, _ in (("lang", ""), *LANG_KEYS)))
    for lang, r in by_lang.items():
        cells = [lang]
        for _, key in LANG_KEYS:
            v = r[key]
            if key == "explicit_correction_recall":
                cells.append(f"{v:.1%} of {r['explicit_correction_lines']}")
            elif key == "corrections_revised_rate":
                cells.append(f"{r['corrections_revised_target']}/{r['corrections_of_entries']}")
            elif key == "duplicates_created":
                cells.append(f"{v}/{r['restatements']}")
            elif key == "secrets_stored":
                cells.append(f"{v}/{r['secret_strings_checked']}")
            elif isinstance(v, float):
                cells.append(f"{v:.1%}")
            else:
                cells.append(str(v))
        print("  " + "".join(f"{c:>16}" for c in cells))


async def run_part(
    directory: Path, workdir: Path, model: str | None = None, *, vector_cache: bool = True, junk_screen: bool = True
) -> tuple[list[dict[str, object]], dict[str, object]]:
    files = sorted(directory.glob("*.jsonl"))
    if not files:
        raise SystemExit(f"no *.jsonl in {directory}")
    projects = [await run_project(f, workdir, model, vector_cache=vector_cache, junk_screen=junk_screen) for f in files]
    result = evaluate(projects)
    langs = sorted({lang_of(lr.row) for p in projects for lr in p["lines"]})  # type: ignore[attr-defined]
    result["by_lang"] = {lang: evaluate(projects, lang) for lang in langs}
    return projects, result


async def main_async(args: argparse.Namespace) -> dict[str, dict[str, object]]:
    parts = {"dev": Path(args.data)}
    if args.heldout and Path(args.heldout).is_dir():
        parts["held-out"] = Path(args.heldout)
    out: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="memstone-capture-bench-") as tmp:
        workdir = Path(tmp)
        for name, directory in parts.items():
            part_dir = workdir / name
            part_dir.mkdir()
            _, result = await run_part(
                directory,
                part_dir,
                args.model,
                vector_cache=not args.no_vector_cache,
                junk_screen=not args.no_junk_screen,
            )
            result["model"] = args.model or "none"
            out[name] = result
        if args.cold:
            files = sorted(Path(args.data).glob("*.jsonl"))
            rows = [json.loads(line) for f in files for line in f.read_text("utf-8").splitlines() if line.strip()]
            out["dev"].update(cold_latency(args.cold, [r for r in rows if r["role"] == "user"], workdir))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(HERE / "data" / "capture"), help="dev part: a directory of *.jsonl")
    parser.add_argument(
        "--heldout", default=str(HERE / "data" / "capture-heldout"), help="held-out part ('' to skip it)"
    )
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument(
        "--model", help="open the stores with this embedding profile (e.g. use-multilingual-v3); default none"
    )
    parser.add_argument("--cold", type=int, default=0, help="also time N fresh processes (hook-like)")
    parser.add_argument(
        "--no-vector-cache", action="store_true", help="re-embed the live entries on every event (the old path)"
    )
    parser.add_argument(
        "--no-junk-screen", action="store_true", help="with --model: the admission rules alone (no learned screen)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss and merge (dev part)")
    parser.add_argument(
        "--show-heldout", action="store_true", help="also list the held-out misses (never fit rules on them)"
    )
    args = parser.parse_args()
    results = asyncio.run(main_async(args))
    for name, result in results.items():
        print(f"=== {name} part ===")
        held = name == "held-out"
        report(result, verbose=args.verbose and (args.show_heldout or not held), listing=args.show_heldout or not held)
        by_lang = result["by_lang"]
        assert isinstance(by_lang, dict)
        report_languages(by_lang)
        print()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, ensure_ascii=False, default=str) + "\n", "utf-8")


if __name__ == "__main__":
    main()
