"""The ``/api`` operations: thin handlers over :class:`MemoryService`, each with the access rule it applies.

Scopes are addressed by ``?scope=`` (URI or path form; default: the caller's own scope), entries by id
(``/api/memories/{entry_id}``: the server finds the entry's scope and checks it). Every listing is a page with
a hard upper bound; catalogue pages read one exact Revision, so paging is consistent while others write.
The handlers live in ``reads.py`` and ``writes.py`` (their shared shapes in ``convert.py``); this module is the
table that routes them and drives the OpenAPI document.
"""

from __future__ import annotations

from . import schemas as s
from .reads import (
    blame,
    catalogue,
    changes,
    diff,
    export,
    history,
    lookup,
    read_entry,
    read_version,
    recall,
    revision,
    scopes,
    search,
    session,
    source,
)
from .routing import Operation, Param
from .writes import create, flag, relate, rename, revert, state_action, unrelate, update

ENTRY = Param("entry_id", "path", {"type": "string", "pattern": s.ENTRY_ID}, "An entry id (ent_…).")
VERSION = Param("version", "path", {"type": "string", "pattern": s.VERSION_REF}, "A version number or ver_ id.")
REVISION = Param("revision", "path", {"type": "string", "pattern": s.REVISION_REF}, "head or a Revision number.")
IF_MATCH = Param(
    "If-Match",
    "header",
    {"type": "string", "maxLength": 200},
    'The ETag you read (`"ver_…"`), a record revision, or `*`. Send it or the body\'s `revision`, not both '
    "(both: 422).",
    False,
)

READ_SCOPE = "read on the scope (?scope=, default your own)"
READ_ENTRY = "read on the entry's scope; an entry you cannot read is 404"
WRITE_ENTRY = "write on the entry's scope (read-only: 403; unreadable: 404)"


# ---------------------------------------------------------------------------------------------- the table
ENTRY_ERRORS = (401, 403, 404, 422)
WRITE_ERRORS = (401, 403, 404, 409, 422)


def operations() -> list[Operation]:
    """Every /api operation, in routing order (fixed paths before /api/memories/{entry_id})."""
    return [
        Operation("GET", "/api/session", "getSession", "Who you are, the mode and your default scope",
                  "any authenticated caller", session, response=s.SessionOut, errors=(401,), tags=("session",)),
        Operation("GET", "/api/memories/scopes", "listScopes", "The scopes you can read",
                  "lists only scopes you hold a permission on", scopes, response=s.ScopesOut, errors=(401,)),
        Operation("GET", "/api/memories", "listMemories", "The catalogue of a scope (filtered, paged)",
                  READ_SCOPE, catalogue, query=s.CatalogueQuery, response=s.CatalogueOut, errors=(401, 403, 422)),
        Operation("POST", "/api/memories", "createMemory", "Remember a new entry in a scope",
                  "write on the scope; the owner is the URL's scope, the author your principal (owner fields in the "
                  "body are refused)", create, query=s.ScopeQuery, body=s.EntryCreate, success=201,
                  response=s.WriteOut, errors=(401, 403, 404, 409, 422, 501),
                  extra_responses={200: ("Already live: nothing was written; the existing record.", s.WriteOut)}),
        Operation("GET", "/api/memories/search", "searchMemories", "Search scopes (fts, vector, hybrid or auto)",
                  "read on every scope searched", search, query=s.SearchQuery, response=s.SearchOut,
                  errors=(401, 403, 422, 501)),
        Operation("GET", "/api/memories/recall", "recallMemories", "Session start: mandatory entries + context",
                  "read on every scope", recall, query=s.RecallQuery, response=s.RecallOut,
                  errors=(401, 403, 422, 501)),
        Operation("GET", "/api/memories/lookup", "lookupMemory", "The entry a (scope, kind, slug) names",
                  READ_SCOPE, lookup, query=s.LookupQuery, response=s.EntryOut),
        Operation("GET", "/api/memories/changes", "listChanges", "What each Revision changed (paged)",
                  READ_SCOPE, changes, query=s.ChangesQuery, response=s.ChangesOut, errors=(401, 403, 404, 422)),
        Operation("GET", "/api/memories/revisions/{revision}", "getRevision", "One exact Revision of a scope",
                  READ_SCOPE, revision, query=s.RevisionQuery, params=(REVISION,), response=s.RevisionOut),
        Operation("GET", "/api/memories/export", "exportMemories", "The scope in the Xema layout, as a zip",
                  READ_SCOPE, export, query=s.ExportQuery, response="application/zip"),
        Operation("GET", "/api/memories/{entry_id}", "getMemory", "An entry's current record (or at a Revision)",
                  READ_ENTRY, read_entry, query=s.EntryQuery, params=(ENTRY,), response=s.EntryOut),
        Operation("PATCH", "/api/memories/{entry_id}", "updateMemory", "Revise an entry (CAS on its revision)",
                  WRITE_ENTRY, update, body=s.EntryPatch, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=(*WRITE_ERRORS, 428)),
        Operation("GET", "/api/memories/{entry_id}/versions", "listVersions", "The entry's revision chain (paged)",
                  READ_ENTRY, history, query=s.PageQuery, params=(ENTRY,), response=s.HistoryOut),
        Operation("GET", "/api/memories/{entry_id}/versions/{version}", "getVersion", "One exact version",
                  READ_ENTRY, read_version, params=(ENTRY, VERSION), response=s.VersionOut),
        Operation("GET", "/api/memories/{entry_id}/source", "getSource", "Markdown with YAML frontmatter",
                  READ_ENTRY, source, query=s.SourceQuery, params=(ENTRY,), response="text/markdown"),
        Operation("GET", "/api/memories/{entry_id}/diff", "diffVersions", "Field-level diff of two versions",
                  READ_ENTRY, diff, query=s.DiffQuery, params=(ENTRY,), response=s.DiffOut),
        Operation("GET", "/api/memories/{entry_id}/blame", "blameMemory", "Who last changed each field",
                  READ_ENTRY, blame, params=(ENTRY,), response=s.BlameOut),
        Operation("POST", "/api/memories/{entry_id}/flag", "flagMemory", "Set or clear important / mandatory",
                  WRITE_ENTRY, flag, body=s.FlagIn, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/relations", "relateMemory", "Link the entry to another",
                  WRITE_ENTRY + "; read on the target", relate, body=s.RelateIn, params=(ENTRY, IF_MATCH),
                  response=s.WriteOut, errors=WRITE_ERRORS),
        Operation("DELETE", "/api/memories/{entry_id}/relations", "unrelateMemory", "Remove a link",
                  WRITE_ENTRY, unrelate, query=s.UnrelateQuery, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/rename", "renameMemory", "Change the slug (old one redirects)",
                  WRITE_ENTRY, rename, body=s.RenameIn, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/revert", "revertMemory", "Restore an old version as a new one",
                  WRITE_ENTRY, revert, body=s.RevertIn, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/forget", "forgetMemory", "Remove: mark inactive (history kept)",
                  WRITE_ENTRY, state_action("forget"), body=s.StateIn, body_required=False,
                  params=(ENTRY, IF_MATCH), response=s.WriteOut, errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/reactivate", "reactivateMemory", "Make it active again",
                  WRITE_ENTRY, state_action("reactivate"), body=s.StateIn, body_required=False,
                  params=(ENTRY, IF_MATCH), response=s.WriteOut, errors=WRITE_ERRORS),
    ]  # fmt: skip


__all__ = ["operations"]
