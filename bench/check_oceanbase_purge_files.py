"""What a purge leaves in seekdb's (OceanBase's) files (issue 12): grep the data directory before and after a purge
and its major compaction, and check that the compaction ran.

    nice .venv/bin/python bench/check_oceanbase_purge_files.py [--wait 180]

Starts a private seekdb (memstone.testing.servers.seekdb_server), writes an entry holding a rare word, forces its
rows out of the memtable (``ALTER SYSTEM MINOR FREEZE``), purges the entry (which asks for ``ALTER SYSTEM MAJOR
FREEZE``), then polls ``oceanbase.DBA_OB_MAJOR_COMPACTION`` until the compaction of that freeze finished
(``STATUS = 'IDLE'`` and ``LAST_SCN = FROZEN_SCN``), and prints, per file of the data directory (``data_dir`` is
``store``, the redo log ``store/redo``), how many times the word occurs: before the purge, right after it, and after
the compaction. A row query confirms that no table row holds the word any more. This is a script, not a test: the
compaction is asynchronous and its duration depends on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import pymysql

from memstone import EntryInput, open_service
from memstone.testing import servers

WORD = b"qzxwvobfile"
SCOPE = "memstone://orgs/acme/projects/web"


def data_dir() -> Path:
    """This process's seekdb folder (the one whose owner file names this pid)."""
    for folder in Path(tempfile.gettempdir()).glob("memstone-seekdb-*"):
        owner = folder / "owner.pid"
        if owner.exists() and owner.read_text("ascii").strip() == str(os.getpid()):
            return folder / "db"
    raise SystemExit("the seekdb folder of this process was not found")


def occurrences(root: Path) -> dict[str, int]:
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            try:
                count = path.read_bytes().lower().count(WORD)
            except OSError:
                continue
            if count:
                found[str(path.relative_to(root))] = count
    return found


def compaction(cur: pymysql.cursors.Cursor) -> tuple[str, int, int]:
    cur.execute("SELECT STATUS, FROZEN_SCN, LAST_SCN FROM oceanbase.DBA_OB_MAJOR_COMPACTION")
    status, frozen, last = cur.fetchone()
    return str(status), int(frozen), int(last)


def rows_with_word(cur: pymysql.cursors.Cursor) -> int:
    cur.execute("SHOW TABLES")
    hits = 0
    for (table,) in cur.fetchall():
        cur.execute(f"SELECT * FROM `{table}`")
        hits += sum(WORD.decode() in " ".join(str(v) for v in row).lower() for row in cur.fetchall())
    return hits


async def run(wait_s: float) -> None:
    with servers.seekdb_server() as server, servers.oceanbase_database(server) as url:
        root = data_dir()
        conn = pymysql.connect(autocommit=True, **servers.oceanbase_connect_args(url))
        cur = conn.cursor()
        async with open_service(url, embedding=None, author="bench") as svc:
            rev = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="Card 4111 of Qzxwvobfile.")])
            assert rev is not None
            cur.execute("ALTER SYSTEM MINOR FREEZE")  # the rows reach the SSTables, as on a store that ran a while
            time.sleep(5)
            print("before the purge:", occurrences(root), flush=True)
            _, frozen_before, _ = compaction(cur)
            started = time.monotonic()
            report = await svc.purge(rev.changes[0].entry_id, reason="bench")
            print(f"purge: {len(report.tombstones)} version(s) in {time.monotonic() - started:.2f} s")
            print("right after the purge:", occurrences(root), flush=True)
            status, frozen, last = compaction(cur)
            while time.monotonic() - started < wait_s and not (
                status == "IDLE" and frozen > frozen_before and last == frozen
            ):
                time.sleep(2)
                status, frozen, last = compaction(cur)
            done = status == "IDLE" and frozen > frozen_before and last == frozen
            print(f"major compaction finished: {done} after {time.monotonic() - started:.1f} s "
                  f"(status {status}, frozen_scn {frozen}, last_scn {last})")  # fmt: skip
            print("after the compaction:", occurrences(root))
            print("table rows holding the word:", rows_with_word(cur))
            print("verify clean:", (await svc.verify()).ok)
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=180.0, help="seconds to wait for the major compaction")
    asyncio.run(run(parser.parse_args().wait))


if __name__ == "__main__":
    main()
