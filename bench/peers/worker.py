"""Subprocess worker: ``<venv python> worker.py <adapter>`` speaks JSON lines on stdin/stdout (stdlib only).

Request:  ``{"id": 1, "op": "search_many", "args": {...}}``
Response: ``{"id": 1, "ok": true, "result": ..., "cost": {"wall_s": ..., "peak_rss_mb": ...}}``
          ``{"id": 1, "ok": false, "error": "...", "not_run": true|false}``

Ops: ``hello`` (import the adapter; reports import time, modes, versions), ``setup``, ``write_many`` (one
write per note, each timed), ``write_bulk`` + ``finish_bulk``, ``embed_prefetch`` (embedding cache only, see
``embcache.py``), ``update_many`` (each timed), ``search_many``
(each query timed), ``prepare_search``, ``size``, ``close``. Latencies are measured here, in the process that
calls the library, so IPC never counts; each sample also records the process's CPU time
(``time.process_time``: all its threads, not its children), which a busy shared machine inflates far less than
wall time. Peak RSS is the kernel's high-water mark (VmHWM), reset before every op through
``/proc/self/clear_refs`` (``5``), so each op reports its own peak; where reset is impossible it is the
process's peak so far (``ru_maxrss``).

The real stdout is kept for the protocol; file descriptor 1 is pointed at stderr so that anything a library
prints can never corrupt the stream.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from base import Note, NotRun  # noqa: E402

_proto_fd = os.dup(1)
os.dup2(2, 1)
sys.stdout = sys.stderr
proto = os.fdopen(_proto_fd, "w", buffering=1)


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    adapter = sys.argv[1]
    system = None
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        rid, op, args = req.get("id"), req["op"], req.get("args", {})
        reset_peak()
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            if op == "hello":
                mod = importlib.import_module(f"sut_{adapter}")
                system = mod.System()
                result = {"modes": system.modes(), "info": system.info(), "pid": os.getpid()}
            elif system is None:
                raise RuntimeError("hello first")
            elif op == "setup":
                system.setup(args["workdir"], fresh=args.get("fresh", True))
                result = None
            elif op == "write_many":
                lat, cpu = [], []
                for n in args["notes"]:
                    t, c = time.perf_counter(), time.process_time()
                    system.write([Note(n[0], n[1])])
                    lat.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c)
                result = {"lat": lat, "cpu": cpu}
            elif op == "embed_prefetch":  # untimed by the harness: fill the embedding cache, stage the chunk
                result = system.embed_prefetch([Note(n[0], n[1]) for n in args["notes"]])
            elif op == "write_bulk":
                notes = [Note(n[0], n[1]) for n in args["notes"]]
                stage = system.bulk_stage
                if stage is None:
                    system.write_bulk(notes)
                    result = None
                else:  # the staged vectors are visible inside this call only
                    served = stage.served
                    stage.begin()
                    try:
                        system.write_bulk(notes)
                    finally:
                        stage.end()
                    result = {"vectors_from_cache": stage.served - served}
            elif op == "finish_bulk":
                system.finish_bulk()
                result = None
            elif op == "update_many":
                lat = []
                for key, text in args["updates"]:
                    t = time.perf_counter()
                    system.update(key, text)
                    lat.append(time.perf_counter() - t)
                result = {"lat": lat}
            elif op == "search_many":
                lat, cpu, ranked = [], [], []
                for q in args["queries"]:
                    t, c = time.perf_counter(), time.process_time()
                    hits = system.search(q, args["k"], args["mode"])
                    lat.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c)
                    ranked.append([list(h) for h in hits] if args.get("with_text") else [h[0] for h in hits])
                result = {"lat": lat, "cpu": cpu, "ranked": ranked}
            elif op == "prepare_search":
                result = system.prepare_search()
            elif op == "size":
                result = system.size_on_disk()
            elif op == "close":
                system.close()
                result = None
            elif op == "exit":
                proto.write(json.dumps({"id": rid, "ok": True, "result": None}) + "\n")
                return
            else:
                raise RuntimeError(f"unknown op {op}")
            cost = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "peak_rss_mb": peak_rss_mb()}
            proto.write(json.dumps({"id": rid, "ok": True, "result": result, "cost": cost}) + "\n")
        except NotRun as exc:
            proto.write(json.dumps({"id": rid, "ok": False, "not_run": True, "error": str(exc)}) + "\n")
        except Exception as exc:  # reported to the harness, which decides
            traceback.print_exc(file=sys.stderr)
            msg = f"{type(exc).__name__}: {exc}"
            proto.write(json.dumps({"id": rid, "ok": False, "not_run": False, "error": msg[:2000]}) + "\n")


if __name__ == "__main__":
    main()
