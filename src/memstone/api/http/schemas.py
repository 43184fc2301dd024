"""Pydantic schemas of the HTTP API: query parameters, request bodies and responses (the OpenAPI components).

Request models forbid unknown fields, so a typo is a clear 422 instead of a silent no-op. A body never names
its owner: the scope of a write is the URL's ``?scope=`` (checked against the caller's grants), and the
author is the authenticated principal. Owner-like fields are refused by name (:data:`OWNER_FIELDS`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ...auth.model import Permission
from ...capture.queue import ItemType, QueueStatus
from ...domain.model import ChangeOp, EntryState, SearchMode, VersionStatus
from ...domain.purge import Tombstone
from ...domain.records import Category
from ...domain.rules import MAX_REVISION
from ...domain.scopes import Tier

ENTRY_ID = r"^ent_[0-9A-Za-z]{1,124}$"
VERSION_REF = r"^(ver_[0-9A-Za-z]{1,124}|[1-9][0-9]{0,8})$"
REVISION_REF = r"^(head|[1-9][0-9]{0,8})$"
MAX_QUERY = 2000


def _any_case(word: str) -> str:
    return "".join(f"[{c.upper()}{c}]" if c.isalpha() else c for c in word)


_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9._\-]{0,127}"
_SCHEME = f"({_any_case('memstone')}|{_any_case('xema')})://"
_PATH = rf"({_any_case('orgs')}/{_SEGMENT}(/{_any_case('projects')}/{_SEGMENT})?|{_any_case('users')}/{_SEGMENT})"
# What Gate.parse and parse_scope accept, stated for clients: a URI or its path form (ids are case-free).
SCOPE_PATTERN = rf"^\s*({_SCHEME}{_PATH}/*|/*{_PATH}/*)?\s*$"

# Fields a client might send to choose the owner or the author of a write. They are refused, not ignored:
# a client that believes it chose the owner should learn that it did not.
OWNER_FIELDS = frozenset(
    {
        "author",
        "created_by",
        "memory",
        "memory_id",
        "org",
        "organization",
        "owner",
        "owner_scope",
        "owner_space",
        "principal",
        "scope",
        "space",
        "updated_by",
        "user",
    }
)

ScopeParam = Field(
    default=None,
    max_length=300,
    pattern=SCOPE_PATTERN,
    description="Scope URI (memstone://orgs/<org>[/projects/<p>], memstone://users/<user>) or its path form "
    "(orgs/acme/projects/web). Default: your own scope (local mode: the server's default scope).",
)
ScopeItem = Annotated[str, Field(max_length=300, pattern=SCOPE_PATTERN)]
KIND_PATTERN = r"^\s*[A-Za-z][A-Za-z0-9_\-]{0,63}\s*$"
KEBAB_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
# Not blank: one character that is white space to none of Python's str.split (what the service strips), ECMA-262
# (what clients read the pattern with) and the Rust regex pydantic validates with.
NOT_BLANK = r"[^\s\x1c-\x1f\x85\ufeff]"
Tag = Annotated[str, Field(min_length=1, max_length=64, pattern=NOT_BLANK, description="Not blank.")]
CAS_TEXT = "The record revision you read (CAS token). Send it or the If-Match header, not both."


def _not_a_flag(value: object) -> object:
    if isinstance(value, bool):
        raise ValueError("a revision is an integer, not true or false")
    return value


NotAFlag = BeforeValidator(_not_a_flag)


def cas_field(description: str = CAS_TEXT) -> Any:
    """An optional CAS revision: an integer (``true`` is not 1), 1 to 2**63 - 1."""
    return Field(default=None, ge=1, le=MAX_REVISION, description=description)


# A NUL never belongs in a memory's text (it marks a purged version in storage; domain/purge.py).
NO_NUL = r"^[^\x00]*$"
# A memory's text: at least one character that is not whitespace (it is trimmed), and no NUL.
TEXT_PATTERN = r"^[^\x00]*[^\s\x00][^\x00]*$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Open(BaseModel):
    """Response models: extra keys are allowed so new fields never break old clients."""

    model_config = ConfigDict(extra="allow")


# ---------------------------------------------------------------------------------------------- query parameters
class ScopeQuery(Strict):
    scope: str | None = ScopeParam


class CatalogueQuery(Strict):
    scope: str | None = ScopeParam
    kind: list[str] = Field(default_factory=list, max_length=20, description="Only these kinds (repeatable).")
    tag: list[Tag] = Field(default_factory=list, max_length=20, description="Only entries with every tag given.")
    important: bool | None = Field(default=None, description="true: only important; false: only not important.")
    mandatory: bool | None = Field(default=None, description="true: only mandatory; false: only not mandatory.")
    state: Literal["active", "all"] = Field(default="active", description="all: include forgotten entries too.")
    limit: int = Field(default=50, ge=1, le=200, description="Page size (at most 200).")
    cursor: str | None = Field(
        default=None, max_length=200, description="next_cursor of the previous page (pages read one Revision)."
    )


class SearchQuery(Strict):
    q: str = Field(
        min_length=1,
        max_length=MAX_QUERY,
        description="What to look for (plain text, any language). It must hold at least one word that is not a "
        "stopword: a query of punctuation or stopwords only is refused (422 invalid_input).",
    )
    scope: list[ScopeItem] = Field(
        default_factory=list, max_length=10, description="Scopes to search (default: yours), each like `scope`."
    )
    mode: SearchMode = Field(default="auto", description="auto: hybrid when vectors are complete, else fts (reported).")
    limit: int = Field(default=10, ge=1, le=100, description="Distinct entries to return (at most 100).")
    kind: list[str] = Field(default_factory=list, max_length=20)
    tag: list[Tag] = Field(default_factory=list, max_length=20)
    important: bool | None = None
    mandatory: bool | None = Field(default=None, description="Not true together with exclude_mandatory=true.")
    order: Literal["relevance", "priority"] = Field(
        default="relevance", description="priority: mandatory, then important, then normal; newest first."
    )
    exclude_mandatory: bool = Field(
        default=False, description="Leave mandatory entries out (the recall protocol); refused with mandatory=true."
    )
    include_superseded: bool = Field(default=False, description="Also match archived versions (marked superseded).")
    precedence: bool = Field(default=True, description="Across tiers, hide entries a more specific scope shadows.")
    exact: bool = Field(default=False, description="Exact vector scan instead of the quantized fast path.")
    context: bool = Field(
        default=False,
        description="After the first 7 hits, add the entries written next to them in their Memory (limit > 7).",
    )


class RecallQuery(Strict):
    q: str | None = Field(default=None, max_length=MAX_QUERY, description="The session's context (optional).")
    scope: list[ScopeItem] = Field(default_factory=list, max_length=10)
    budget_tokens: int | None = Field(default=None, ge=0, le=1_000_000, description="Not with budget_chars.")
    budget_chars: int | None = Field(default=None, ge=0, le=10_000_000, description="Not with budget_tokens.")
    limit: int = Field(default=8, ge=1, le=100)
    mode: SearchMode = "auto"
    order: Literal["priority", "relevance"] = "priority"


class ChangesQuery(Strict):
    scope: str | None = ScopeParam
    since: int = Field(default=0, ge=0, le=2_000_000_000, description="Exclusive: revisions after this one.")
    limit: int = Field(default=50, ge=1, le=200, description="Revisions per page (at most 200).")


class RevisionQuery(Strict):
    scope: str | None = ScopeParam
    offset: int = Field(default=0, ge=0, le=2_000_000_000, description="First change to list.")
    limit: int = Field(default=200, ge=1, le=1000, description="Changes to list (at most 1000).")


class LookupQuery(Strict):
    scope: str | None = ScopeParam
    kind: str = Field(min_length=1, max_length=64, pattern=KIND_PATTERN)
    slug: str = Field(min_length=1, max_length=64, pattern=KEBAB_PATTERN)


class ExportQuery(Strict):
    scope: str | None = ScopeParam


class EntryQuery(Strict):
    revision: int | None = Field(
        default=None, ge=1, le=2_000_000_000, description="Read the entry as of this Revision of its Memory."
    )


class PageQuery(Strict):
    limit: int = Field(default=50, ge=1, le=200)
    cursor: str | None = Field(default=None, max_length=200)


class DiffQuery(Strict):
    from_: str | None = Field(default=None, alias="from", pattern=VERSION_REF, description="Default: the previous.")
    to: str | None = Field(default=None, pattern=VERSION_REF, description="Default: the current version.")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SourceQuery(Strict):
    version: str | None = Field(default=None, pattern=VERSION_REF)


class UnrelateQuery(Strict):
    kind: str = Field(default="relates-to", min_length=1, max_length=64, pattern=KEBAB_PATTERN)
    target: str = Field(pattern=ENTRY_ID)


# ---------------------------------------------------------------------------------------------- request bodies
class RelationIn(Strict):
    kind: str = Field(
        min_length=1, max_length=64, pattern=KEBAB_PATTERN, description="supersedes, clarifies, relates-to, ..."
    )
    target: str = Field(pattern=ENTRY_ID)


class EntryCreate(Strict):
    kind: str = Field(
        min_length=1, max_length=64, pattern=KIND_PATTERN, description="fact, preference, decision, constraint, ..."
    )
    text: str = Field(
        min_length=1,
        max_length=40_000,
        pattern=NO_NUL,
        json_schema_extra={"pattern": TEXT_PATTERN},  # the document states "not blank"; the domain's error says it
        description="Markdown body (at most 8192 UTF-8 bytes, not blank, no NUL).",
    )
    title: str | None = Field(default=None, max_length=1000)
    tags: list[Tag] = Field(default_factory=list, max_length=32)
    slug: str | None = Field(default=None, max_length=64, pattern=KEBAB_PATTERN)
    important: bool = False
    mandatory: bool = False
    relations: list[RelationIn] = Field(default_factory=list, max_length=64)
    reason: str | None = Field(default=None, max_length=2000)


class EntryPatch(Strict):
    """Only the fields given change; the rest keep their current values."""

    revision: Annotated[int | None, NotAFlag] = cas_field()
    kind: str | None = Field(default=None, min_length=1, max_length=64, pattern=KIND_PATTERN)
    text: str | None = Field(
        default=None, min_length=1, max_length=40_000, pattern=NO_NUL, json_schema_extra={"pattern": TEXT_PATTERN}
    )
    title: str | None = Field(default=None, max_length=1000)
    tags: list[Tag] | None = Field(default=None, max_length=32)
    slug: str | None = Field(default=None, max_length=64, pattern=KEBAB_PATTERN)
    important: bool | None = None
    mandatory: bool | None = None
    relations: list[RelationIn] | None = Field(default=None, max_length=64)
    reason: str | None = Field(default=None, max_length=2000)


class FlagIn(Strict):
    """At least one of important and mandatory, as true or false."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"required": ["important"], "properties": {"important": {"type": "boolean"}}},
                {"required": ["mandatory"], "properties": {"mandatory": {"type": "boolean"}}},
            ]
        },
    )
    important: bool | None = None
    mandatory: bool | None = None
    revision: Annotated[int | None, NotAFlag] = cas_field(
        "Optional CAS: the record revision you read. Send it or If-Match, not both."
    )


