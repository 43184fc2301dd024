"""A plan's state changes (deactivate, reactivate): what each must name, and the state it leaves."""

import pytest

from memstone.domain.errors import InvalidInput
from memstone.domain.ids import EntryId, EntryVersionId, MemoryId
from memstone.domain.manifest import EMPTY_ROOT, ManifestReader
from memstone.domain.model import Change, ChangeOp, EntryState, ManifestEntry
from memstone.domain.plan import apply_plan
from memstone.ports import WritePlan

EID = EntryId("ent_000001")
VER = EntryVersionId("ver_000001_1")


def _apply(state: EntryState, op: ChangeOp, source: str | None, target: str | None) -> ManifestEntry:
    nodes: dict[str, bytes] = {}
    reader = ManifestReader(lambda h: nodes[h])
    root, new = reader.update(
        EMPTY_ROOT, {EID: ManifestEntry(entry_id=EID, entry_version_id=VER, entry_content_hash="0" * 64, state=state)}
    )
    nodes.update(new)
    change = Change(
        op=op,
        entry_id=EID,
        from_entry_version_id=None if source is None else EntryVersionId(source),
        to_entry_version_id=None if target is None else EntryVersionId(target),
    )
    plan = WritePlan(memory_id=MemoryId("mem_1"), base_revision=1, changes=(change,), new_versions=())
    applied = apply_plan(plan, root, reader, lambda v: 1)
    return applied.manifest[EID]


def test_deactivate_names_the_active_version_as_its_source_and_leaves_it_inactive() -> None:
    assert _apply("active", "deactivate", VER, None).state == "inactive"
    for state, source, target in (("inactive", VER, None), ("active", "ver_other", None), ("active", None, VER)):
        with pytest.raises(InvalidInput, match=f"deactivate of {EID} must name its current active version"):
            _apply(state, "deactivate", source, target)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"^deactivate has no target version$"):
        _apply("active", "deactivate", VER, VER)


def test_reactivate_names_the_inactive_version_as_its_target_and_leaves_it_active() -> None:
    assert _apply("inactive", "reactivate", None, VER).state == "active"
    for state, source, target in (("active", None, VER), ("inactive", None, "ver_other"), ("inactive", VER, None)):
        with pytest.raises(InvalidInput, match=f"reactivate of {EID} must name its current inactive version"):
            _apply(state, "reactivate", source, target)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"^reactivate has no source version$"):
        _apply("inactive", "reactivate", VER, VER)


def test_an_unknown_op_is_refused_by_name() -> None:
    with pytest.raises(InvalidInput, match="unknown change op 'erase'"):
        _apply("active", "erase", VER, None)  # type: ignore[arg-type]
