"""docs/cli.md stays complete: a section per command, every option named in it, the exit-code table exact."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

import memstone.domain.errors as errors
from memstone.cli.errors import exit_code
from memstone.cli.main import cli

CLI_DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def sections(markdown: str) -> dict[str, str]:
    """``## <heading>`` → the text up to the next ``## `` heading."""
    parts = re.split(r"^## (.+)$", markdown, flags=re.MULTILINE)
    return {heading.strip(): body for heading, body in zip(parts[1::2], parts[2::2], strict=True)}


def long_flags(command: click.Command) -> list[str]:
    flags: list[str] = []
    for param in command.params:
        if isinstance(param, click.Option):
            flags.extend(f for f in (*param.opts, *param.secondary_opts) if f.startswith("--"))
    return flags


def mentions(text: str, flag: str) -> bool:
    # "--memory" must not count as mentioned because "--memory-x" is; a flag ends at a non-flag character.
    return re.search(re.escape(flag) + r"(?![\w-])", text) is not None


def all_commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    """Every command by its full name; a group's subcommands as ``"group sub"`` (``token create``)."""
    out: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        out[prefix + name] = command
        if isinstance(command, click.Group):
            out.update(all_commands(command, prefix + name + " "))
    return out


DOC = sections(CLI_DOC.read_text("utf-8"))
BY_NAME = all_commands(cli)
COMMANDS = sorted(BY_NAME)


def test_every_section_documents_a_real_command() -> None:
    documented = {h.removeprefix("memstone ") for h in DOC if h.startswith("memstone ")}
    assert documented == set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_a_section_with_an_example_and_exit_codes(name: str) -> None:
    body = DOC.get(f"memstone {name}")
    assert body is not None, f"docs/cli.md has no '## memstone {name}' section"
    assert "```console" in body, f"the {name} section has no example"
    assert "Exit codes:" in body, f"the {name} section does not list its exit codes"


@pytest.mark.parametrize(
    ("name", "flag"), [pytest.param(n, f, id=f"{n} {f}") for n in COMMANDS for f in long_flags(BY_NAME[n])]
)
def test_every_command_option_is_in_its_section(name: str, flag: str) -> None:
    assert mentions(DOC.get(f"memstone {name}", ""), flag), f"'## memstone {name}' does not mention {flag}"


@pytest.mark.parametrize("flag", [*long_flags(cli), "--help"])
def test_every_global_option_is_documented(flag: str) -> None:
    assert mentions(DOC["Global options"], flag)


def error_classes() -> list[type[errors.MemstoneError]]:
    found, todo = [], [errors.MemstoneError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in found if c is not errors.MemstoneError]


@pytest.mark.parametrize("cls", [pytest.param(c, id=c.__name__) for c in error_classes()])
def test_the_exit_code_table_lists_every_error_code_in_the_right_row(cls: type[errors.MemstoneError]) -> None:
    rows = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r"^\| (\d) \|(.*)\|$", DOC["Output and exit codes"], flags=re.MULTILINE)
    }
    code = exit_code(cls.__new__(cls))
    assert code in rows, f"exit {code} is missing from the table"
    assert f"`{cls.code}`" in rows[code], f"{cls.code} is not listed under exit {code}"
