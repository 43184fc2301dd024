"""What ``install`` does to one file, with a receipt so that ``--uninstall`` restores it byte for byte.

Before the first change to a file, its original bytes (or its absence) are kept in a receipt under
``~/.memstone/installs/``; when the file still holds exactly what we wrote, uninstall restores those bytes (or
removes the file and the folders we created). When someone edited the file since, only our part is taken out.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..domain.errors import InvalidInput

Action = Literal["created", "updated", "unchanged", "restored", "removed", "absent"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """What install or uninstall did to one file."""

    path: Path
    action: Action
    what: str

    def to_dict(self) -> dict[str, object]:
        return {"path": str(self.path), "action": self.action, "what": self.what}


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigFile:
    """One file an agent reads, and how to add, remove and detect our part of it."""

    path: Path
    what: str
    add: Callable[[str | None], str | None]
    remove: Callable[[str], str | None]
    present: Callable[[str], bool]


@dataclass(slots=True, kw_only=True)
class Receipt:
    """What a file was before our first change, and a hash of what we last wrote."""

    original: bytes | None
    written: str
    created_dirs: list[str] = field(default_factory=list)


def _receipt_path(receipts: Path, path: Path) -> Path:
    return receipts / (hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:24] + ".json")


def _read_receipt(receipts: Path, path: Path) -> Receipt | None:
    try:
        data = json.loads(_receipt_path(receipts, path).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    original = data.get("original")
    return Receipt(
        original=base64.b64decode(original) if isinstance(original, str) else None,
        written=str(data.get("written", "")),
        created_dirs=[str(d) for d in data.get("created_dirs", [])],
    )


def _write_receipt(receipts: Path, path: Path, receipt: Receipt) -> None:
    receipts.mkdir(parents=True, exist_ok=True)
    data = {
        "path": str(path),
        "original": base64.b64encode(receipt.original).decode("ascii") if receipt.original is not None else None,
        "written": receipt.written,
        "created_dirs": receipt.created_dirs,
    }
    _atomic_write(_receipt_path(receipts, path), json.dumps(data, indent=2).encode("utf-8"))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = None
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)


def _missing_dirs(path: Path) -> list[Path]:
    out = []
    for parent in path.parents:
        if parent.exists():
            break
        out.append(parent)
    return out


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def decode_text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text; nothing was changed") from exc


def install_file(cfg: ConfigFile, receipts: Path) -> FileChange:
    before = read_bytes(cfg.path)
    text = decode_text(before, cfg.path) if before is not None else None
    new = cfg.add(text)
    if new is None or (text is not None and new == text):
        return FileChange(path=cfg.path, action="unchanged", what=cfg.what)
    data = new.encode("utf-8")
    receipt = _read_receipt(receipts, cfg.path)
    created = [str(d) for d in _missing_dirs(cfg.path)]
    if receipt is None:
        receipt = Receipt(original=before, written=_sha(data), created_dirs=created)
    else:
        receipt.written = _sha(data)
        receipt.created_dirs.extend(d for d in created if d not in receipt.created_dirs)
    cfg.path.parent.mkdir(parents=True, exist_ok=True)
    _write_receipt(receipts, cfg.path, receipt)
    _atomic_write(cfg.path, data)
    return FileChange(path=cfg.path, action="created" if before is None else "updated", what=cfg.what)


def uninstall_file(cfg: ConfigFile, receipts: Path) -> FileChange:
    current = read_bytes(cfg.path)
    receipt = _read_receipt(receipts, cfg.path)
    receipt_file = _receipt_path(receipts, cfg.path)
    if current is None:
        receipt_file.unlink(missing_ok=True)
        return FileChange(path=cfg.path, action="absent", what=cfg.what)
    if receipt is not None and _sha(current) == receipt.written:
        # Trigger: the file holds exactly what install wrote. Why: uninstall must leave it as it was, byte for
        # byte. Outcome: restore the original bytes (or remove the file and the folders install created).
        if receipt.original is None:
            cfg.path.unlink()
            for d in receipt.created_dirs:
                try:
                    Path(d).rmdir()
                except OSError:
                    break
        else:
            _atomic_write(cfg.path, receipt.original)
        receipt_file.unlink(missing_ok=True)
        return FileChange(path=cfg.path, action="restored", what=cfg.what)
    text = decode_text(current, cfg.path)
    new = cfg.remove(text)
    receipt_file.unlink(missing_ok=True)
    if new == text:
        return FileChange(path=cfg.path, action="unchanged", what=cfg.what)
    if new is None:
        cfg.path.unlink()
    else:
        _atomic_write(cfg.path, new.encode("utf-8"))
    return FileChange(path=cfg.path, action="removed", what=cfg.what)


def receipts_dir(home: Path) -> Path:
    return home / ".memstone" / "installs"


__all__ = [
    "Action",
    "ConfigFile",
    "FileChange",
    "Receipt",
    "decode_text",
    "install_file",
    "read_bytes",
    "receipts_dir",
    "uninstall_file",
]
