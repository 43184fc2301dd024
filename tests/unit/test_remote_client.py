"""The remote client's translation (issue 13): a server's error code back to the local error class; the server
URL checked; the token never printed by ``config show``."""

from __future__ import annotations

import pytest

from memstone.config import Config
from memstone.domain.errors import (
    BackendError,
    BackendUnavailable,
    Conflict,
    Forbidden,
    InvalidInput,
    MemstoneError,
    NotFound,
    RevisionConflictError,
    SecretRefusedError,
    Unauthenticated,
)
from memstone.remote import is_remote, server_base
from memstone.remote.client import decode_error


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        pytest.param(422, "secret_refused", SecretRefusedError, id="secret"),
        pytest.param(409, "revision_conflict", RevisionConflictError, id="stale"),
        pytest.param(404, "not_found", NotFound, id="not-found"),
        pytest.param(401, "unauthenticated", Unauthenticated, id="unauthenticated"),
        pytest.param(403, "forbidden", Forbidden, id="forbidden"),
        pytest.param(503, "store_migrating", BackendUnavailable, id="migrating"),
        pytest.param(428, "precondition_required", RevisionConflictError, id="precondition-is-a-stale-update"),
        pytest.param(422, "a_code_from_a_newer_server", InvalidInput, id="unknown-code-by-status"),
        pytest.param(502, None, BackendError, id="a-proxy-page"),
    ],
)
def test_a_server_error_decodes_to_the_local_class(status: int, code: str | None, cls: type[MemstoneError]) -> None:
    body = {"error": {"code": code, "message": "the server's words", "hint": "do this"}} if code else "<html>"
    error = decode_error(status, body)
    assert isinstance(error, cls)
    if code:
        assert (error.message, error.hint) == ("the server's words", "do this")
    if cls is InvalidInput or cls is SecretRefusedError:
        assert not isinstance(error, Conflict)


def test_every_code_of_the_tree_round_trips() -> None:
    pending: list[type[MemstoneError]] = [MemstoneError]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        decoded = decode_error(500, {"error": {"code": cls.code, "message": "m"}})
        assert decoded.code == cls.code, cls


def test_server_urls() -> None:
    assert is_remote("https://memory.example.com") and is_remote("HTTP://127.0.0.1:8765/")
    assert not is_remote("sqlite:///m.db") and not is_remote("postgresql://h/db") and not is_remote(None)
    assert server_base("https://memory.example.com:8443/team/") == "https://memory.example.com:8443/team"
    with pytest.raises(InvalidInput, match="MEMSTONE_TOKEN"):
        server_base("https://alice:secret@memory.example.com")


def test_config_show_masks_the_token() -> None:
    config = Config.load(env={"MEMSTONE_TOKEN": "mst_live_secret", "MEMSTONE_CONFIG": "/nonexistent.toml"})
    assert config.get("token") == "mst_live_secret"
    (row,) = [r for r in config.show() if r["name"] == "token"]
    assert row["value"] == "********" and row["source"] == "environment"
    assert "mst_live_secret" not in repr(config.show())