class RelateIn(Strict):
    target: str = Field(pattern=ENTRY_ID)
    kind: str = Field(default="relates-to", min_length=1, max_length=64, pattern=KEBAB_PATTERN)
    deactivate_target: bool = Field(default=False, description="With supersedes: forget the target too.")
    revision: Annotated[int | None, NotAFlag] = cas_field()


class RenameIn(Strict):
    slug: str | None = Field(
        max_length=64, pattern=KEBAB_PATTERN, description="The new slug (null clears it; the old one redirects)."
    )
    revision: Annotated[int | None, NotAFlag] = cas_field()


class RevertIn(Strict):
    to: str = Field(pattern=VERSION_REF, description="The version to restore: its number or ver_ id.")
    reason: str | None = Field(default=None, max_length=2000)
    revision: Annotated[int | None, NotAFlag] = cas_field()


class StateIn(Strict):
    reason: str | None = Field(default=None, max_length=2000)
    revision: Annotated[int | None, NotAFlag] = cas_field()


# ---------------------------------------------------------------------------------------------- responses
class ErrorDetail(Open):
    code: str
    message: str
    hint: str | None = None


class ErrorOut(Open):
    error: ErrorDetail


class RefOut(Open):
    memory_id: str
    revision: int


class RelationOut(Open):
    kind: str
    target: str


