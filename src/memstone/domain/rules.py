"""Input normalization and validation: the rules every write passes, whatever front end it came from."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from .errors import InvalidInput, shown
from .ids import EntryId, EntryVersionId, MemoryId, SourceId, check_id
from .model import ArtifactRef, Change, EntryContent, EntryInput, EntryVersion, Provenance, Relation

MAX_TEXT_BYTES = 8192
MAX_REASON_CODE_POINTS = 512
MAX_TITLE_CODE_POINTS = 256
MAX_TAG_CODE_POINTS = 64
MAX_TAGS = 32
MAX_RELATIONS = 64
SLUG_MAX = 64
T = TypeVar("T")
MAX_REVISION = 2**63 - 1  # a signed 64-bit integer: what every engine stores

_KIND_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]{0,63}$")
_KEBAB_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def items_of(values: Iterable[T], what: str) -> tuple[T, ...]:
    """The items of a list argument; a single value (a string, a number, a flag, a mapping) is refused."""
    given: object = values
    if isinstance(given, (str, bytes, bytearray, Mapping)) or not isinstance(given, Iterable):
        raise InvalidInput(f"{what} must be a list, got {type(given).__name__}", hint=f"pass a list: {what}=[...]")
    return tuple(values)


def entry_inputs(values: Iterable[EntryInput]) -> list[EntryInput]:
    """The entries of a write, each an EntryInput."""
    out = list(items_of(values, "entries"))
    for item in out:
        given: object = item
        if not isinstance(given, EntryInput):
            raise InvalidInput(f"an entry must be an EntryInput, got {type(given).__name__}")
    return out


def strings_of(values: Iterable[str], what: str) -> tuple[str, ...]:
    """A list argument of strings (search filters such as kinds)."""
    out = items_of(values, what)
    for item in out:
        given: object = item
        if not isinstance(given, str):
            raise InvalidInput(f"{what} must be strings, got {type(given).__name__}")
    return out


def check_revision(value: object, what: str = "revision") -> int:
    """A Revision number: an integer from 1 to 2**63 - 1 (never a flag, never beyond what an engine stores)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REVISION:
        raise InvalidInput(f"{what} must be a positive integer up to {MAX_REVISION}, got {shown(value)}")
    return value


def check_ref(value: object, what: str = "memory_ref") -> ArtifactRef:
    """A caller's ArtifactRef: a memory id and a Revision number, each as the store takes them."""
    if not isinstance(value, ArtifactRef):
        raise InvalidInput(f"{what} must be an ArtifactRef (memory_id, revision), got {type(value).__name__}")
    check_id(value.memory_id, what="memory", prefix="mem_")
    check_revision(value.revision, f"{what}.revision")
    return value


def parse_revision(text: str, what: str = "revision") -> int:
    """A Revision or version number written as text (a header, an argument): ASCII digits, in range."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_REVISION)):
        got = text if len(text) <= 40 else f"{text[:20]}… ({len(text)} characters)"
        raise InvalidInput(f"{what} must be a positive integer up to {MAX_REVISION}, got {got!r}")
    return check_revision(int(text), what)


def normalize_text(value: object, *, what: str = "text") -> str:
    """NFC + trim; non-empty and at most 8192 UTF-8 bytes."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, got {type(value).__name__}")
    text = unicodedata.normalize("NFC", value).strip()
    if not text:
        raise InvalidInput(f"{what} is empty", hint="give the memory some text")
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_TEXT_BYTES:
        raise InvalidInput(
            f"{what} is {size} UTF-8 bytes; the limit is {MAX_TEXT_BYTES}",
            hint="split it into separate entries, one topic each",
        )
    _refuse_surrogates(text, what)
    if "\x00" in text:
        # A NUL never belongs in a memory, and it marks a purged version's stored text (domain/purge.py).
        raise InvalidInput(f"{what} contains a NUL character", hint="remove the control character")
    return text


def _refuse_surrogates(text: str, what: str) -> None:
    try:
        text.encode("utf-8")  # strict UTF-8 refuses exactly the lone surrogates, in C
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} contains a lone surrogate code point; send valid Unicode") from None


