"""Reading the files an import names."""

from __future__ import annotations

from pathlib import Path

from ..domain.errors import InvalidInput


def read_utf8(path: Path) -> str:
    """The text of ``path``; a file that is not UTF-8 is refused, naming where its bytes stop being UTF-8."""
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


__all__ = ["read_utf8"]