class ChangeOut(Open):
    op: ChangeOp
    entry_id: str
    from_entry_version_id: str | None
    to_entry_version_id: str | None
    reason: str | None


class RevisionOut(Open):
    memory_id: str
    revision: int
    scope: str | None
    content_hash: str
    manifest_root: str
    entry_count: int
    active_count: int
    author: str | None
    surface: str
    created_at: str
    changes_total: int
    changes: list[ChangeOut] = Field(description="At most the page asked for; see changes_total.")
    changes_next_offset: int | None = None


class _ContentOut(Open):
    """What one entry version says. A model lists its bases' fields last base first, so a view that names the
    version in another base lists that base after this one: ``class View(_ContentOut, _Names)``."""

    kind: str
    title: str | None
    text: str
    tags: list[str]
    slug: str | None
    important: bool
    mandatory: bool


class _EntryRefOut(Open):
    memory_ref: RefOut
    entry_id: str
    entry_version_id: str


class _EntryOut(_ContentOut, _EntryRefOut):
    """The fields every view of one entry version carries (a record, a hit)."""


class RecordOut(_EntryOut):
    scope: str | None
    category: Category
    relations: list[RelationOut]
    sources: list[str]
    state: EntryState
    revision: int = Field(description="The record revision: its entry version number (CAS token).")
    created_at: str
    updated_at: str
    updated_by: str | None
    entry_content_hash: str
    shadowed_by: str | None = None
    shadowed_by_scope: str | None = None
    stale: bool = Field(
        default=False, description="Flagged stale by maintenance (the stale tag): its evidence changed."
    )


