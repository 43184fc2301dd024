"""The detached capture child opens the store with the store's own embedding model (issue 16), so a restatement
in other words revises the entry instead of becoming a second one; the hook itself stays model-free."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hook_helpers import payload

from memstone import EntryInput, open_service
from memstone.agents.hooks import finish_capture, run_hook
from memstone.agents.project import project_scope

RULE = "Background jobs must be safe to retry: a retried job may never send a second email."
# The same rule in other words: the lexical rules alone make it a second entry; MiniLM's nearness does not.
RESTATED = "Make sure a retried background job never emails anyone twice."
MINILM = "minilm-l6-int8"


def make_store(url: str, project: Path, embedding: str | None) -> str:
    scope = project_scope(project)
    assert scope is not None

    async def run() -> None:
        async with open_service(url, embedding=embedding) as svc:
            await svc.remember(None, scope=scope, entries=[EntryInput(kind="constraint", text=RULE)])

    asyncio.run(run())
    return scope


def entries(url: str, scope: str) -> list[str]:
    async def run() -> list[str]:
        async with open_service(url, embedding=None) as svc:
            return [r.text for r in await svc.list(scopes=[scope])]

    return asyncio.run(run())


def deferred_prompt(url: str, env: dict[str, str], project: Path, **more: str):  # type: ignore[no-untyped-def]
    body = json.dumps(payload("claude-code", "user-prompt-submit", cwd=project, prompt=RESTATED))
    result = run_hook("user-prompt-submit", "claude-code", body, url=url, env={**env, **more}, defer_capture=True)
    assert result.error is None and result.deferred is not None and result.captured is None
    return result


def test_the_child_uses_the_stores_model_and_revises_the_entry(
    store_url: str, env: dict[str, str], project: Path
) -> None:
    scope = make_store(store_url, project, MINILM)
    captured = finish_capture(deferred_prompt(store_url, env, project), with_model=True)
    assert captured is not None
    assert [o.action for o in captured.outcomes if o.entry_id] == ["revised"]
    assert len(entries(store_url, scope)) == 1


def test_without_the_model_the_same_prompt_adds_a_second_entry(
    store_url: str, env: dict[str, str], project: Path
) -> None:
    # What the child did before: the lexical rules alone. Also what MEMSTONE_EMBEDDING=none chooses.
    scope = make_store(store_url, project, MINILM)
    captured = finish_capture(deferred_prompt(store_url, env, project, MEMSTONE_EMBEDDING="none"), with_model=True)
    assert captured is not None
    assert [o.action for o in captured.outcomes if o.entry_id] == ["added"]
    assert len(entries(store_url, scope)) == 2


def test_a_store_without_a_recorded_model_gets_none_and_is_not_configured(
    store_url: str, env: dict[str, str], project: Path
) -> None:
    scope = make_store(store_url, project, None)
    captured = finish_capture(deferred_prompt(store_url, env, project), with_model=True)
    assert captured is not None and [o.action for o in captured.outcomes if o.entry_id] == ["added"]

    async def profile() -> object:
        async with open_service(store_url, embedding=None) as svc:
            return svc.backend.state.embedding_profile

    assert asyncio.run(profile()) is None  # a hook never records the default model on a store
    assert len(entries(store_url, scope)) == 2


def test_a_model_that_cannot_be_used_is_logged_and_the_capture_still_runs(
    store_url: str, env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    scope = make_store(store_url, project, MINILM)
    # hashing-64 is not the store's profile: opening with it is refused; the child captures without a model.
    captured = finish_capture(
        deferred_prompt(store_url, env, project, MEMSTONE_EMBEDDING="hashing-64"), with_model=True
    )
    assert captured is not None and [o.action for o in captured.outcomes if o.entry_id] == ["added"]
    assert len(entries(store_url, scope)) == 2
    log = (tmp_path / "store" / "hooks.log").read_text("utf-8")
    assert '"event": "open-model"' in log


def test_the_detached_child_of_the_cli_revises_the_entry(
    store_url: str, env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("the detached child needs fork")
    scope = make_store(store_url, project, MINILM)
    body = json.dumps(payload("claude-code", "user-prompt-submit", cwd=project, prompt=RESTATED))
    done = subprocess.run(
        [sys.executable, "-m", "memstone.cli.main", "hook", "user-prompt-submit", "--agent", "claude-code"],
        input=body,
        capture_output=True,
        text=True,
        env={**os.environ, **env, "MEMSTONE_URL": store_url},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr

    async def revisions() -> int:
        async with open_service(store_url, embedding=None) as svc:
            head = await svc.resolve(scope)
            assert head is not None
            return head.revision

    deadline = time.monotonic() + 60
    while asyncio.run(revisions()) < 2:  # the source of the prompt and the capture write one revision
        assert time.monotonic() < deadline, "the background capture wrote nothing"
        time.sleep(0.2)
    assert entries(store_url, scope) != [RULE] and len(entries(store_url, scope)) == 1


CHILD_SCRIPT = """
import json, os, sys
from pathlib import Path
from hook_helpers import payload
from memstone.agents.hooks import CHILD_NICENESS, finish_capture, run_hook
url, project, prompt = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
body = json.dumps(payload("claude-code", "user-prompt-submit", cwd=project, prompt=prompt))
result = run_hook("user-prompt-submit", "claude-code", body, url=url, env=dict(os.environ), defer_capture=True)
before = os.nice(0)
captured = finish_capture(result, niceness=CHILD_NICENESS)
print(json.dumps({"before": before, "after": os.nice(0), "actions": [o.action for o in captured.outcomes]}))
"""


def test_the_capture_of_the_detached_child_runs_at_a_lower_priority(
    store_url: str, env: dict[str, str], project: Path
) -> None:
    make_store(store_url, project, None)
    here = Path(__file__).resolve().parent
    done = subprocess.run(
        [sys.executable, "-c", CHILD_SCRIPT, store_url, str(project), "Deploys must never run on Fridays."],
        capture_output=True,
        text=True,
        env={**os.environ, **env, "MEMSTONE_URL": store_url, "PYTHONPATH": str(here)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["after"] == min(19, seen["before"] + 10)  # the capture ran niced, and still did its work
    assert "added" in seen["actions"]


def test_lowering_the_priority_by_nothing_keeps_it() -> None:
    from memstone.agents.hooks import lower_priority

    assert lower_priority(0) == os.nice(0)


def test_the_child_keeps_the_vectors_of_the_entries_beside_the_hook_log(
    store_url: str, env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    import sqlite3

    from memstone.agents.hooks import VECTOR_CACHE_FILE
    from memstone.capture.admission import semantic_key
    from memstone.capture.vector_cache import text_digest

    make_store(store_url, project, MINILM)
    finish_capture(deferred_prompt(store_url, env, project), with_model=True)
    cache = tmp_path / "store" / VECTOR_CACHE_FILE
    digests = {d for (d,) in sqlite3.connect(cache).execute("SELECT digest FROM capture_vectors")}
    assert text_digest(semantic_key(RULE)) in digests  # the next event's child reads it instead of embedding it
    assert oct(cache.stat().st_mode & 0o777) == "0o600"
