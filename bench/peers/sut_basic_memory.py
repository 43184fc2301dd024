"""basic-memory (``basic-memory==0.24.1``, Python >= 3.12) with its local SQLite index, used as its docs say.

Each store is a fresh basic-memory home (``BASIC_MEMORY_HOME``, the default project ``main``) with its own
config/index directory (``BASIC_MEMORY_CONFIG_DIR``); basic-memory reads both at import, so the harness starts
one worker process per store. Notes are Markdown files (frontmatter ``title`` = the note key, body = the text).

- single write: the MCP tool ``write_note(title, content, directory="notes")``, called in-process (what an
  agent's MCP call runs, minus the JSON-RPC transport);
- bulk: the files are written into the project folder and indexed with ``bm reindex --search`` (its CLI, in a
  subprocess), the documented path for existing Markdown;
- update: ``edit_note(identifier, operation="find_replace", find_text=<old statement>, content=<new>)``;
- search: ``search_notes(query, search_type="text"|"vector"|"hybrid", page_size=k, output_format="json")``.
  Its vector and hybrid modes need SQLite extension loading in Python's ``sqlite3``; this machine's CPython
  build has none, and basic-memory says so and falls back to keyword-only: those modes are reported "not run".
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from importlib.metadata import version

from base import Note, NotRun, SystemUnderTest

FOLDER = "notes"


def _md(key: str, text: str) -> str:
    return f"---\ntitle: {key}\ntype: note\n---\n\n{text}\n"


class System(SystemUnderTest):
    name = "basic-memory"
    one_store_per_process = True

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.text_of: dict[str, str] = {}
        self.tools = None
        self.vector_error: str | None = None

    def modes(self) -> list[str]:
        return ["text", "vector", "hybrid"]

    def info(self) -> dict[str, object]:
        return {
            "basic-memory": version("basic-memory"),
            "python": sys.version.split()[0],
            "index": "SQLite FTS5 (local)",
        }

    def setup(self, workdir: str, fresh: bool = True) -> None:
        self.workdir = workdir
        self.home = os.path.join(workdir, "home")
        self.cfg = os.path.join(workdir, "config")
        os.makedirs(os.path.join(self.home, FOLDER), exist_ok=True)
        os.makedirs(self.cfg, exist_ok=True)
        os.environ["BASIC_MEMORY_HOME"] = self.home
        os.environ["BASIC_MEMORY_CONFIG_DIR"] = self.cfg
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("LOGFIRE_IGNORE_NO_CONFIG", "1")
        os.environ.setdefault("BASIC_MEMORY_NO_PROMOS", "1")
        from basic_memory.config import init_mcp_logging
        from basic_memory.mcp.tools import edit_note, search_notes, write_note

        init_mcp_logging()  # what `basic-memory mcp` sets up: INFO to a log file in the config dir, not stderr

        self.tools = (write_note, edit_note, search_notes)

    def _run(self, coro):
        return self.loop.run_until_complete(coro)

    def write(self, notes: list[Note]) -> None:
        write_note = self.tools[0]
        for n in notes:
            r = self._run(write_note(title=n.key, content=n.text, directory=FOLDER, output_format="json"))
            if isinstance(r, str) and "rror" in r[:200]:
                raise RuntimeError(r[:300])
            self.text_of[n.key] = n.text

    def write_bulk(self, notes: list[Note]) -> None:
        folder = os.path.join(self.home, FOLDER)
        for n in notes:
            with open(os.path.join(folder, f"{n.key}.md"), "w", encoding="utf-8") as fh:
                fh.write(_md(n.key, n.text))
            self.text_of[n.key] = n.text

    def finish_bulk(self) -> None:
        bm = os.path.join(os.path.dirname(sys.executable), "bm")
        proc = subprocess.run([bm, "reindex", "--search"], env=os.environ.copy(), capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"bm reindex failed: {proc.stderr[-500:]}")

    def update(self, key: str, new_text: str) -> None:
        edit_note = self.tools[1]
        r = self._run(
            edit_note(
                identifier=f"{FOLDER}/{key}",
                operation="find_replace",
                find_text=self.text_of[key],
                content=new_text,
                output_format="json",
            )
        )
        if isinstance(r, str) and "rror" in r[:200]:
            raise RuntimeError(r[:300])
        self.text_of[key] = new_text

    def search(self, query: str, k: int, mode: str) -> list[tuple[str, str]]:
        search_notes = self.tools[2]
        r = self._run(search_notes(query=query, search_type=mode, page_size=k, output_format="json"))
        if isinstance(r, str):
            if mode != "text" and "extension loading" in r:
                raise NotRun(
                    f"{mode}: basic-memory's own message: SQLite extension loading unavailable in this "
                    "CPython build (no sqlite3 enable_load_extension), keyword-only fallback"
                )
            if "Search Failed" in r[:100]:
                return []
            raise RuntimeError(r[:300])
        out = []
        for item in r.get("results", []):
            path = item.get("file_path") or ""
            key = os.path.splitext(os.path.basename(path))[0] if path else item.get("title", "")
            out.append((key, item.get("content", "")))
        return out
