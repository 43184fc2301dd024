"""Conformance for the record surface (issue 4): scopes, records, catalogues, Graphit search, precedence, recall,
history, relations and aliases, Markdown both ways, closed kinds and citations.

Mixed into :class:`memstone.testing.MemoryBackendConformance`, so every backend runs it unchanged. Tests that need a
second, empty store use the ``empty_store_url`` fixture (override it for a server backend).
"""

from __future__ import annotations

from .record_context import SearchContextConformance
from .record_fixtures import TickingClock, build_store_of_every_kind, content_hashes
from .record_markdown import MarkdownCitationConformance
from .record_scopes import ScopeRecordConformance
from .record_search import SearchHistoryConformance


class RecordsConformance(
    ScopeRecordConformance, SearchHistoryConformance, MarkdownCitationConformance, SearchContextConformance
):
    """The record-surface half of the conformance suite (needs the ``svc`` and ``store_url`` fixtures)."""


__all__ = ["RecordsConformance", "TickingClock", "build_store_of_every_kind", "content_hashes"]
