"""Validation matches the whole value: a trailing newline is not a valid slug, kind, id or scope (finding 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstone.cli.main import cli
from memstone.domain.errors import InvalidInput
from memstone.domain.ids import check_id
from memstone.domain.rules import normalize_relation_kind, normalize_slug
from memstone.domain.scopes import parse_scope


@pytest.mark.parametrize(
    "check",
    [
        lambda: normalize_slug("retry\n"),
        lambda: normalize_relation_kind("relates-to\n"),
        lambda: check_id("ent_01ABC\n", what="entry", prefix="ent_"),
        lambda: parse_scope("memstone://orgs/acme\n/projects/web"),
    ],
    ids=["slug", "relation-kind", "id", "scope-segment"],
)
def test_a_trailing_newline_is_refused(check: object) -> None:
    assert callable(check)
    with pytest.raises(InvalidInput):
        check()


def test_the_plain_values_still_pass() -> None:
    assert normalize_slug("retry") == "retry"
    assert normalize_relation_kind("relates-to") == "relates-to"
    assert check_id("ent_01ABC", what="entry", prefix="ent_") == "ent_01ABC"
    assert parse_scope("memstone://orgs/acme/projects/web").project == "web"


def test_two_live_entries_cannot_share_a_slug_through_a_newline(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"

    def remember(slug: str) -> object:
        args = ["--url", url, "remember", "--kind", "lesson", "--slug", slug, "--text", f"retry {slug!r}", "--json"]
        return CliRunner().invoke(cli, args, catch_exceptions=False)

    assert remember("retry").exit_code == 0
    second = remember("retry\n")
    assert second.exit_code == 2, second.output
    assert json.loads(second.stdout)["error"]["code"] == "invalid_input"
    listing = CliRunner().invoke(cli, ["--url", url, "list", "--json"], catch_exceptions=False)
    assert [e.get("slug") for e in json.loads(listing.stdout)["records"]] == ["retry"]
