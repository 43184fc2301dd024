"""The secret detector line by line on labelled capture data: ``python bench/bench_secret_lines.py FILE.jsonl ...``.

For each line with a ``secrets`` field, whether :func:`memstone.domain.secrets.find_secrets` finds anything in its
text (a finding anywhere refuses the whole write, so this is what keeps the line's secrets out of memory), and for
each line with a ``not_secrets`` field (near misses: hashes, ids, placeholders, public keys), whether it finds
nothing. Prints both counts per file and per language, and with ``--show`` the lines it gets wrong. No store is
opened: this is the detector alone; ``bench/bench_capture.py`` measures the same lines through ``capture()``.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from memstone.domain.secrets import find_secrets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="labelled .jsonl files (bench/data/capture format)")
    parser.add_argument("--show", action="store_true", help="list the missed secrets and the refused near misses")
    args = parser.parse_args()
    counts: collections.Counter[str] = collections.Counter()
    wrong: list[str] = []
    for path in args.files:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            found = find_secrets(row["text"])
            lang = row.get("lang") or "en"
            tag = f"{path.stem}#{row['seq']} [{lang}]"
            for key in (path.stem, lang, "all"):
                if row.get("secrets"):
                    counts[f"{key} secret lines"] += 1
                    counts[f"{key} secret lines caught"] += bool(found)
                elif "not_secrets" in row:
                    counts[f"{key} clean lines"] += 1
                    counts[f"{key} clean lines refused"] += bool(found)
            if row.get("secrets") and not found:
                wrong.append(f"missed  {tag} {row['secrets']}  {row['text'][:100]!r}")
            elif "not_secrets" in row and not row.get("secrets") and found:
                wrong.append(f"refused {tag} {[str(f) for f in found]}  {row['text'][:100]!r}")
    keys = sorted({k.rsplit(" ", 3)[0] for k in counts if k.endswith("secret lines") or k.endswith("clean lines")})
    for key in keys:
        s, c = counts[f"{key} secret lines"], counts[f"{key} clean lines"]
        print(
            f"{key:12} secret lines caught {counts[f'{key} secret lines caught']}/{s}   "
            f"clean lines refused {counts[f'{key} clean lines refused']}/{c}"
        )
    if args.show:
        print("\n".join(wrong))


if __name__ == "__main__":
    main()
