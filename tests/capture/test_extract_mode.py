"""``remember(mode="extract"|"auto")`` with evidence runs capture's pipeline, wired at the composition root.

Before, the service always raised CapabilityNotSupportedError for extract (issue 11, RFC acceptance). The
pipeline's candidates are untrusted: they pass the same validation, secret refusal and write path as entries.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone import open_service
from memstone.capture import CapturePipeline, UserPrompt
from memstone.capture.events import event_sources
from memstone.domain.errors import CapabilityNotSupportedError

SCOPE = "memstone://orgs/acme/projects/web"


async def test_extract_turns_a_recorded_prompt_into_entries_citing_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    async with open_service(url, embedding=None, candidates=CapturePipeline(working_notes=False)) as svc:
        (draft,) = event_sources(UserPrompt(text="Never commit generated files under site/; run `make docs` instead."))
        source = await svc.record_source(draft.kind, draft.content)
        rev = await svc.remember(None, sources=[source], scope=SCOPE, mode="auto")  # evidence only: extract
        assert rev is not None
        (entry,) = await svc.entries(rev)
        assert entry.content.kind == "constraint"
        assert "site/" in entry.content.text
        assert entry.content.sources == (source.source_id,)
        again = await svc.remember(rev, sources=[source], mode="extract")  # the same evidence again: no-op
        assert again is not None and again.revision == rev.revision


async def test_extract_without_a_pipeline_is_not_supported(tmp_path: Path) -> None:
    async with open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as svc:
        source = await svc.record_source("note", "We deploy with uv.")
        with pytest.raises(CapabilityNotSupportedError):
            await svc.remember(None, sources=[source], scope=SCOPE, mode="extract")