def normalize_reason(value: object) -> str | None:
    """NFC + trim; at most 512 code points; empty means none."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"reason must be a string, got {type(value).__name__}")
    reason = unicodedata.normalize("NFC", value).strip()
    if not reason:
        return None
    if len(reason) > MAX_REASON_CODE_POINTS:
        raise InvalidInput(
            f"reason is {len(reason)} code points; the limit is {MAX_REASON_CODE_POINTS}",
            hint="a reason is a short code or sentence; put detail in the entry text or a Source",
        )
    _refuse_surrogates(reason, "reason")
    return reason


def normalize_kind(value: object, *, closed_kinds: frozenset[str] | None = None) -> str:
    if not isinstance(value, str) or not _KIND_RE.fullmatch(value.strip()):
        raise InvalidInput(
            f"invalid kind {shown(value)}",
            hint="a kind is a word such as fact, preference, decision, constraint, convention, lesson",
        )
    kind = value.strip().lower()  # `LESSON` and `lesson` are one kind (issue 11), in a closed set too
    if closed_kinds is not None and kind not in {k.lower() for k in closed_kinds}:
        raise InvalidInput(
            f"kind {kind!r} is not allowed in this store",
            hint=f"this store accepts only: {', '.join(sorted(closed_kinds))}",
        )
    return kind


def normalize_title(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"title must be a string, got {type(value).__name__}")
    title = " ".join(unicodedata.normalize("NFC", value).split())
    if not title:
        return None
    if len(title) > MAX_TITLE_CODE_POINTS:
        raise InvalidInput(f"title is {len(title)} code points; the limit is {MAX_TITLE_CODE_POINTS}")
    _refuse_surrogates(title, "title")
    return title


def normalize_tags(values: Iterable[object]) -> tuple[str, ...]:
    tags: set[str] = set()
    for value in items_of(values, "tags"):
        if not isinstance(value, str):
            raise InvalidInput(f"a tag must be a string, got {type(value).__name__}")
        tag = " ".join(unicodedata.normalize("NFC", value).split()).lower()
        if not tag:
            raise InvalidInput("a tag is empty")
        if len(tag) > MAX_TAG_CODE_POINTS:
            raise InvalidInput(f"tag {tag[:20]!r}… is longer than {MAX_TAG_CODE_POINTS} code points")
        _refuse_surrogates(tag, "tag")
        tags.add(tag)
    if len(tags) > MAX_TAGS:
        raise InvalidInput(f"{len(tags)} tags; the limit is {MAX_TAGS}")
    return tuple(sorted(tags))


def normalize_slug(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _KEBAB_RE.fullmatch(value) or len(value) > SLUG_MAX:
        raise InvalidInput(
            f"invalid slug {shown(value)}", hint="a slug is lowercase kebab-case (a-z, 0-9, -), at most 64 characters"
        )
    return value


def slugify(text: str) -> str:
    """A kebab-case slug derived from text (for exports of entries that have none)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)
    slug = ""
    for w in words:
        candidate = f"{slug}-{w}" if slug else w
        if len(candidate) > 48:
            break
        slug = candidate
    return slug or "entry"


def normalize_relation_kind(value: object) -> str:
    if not isinstance(value, str) or not _KEBAB_RE.fullmatch(value) or len(value) > 64:
        raise InvalidInput(
            f"invalid relation kind {shown(value)}",
            hint="use supersedes, clarifies, relates-to, or another lowercase kebab-case word",
        )
    return value


def normalize_relations(values: Iterable[Relation | Mapping[str, object]]) -> tuple[Relation, ...]:
    out: set[Relation] = set()
    for value in items_of(values, "relations"):
        kind: object
        target: object
        if isinstance(value, Relation):
            kind, target = value.kind, value.target
        elif isinstance(value, Mapping):
            kind, target = value.get("kind"), value.get("target")
        else:
            raise InvalidInput(f"a relation must be a Relation or {{kind, target}}, got {shown(value)}")
        out.add(
            Relation(
                kind=normalize_relation_kind(kind),
                target=EntryId(check_id(target, what="relation target entry", prefix="ent_")),
            )
        )
    if len(out) > MAX_RELATIONS:
        raise InvalidInput(f"{len(out)} relations; the limit is {MAX_RELATIONS}")
    return tuple(sorted(out))


def normalize_artifacts(values: Iterable[ArtifactRef | Mapping[str, object]]) -> tuple[ArtifactRef, ...]:
    out: set[ArtifactRef] = set()
    for value in items_of(values, "artifacts"):
        if isinstance(value, ArtifactRef):
            ref = value
        elif isinstance(value, Mapping):
            rev = check_revision(value.get("revision"), "artifact revision")
            ref = ArtifactRef(memory_id=MemoryId(check_id(value.get("memory_id"), what="memory")), revision=rev)
        else:
            raise InvalidInput(f"an artifact must be an ArtifactRef, got {shown(value)}")
        check_id(ref.memory_id, what="memory", prefix="mem_")
        check_revision(ref.revision, "artifact revision")
        out.add(ref)
    return tuple(sorted(out))


def normalize_source_ids(values: Iterable[object]) -> tuple[SourceId, ...]:
    out: set[SourceId] = set()
    for value in items_of(values, "sources"):
        sid = getattr(value, "source_id", value)
        out.add(SourceId(check_id(sid, what="source", prefix="src_")))
    return tuple(sorted(out))


def check_flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{what} must be true or false, got {shown(value)}")
    return value


def check_filter(value: object, what: str) -> bool | None:
    """A flag filter of a read: true, false, or None (no filter)."""
    if value is not None and not isinstance(value, bool):
        raise InvalidInput(f"{what} must be true, false or None, got {shown(value)}")
    return value


