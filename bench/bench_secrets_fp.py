"""False-positive check of the secret detector on real code and prose from the installed packages.

``python bench/bench_secrets_fp.py [--lines 20000] [--site DIR] [--show 25]``

Reads ``.py``, ``.pyi``, ``.md``, ``.rst``, ``.txt`` and ``METADATA`` files of the venv's site-packages from disk at
run time (nothing is copied into the repository), in a fixed order, in chunks of 40 lines (so rules that look at a
neighbouring keyword see the context they would see in a pasted message), until ``--lines`` lines are read. Then
prints the share of lines and chunks the detector would refuse, the findings per kind, and the most frequent
refused *shapes* (character classes and length) with an example each, so a reviewer can judge whether a hit is a
real credential in the package (test fixtures, documented example keys) or a false positive. The CPU time spent
in ``find_secrets`` alone is printed too (CPU, not wall clock, so that a shared machine's load moves it less).

Published packages hold no live secrets, so every hit is either a documented example key or a false positive;
either way it is what a developer pasting that code into a prompt would have refused.
"""

from __future__ import annotations

import argparse
import collections
import site
import sys
import sysconfig
import time
from pathlib import Path

from memstone.domain.secrets import find_secrets

SUFFIXES = (".py", ".pyi", ".md", ".rst", ".txt")
CHUNK = 40


def site_dir() -> Path:
    for candidate in [sysconfig.get_paths()["purelib"], *site.getsitepackages()]:
        if Path(candidate).is_dir():
            return Path(candidate)
    raise SystemExit("no site-packages directory found")


def files_of(root: Path) -> list[Path]:
    out = [
        p
        for p in root.rglob("*")
        if p.is_file() and (p.suffix in SUFFIXES or p.name == "METADATA") and "memstone" not in p.parts[-3:]
    ]
    return sorted(out, key=lambda p: (p.relative_to(root).parts[0].lower(), str(p)))


def shape(value: str) -> str:
    """A value's shape: runs of character classes with lengths, e.g. ``A1a9`` → ``Aa0`` classes and 40 chars."""
    classes = "".join(
        sorted({"a" if c.islower() else "A" if c.isupper() else "0" if c.isdigit() else "+" for c in value})
    )
    return f"{classes}×{len(value) // 8 * 8}+"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20000, help="how many lines to read (default 20,000)")
    parser.add_argument("--site", help="directory to read instead of the venv's site-packages")
    parser.add_argument("--show", type=int, default=20, help="how many refused shapes to list")
    parser.add_argument("--per-package", type=int, default=1500, help="at most this many lines per package")
    args = parser.parse_args()
    root = Path(args.site) if args.site else site_dir()
    lines_read = chunks = refused_chunks = refused_lines = 0
    kinds: collections.Counter[str] = collections.Counter()
    shapes: collections.Counter[tuple[str, str]] = collections.Counter()
    examples: dict[tuple[str, str], str] = {}
    per_package: collections.Counter[str] = collections.Counter()
    packages: set[str] = set()
    t0 = time.perf_counter()
    detector_seconds = 0.0
    for path in files_of(root):
        if lines_read >= args.lines:
            break
        package = path.relative_to(root).parts[0]
        if per_package[package] >= args.per_package:
            continue
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        lines = text.splitlines()[: args.per_package - per_package[package]]
        lines = lines[: args.lines - lines_read]
        per_package[package] += len(lines)
        packages.add(package)
        for i in range(0, len(lines), CHUNK):
            block = lines[i : i + CHUNK]
            chunk = "\n".join(block)
            lines_read += len(block)
            chunks += 1
            t1 = time.process_time()
            found = find_secrets(chunk)
            detector_seconds += time.process_time() - t1
            if not found:
                continue
            refused_chunks += 1
            hit_lines = {chunk.count("\n", 0, f.start) for f in found}
            refused_lines += len(hit_lines)
            for f in found:
                value = chunk[f.start : f.end]
                key = (f.kind, shape(value))
                kinds[f.kind] += 1
                shapes[key] += 1
                line_no = chunk.count("\n", 0, f.start)
                examples.setdefault(key, f"{path.relative_to(root)}:{i + line_no + 1}: {block[line_no].strip()[:110]}")
    seconds = time.perf_counter() - t0
    print(f"secret detector false-positive check: {lines_read:,} lines, {chunks:,} chunks of {CHUNK} lines, "
          f"{len(packages)} packages from {root} ({seconds:.1f} s)\n")  # fmt: skip
    line_rate = refused_lines / lines_read if lines_read else 0.0
    chunk_rate = refused_chunks / chunks if chunks else 0.0
    per_k = detector_seconds / lines_read * 1000 * 1000 if lines_read else 0.0
    print(f"  find_secrets CPU time:  {detector_seconds:.2f} s ({per_k:.1f} ms per 1,000 lines)")
    print(f"  lines with a finding:   {refused_lines} ({line_rate:.3%})")
    print(f"  chunks refused:         {refused_chunks} ({chunk_rate:.2%})")
    print(f"  findings by kind:       {dict(kinds.most_common())}")
    if shapes:
        print("\ntop refused shapes (kind, classes × length, count, first example):")
        for (kind, sh), n in shapes.most_common(args.show):
            print(f"  {kind:<24} {sh:<10} {n:>4}  {examples[(kind, sh)]}")
    if lines_read < args.lines:
        print(f"\nonly {lines_read} lines found under {root}", file=sys.stderr)


if __name__ == "__main__":
    main()
