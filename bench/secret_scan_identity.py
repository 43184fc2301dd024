"""Check that ``find_secrets`` returns identical findings to a git ref's detector on a large corpus.

``python bench/secret_scan_identity.py [--ref main] [--lines 20000] [--instructions]``

With ``--instructions`` it compares nothing: it runs only the ``find_secrets`` on PYTHONPATH over the corpus with
callgrind's instrumentation on around the scans (run it under ``valgrind --tool=callgrind --instr-atstart=no``;
``callgrind_annotate`` PROGRAM TOTALS is then the detector's instructions over the corpus).

The ref's four secret modules are loaded from ``git show REF:path`` into a temporary package, then both detectors
run on: every text of bench/data/capture/*.jsonl (dev only), the installed packages' sources and docs in chunks
of 40 lines (bench/bench_secrets_fp.py's corpus), every string literal of the tests that mention secrets, and
each of those strings embedded in prose, at the start and end of a text, in code and in a .env line. Prints the
counts and every text whose findings (kinds and spans) differ; exits 1 on a difference.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from bench_secrets_fp import CHUNK, files_of, site_dir
from search_instructions import START_INSTRUMENTATION, STOP_INSTRUMENTATION, _request

from memstone.domain.secrets import find_secrets

ROOT = Path(__file__).resolve().parents[1]
MODULES = (
    *("secrets", "secret_formats", "secret_generic", "secret_context", "secret_named", "secret_clause", "analyzer"),
    "regex_gate",  # from secgate on; a ref without it does not import it
    "secret_shape",  # from capsec7 on; the same
)
DATA = ("bip39-english.txt",)  # domain/data files a module reads beside itself


def ref_detector(ref: str, tmp: Path) -> Callable[[str], object]:
    """``find_secrets`` of ``ref``, imported from a temporary package holding the ref's domain modules."""
    pkg = tmp / "refsecrets"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in MODULES:
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:src/memstone/domain/{name}.py"],
            check=name not in ("regex_gate", "secret_shape"),
            capture_output=True,
            text=True,
        )
        if shown.returncode == 0:
            (pkg / f"{name}.py").write_text(shown.stdout)
    (pkg / "data").mkdir()
    for name in DATA:
        data = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:src/memstone/domain/data/{name}"], check=True, capture_output=True
        ).stdout
        (pkg / "data" / name).write_bytes(data)
    sys.path.insert(0, str(tmp))
    module = importlib.import_module("refsecrets.secrets")
    return module.find_secrets  # type: ignore[no-any-return]


def capture_texts() -> Iterator[str]:
    for path in sorted((ROOT / "bench" / "data" / "capture").glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                yield json.loads(line)["text"]


def package_chunks(limit: int) -> Iterator[str]:
    read = 0
    for path in files_of(site_dir()):
        if read >= limit:
            return
        try:
            lines = path.read_text("utf-8").splitlines()[:1500]
        except (UnicodeDecodeError, OSError):
            continue
        for i in range(0, len(lines), CHUNK):
            read += len(lines[i : i + CHUNK])
            yield "\n".join(lines[i : i + CHUNK])


def test_strings() -> list[str]:
    out: list[str] = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        source = path.read_text("utf-8")
        if "secret" not in source.lower():
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 4:
                out.append(node.value)
    return list(dict.fromkeys(out))


def variants(value: str) -> Iterator[str]:
    yield value
    yield f"{value} was pasted by the user in the chat."
    yield f"Note for later: the deploy uses {value}"
    yield f"We talked about the release; {value}; then lunch.\n\nNext paragraph about nothing."
    yield f'config = {{"value": "{value}"}}\nprint(config)'
    yield f"export VALUE={value}"
    yield value.upper()
    yield value.lower()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main", help="git ref whose detector is the reference (default main)")
    parser.add_argument("--lines", type=int, default=20000, help="lines of installed packages to read")
    parser.add_argument("--instructions", action="store_true", help="only scan, instrumented for callgrind")
    args = parser.parse_args()
    if args.instructions:
        texts = [*capture_texts(), *package_chunks(args.lines), *(v for s in test_strings() for v in variants(s))]
        request = _request()
        request(START_INSTRUMENTATION)
        for text in texts:
            find_secrets(text)
        request(STOP_INSTRUMENTATION)
        print(f"{len(texts)} texts scanned")
        return
    with tempfile.TemporaryDirectory() as tmp:
        reference = ref_detector(args.ref, Path(tmp))
        groups = {
            "capture texts": list(capture_texts()),
            "package chunks": list(package_chunks(args.lines)),
            "test strings and variants": [v for s in test_strings() for v in variants(s)],
        }
        differ = 0
        for label, texts in groups.items():
            t0 = time.process_time()
            findings = 0
            for text in texts:
                new, old = find_secrets(text), reference(text)
                findings += len(new)
                if [f.to_dict() for f in new] != [f.to_dict() for f in old]:  # type: ignore[attr-defined]
                    differ += 1
                    print(f"DIFFERENT in {label}: {text[:120]!r}\n  new {new}\n  old {old}")
            print(f"{label}: {len(texts)} texts, {findings} findings, CPU {time.process_time() - t0:.1f} s")
        print(f"texts with different findings: {differ}")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