class EntryOut(Open):
    record: RecordOut
    etag: str


class WriteOut(Open):
    revision: RevisionOut
    record: RecordOut | None = None


class PageOut(Open):
    memory_ref: RefOut | None
    scope: str
    total: int
    next_cursor: str | None


class CatalogueOut(PageOut):
    items: list[RecordOut]


class _VersionPlaceOut(Open):
    memory_id: str
    entry_id: str
    entry_version_id: str
    version: int
    previous_version_id: str | None
    next_version_id: str | None
    status: VersionStatus


class VersionOut(_ContentOut, _VersionPlaceOut):
    relations: list[RelationOut]
    sources: list[str]
    artifacts: list[RefOut]
    entry_content_hash: str
    created_in_revision: int
    author: str | None
    surface: str
    created_at: str
    reason: str | None = Field(default=None, description="Why the Revision that wrote this version wrote it.")
    purge: Tombstone | None = Field(
        default=None, description="When, by whom and why this version's content was purged (null: not purged)."
    )


class HistoryOut(Open):
    entry_id: str
    scope: str | None
    total: int
    next_cursor: str | None
    items: list[VersionOut]


class HitOut(_EntryOut):
    score: float
    matched_by: list[str]
    entry_content_hash: str
    updated_at: str
    scope: str | None
    superseded: bool
    current_entry_version_id: str | None
    stale: bool = Field(
        default=False, description="Flagged stale by maintenance (the stale tag): its evidence changed."
    )


class ShadowedOut(Open):
    memory_ref: RefOut
    entry_id: str
    kind: str
    slug: str
    scope: str
    shadowed_by: str
    shadowed_by_scope: str


class SearchOut(Open):
    mode: SearchMode
    requested_mode: SearchMode
    fallback_reason: str | None
    order: Literal["relevance", "priority"]
    scopes: list[str]
    hits: list[HitOut]
    shadowed: list[ShadowedOut]


class RecallOut(Open):
    scopes: list[str]
    mandatory: list[RecordOut]
    contextual: list[HitOut]
    links: list[dict[str, object]]
    omitted: list[dict[str, object]]
    budget: int | None
    unit: Literal["tokens", "chars"]
    used: int
    mode: str
    note: str


class ChangesOut(Open):
    scope: str
    memory_id: str | None
    items: list[dict[str, object]] = Field(description="Per Revision: memory_ref, changes (at most 1000 each).")
    next_since: int | None


class DiffOut(Open):
    entry_id: str
    identical: bool
    changes: list[dict[str, object]]
    text_diff: list[str]


class BlameOut(Open):
    entry_id: str
    fields: list[dict[str, object]]


class PrincipalOut(Open):
    principal_id: str
    user: str
    org: str
    name: str | None
    user_scope: str


class SessionOut(Open):
    mode: Literal["local", "token"]
    principal: PrincipalOut
    grants: list[dict[str, str]]
    default_scope: str
    version: str


class ScopeOut(Open):
    scope: str
    memory_id: str | None
    tier: Tier
    permission: Permission
    default: bool


class ScopesOut(Open):
    default_scope: str
    items: list[ScopeOut]


# ---------------------------------------------------------------------------------------------- capture review queue
REVIEW_ITEM_ID = r"^cap_[0-9A-Za-z]{1,64}$"


class ReviewQuery(Strict):
    status: Literal["pending", "accepted", "rejected", "all"] = "pending"
    scope: str | None = Field(default=None, max_length=300, description="Only the items of this scope.")


class ReviewRejectIn(Strict):
    note: str | None = Field(default=None, max_length=2000)


class ReviewItemOut(Open):
    item_id: str
    item_type: ItemType
    status: QueueStatus
    scope: str | None
    memory_id: str | None
    created_at: str
    candidate: dict[str, object] | None
    flag: dict[str, object] | None
    decided_at: str | None
    decided_by: str | None
    note: str | None
    result_entry: str | None


class ReviewListOut(Open):
    items: list[ReviewItemOut]


class ReviewDecisionOut(Open):
    item: ReviewItemOut
    entries: list[str]


# ---------------------------------------------------------------------------------------------- purge (issue 12)
class PurgeIn(Strict):
    reason: str = Field(min_length=1, max_length=512, description="Why the content must be erased (recorded).")
    versions: list[Annotated[int, Field(ge=1, le=2**63 - 1)]] | None = Field(
        default=None, max_length=1000, description="Only these version numbers (default: every version)."
    )


class PurgeOut(Open):
    entry_id: str
    purged: list[Tombstone]
    already_purged: list[str]
    forgotten_in_revision: int | None
