"""What a fuzzed call may do, the rule kept once for ``bench/bench_fuzz.py`` and the hypothesis tests in ``tests/fuzz``.

A call through any front end either succeeds or fails with the project's error: a ``MemstoneError`` whose
``code`` is one of the tree's codes (library); an error result carrying ``[code: …]`` (MCP); a 4xx (or a
documented 501) with a JSON error body naming a known code (HTTP); a documented exit code and never a traceback
(CLI). And it never changes what it did not name: canary entries, written before the fuzzing in a scope the
fuzzer never names, read back unchanged, and ``verify`` finds no damage. Each ``*_failure`` function returns None
for an allowed outcome and a one-line description of the failure otherwise.
"""

from __future__ import annotations

import json

from ..cli.errors import EXIT_CODES
from ..domain.errors import MemstoneError
from ..domain.model import EntryInput
from ..service import MemoryService

# Codes the HTTP layer adds for failures that happen before the service is called.
HTTP_EXTRA_CODES = frozenset({"method_not_allowed", "precondition_required"})
# 0 success; 1 a backend error or one no class maps; 2 also click's usage errors; the rest from cli/errors.py.
CLI_EXIT_CODES = frozenset({0, 1, 2, *(code for _, code in EXIT_CODES)})
CANARY_SCOPE = "memstone://orgs/canary/projects/kept"


def known_codes() -> frozenset[str]:
    """Every ``code`` of the ``MemstoneError`` tree (as imported so far), plus the HTTP layer's own."""
    codes: set[str] = set()
    todo: list[type[MemstoneError]] = [MemstoneError]
    while todo:
        cls = todo.pop()
        codes.add(str(cls.code))
        todo.extend(cls.__subclasses__())
    return frozenset(codes | HTTP_EXTRA_CODES)


def code_of_mcp_error(text: str) -> str | None:
    """The ``[code: …]`` an MCP error result ends with, or None."""
    return text.rsplit("[code: ", 1)[-1].split("]")[0] if "[code: " in text else None


def library_failure(exc: BaseException) -> str | None:
    """None when ``exc`` is the project's error with a known code, else what is wrong with it."""
    if not isinstance(exc, MemstoneError):
        return f"{type(exc).__name__} outside the MemstoneError tree: {exc!s:.300}"
    if exc.code not in known_codes():
        return f"unknown code {exc.code!r}: {exc!s:.300}"
    return None


def mcp_failure(is_error: bool, text: str) -> str | None:
    """None for a success or an error result carrying a known ``[code: …]``."""
    if not is_error:
        return None
    code = code_of_mcp_error(text)
    if code is None:
        return f"an error without the project's code: {text[:300]}"
    return None if code in known_codes() else f"unknown code {code!r}: {text[:300]}"


def _error_body_failure(text: str, what: str) -> str | None:
    """None when ``text`` is ``{"error": {"code": …}}`` with a known code, else what is wrong with it."""
    try:
        code = json.loads(text)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return f"{what} without the project's JSON error: {text[:200]!r}"
    return None if code in known_codes() else f"{what} with unknown code {code!r}"


def http_failure(status: int, body: str) -> str | None:
    """None for a 2xx/3xx, or a 4xx (or a documented 501) whose JSON error body names a known code."""
    if status >= 500 and status != 501:
        return f"HTTP {status}: {body[:300]}"
    return None if status < 400 else _error_body_failure(body, f"HTTP {status}")


def cli_failure(exit_code: int, stdout: str, stderr: str, *, as_json: bool) -> str | None:
    """None for a documented exit code with no traceback; with ``--json``, a failure other than click's usage
    errors must print ``{"error": {"code": …}}`` with a known code."""
    if "Traceback" in stderr or "Traceback" in stdout:
        return f"a traceback (exit {exit_code}): {stderr[-400:]}"
    if exit_code not in CLI_EXIT_CODES:
        return f"undocumented exit code {exit_code}: {stderr[-300:]}"
    if not as_json or exit_code == 0 or (exit_code == 2 and "Usage:" in stderr):
        return None
    return _error_body_failure(stdout, f"exit {exit_code} with --json ({stderr[-200:]!r})")


async def plant_canaries(svc: MemoryService, count: int = 20) -> dict[str, tuple[str, int]]:
    """Write ``count`` entries in :data:`CANARY_SCOPE`: entry id -> (text, version) they must keep."""
    kept: dict[str, tuple[str, int]] = {}
    for n in range(count):
        text = f"Canary fact {n} stays put."
        rev = await svc.remember(scope=CANARY_SCOPE, entries=[EntryInput(kind="fact", text=text)])
        assert rev is not None
        kept[rev.changes[0].entry_id] = (text, 1)
    return kept


async def changed_canaries(svc: MemoryService, kept: dict[str, tuple[str, int]]) -> list[str]:
    """The canaries of :func:`plant_canaries` that no longer read back as written."""
    changed: list[str] = []
    for entry_id, (text, version) in kept.items():
        now = await svc.get(entry_id)
        if (now.text, now.version) != (text, version):
            changed.append(f"canary {entry_id} changed: version {now.version}, {now.text!r:.80}")
    return changed


async def damage(svc: MemoryService, kept: dict[str, tuple[str, int]]) -> list[str]:
    """What a fuzz run broke: canaries that changed, and what ``verify`` reports; empty when nothing."""
    report = await svc.verify()
    reported = [f"verify: {d}" for d in (*report.authority_damage, *report.projection_damage)]
    return await changed_canaries(svc, kept) + (reported or ([] if report.ok else ["verify: not ok"]))


__all__ = [
    "CANARY_SCOPE",
    "CLI_EXIT_CODES",
    "HTTP_EXTRA_CODES",
    "changed_canaries",
    "cli_failure",
    "code_of_mcp_error",
    "damage",
    "http_failure",
    "known_codes",
    "library_failure",
    "mcp_failure",
    "plant_canaries",
]