def check_vector(values: Iterable[float], *, dimension: int) -> None:
    """Refuse a vector that is empty, of the wrong dimension, non-finite, zero, or not of unit length."""
    vec = list(values)
    if not vec:
        raise InvalidInput("empty vector")
    if len(vec) != dimension:
        raise InvalidInput(f"vector has dimension {len(vec)}, the profile has {dimension}")
    if any(not isinstance(v, (int, float)) or math.isnan(v) or math.isinf(v) for v in vec):
        raise InvalidInput("vector contains NaN, Infinity or a non-number")
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0:
        raise InvalidInput("zero vector")
    if abs(norm - 1.0) > 1e-3:
        raise InvalidInput(f"vector is not unit length (norm {norm:.4f}); the profile uses L2 on unit vectors")


def build_content(
    item: EntryInput,
    *,
    op_sources: tuple[SourceId, ...],
    inherited_sources: tuple[SourceId, ...] = (),
    closed_kinds: frozenset[str] | None = None,
) -> EntryContent:
    """Validate and normalize an EntryInput into hashed content.

    A new entry's evidence must be a subset of the operation's evidence; a revision keeps its predecessor's
    evidence and may add only operation evidence (the RFC's lineage rule).
    """
    if not isinstance(item, EntryInput):
        raise InvalidInput(f"entries must be EntryInput values, got {type(item).__name__}")
    if item.sources is None:
        sources = op_sources
    else:
        sources = normalize_source_ids(item.sources)
        outside = sorted(set(sources) - set(op_sources) - set(inherited_sources))
        if outside:
            raise InvalidInput(
                f"entry cites sources outside this operation's evidence: {', '.join(outside)}",
                hint="pass them in remember(sources=...) too",
            )
    sources = tuple(sorted(set(sources) | set(inherited_sources)))
    return EntryContent(
        kind=normalize_kind(item.kind, closed_kinds=closed_kinds),
        text=normalize_text(item.text),
        title=normalize_title(item.title),
        tags=normalize_tags(item.tags),
        slug=normalize_slug(item.slug),
        important=check_flag(item.important, "important"),
        mandatory=check_flag(item.mandatory, "mandatory"),
        sources=sources,
        artifacts=normalize_artifacts(item.artifacts),
        relations=normalize_relations(item.relations),
    )


def entry_input_from_dict(data: Mapping[str, object]) -> EntryInput:
    """Build an EntryInput from JSON-like data, refusing unknown fields by name."""
    allowed = {f for f in EntryInput.__dataclass_fields__}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InvalidInput(
            f"unknown field(s) in entry: {', '.join(unknown)}", hint=f"allowed fields: {', '.join(sorted(allowed))}"
        )
    if "kind" not in data or "text" not in data:
        raise InvalidInput("an entry needs at least kind and text")
    return EntryInput(**data)  # type: ignore[arg-type]


def next_version(
    memory_id: MemoryId,
    content: EntryContent,
    *,
    prev: EntryVersion | None,
    new_id: Callable[[str], str],
    revision: int,
    provenance: Provenance,
    reason: str | None,
) -> tuple[EntryVersion, Change]:
    """The next version of ``prev`` (a new entry when ``prev`` is None) in Revision ``revision``, and its change."""
    eid = prev.entry_id if prev is not None else EntryId(new_id("ent_"))
    vid = EntryVersionId(new_id("ver_"))
    version = EntryVersion(
        memory_id=memory_id,
        entry_id=eid,
        entry_version_id=vid,
        version=prev.version + 1 if prev is not None else 1,
        previous_version_id=prev.entry_version_id if prev is not None else None,
        content=content,
        entry_content_hash=content.content_hash,
        created_in_revision=revision,
        provenance=provenance,
    )
    change = Change(
        op="revise" if prev is not None else "add",
        entry_id=eid,
        from_entry_version_id=version.previous_version_id,
        to_entry_version_id=vid,
        reason=reason,
    )
    return version, change


@dataclass(slots=True, kw_only=True)
class NextVersions:
    """The new versions and changes of one Revision, an entry at a time (:func:`next_version`)."""

    memory_id: MemoryId
    revision: int
    provenance: Provenance
    new_id: Callable[[str], str]
    versions: list[EntryVersion] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)  # callers add their deactivations here too

    def add(self, content: EntryContent, *, prev: EntryVersion | None, reason: str | None) -> None:
        """The next version of ``prev`` (a new entry when None) holding ``content``, and its change."""
        version, change = next_version(
            self.memory_id,
            content,
            prev=prev,
            new_id=self.new_id,
            revision=self.revision,
            provenance=self.provenance,
            reason=reason,
        )
        self.versions.append(version)
        self.changes.append(change)

    def deactivate(self, entry_id: EntryId, version_id: EntryVersionId, reason: str | None) -> None:
        """Deactivate the entry whose current version is ``version_id``."""
        self.changes.append(
            Change(
                op="deactivate",
                entry_id=entry_id,
                from_entry_version_id=version_id,
                to_entry_version_id=None,
                reason=reason,
            )
        )
