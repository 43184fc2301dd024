"""Capture: task events from agents → admitted, deduplicated memory entries. No model needed; secrets refused.

Call :func:`capture` once per normalized event (see :mod:`memstone.capture.events`)::

    from memstone.capture import capture, UserPrompt, TurnStop, EventContext

    result = await capture(svc, UserPrompt(text="Always run `make test` before pushing."), scope=project_scope)
    result.status          # "stored" | "queued" | "unchanged" | "nothing" | "refused" | "off"
    result.entries()       # ids of the entries added or revised

The importable surface is this module; submodules are implementation detail except where named here. This
package imports neither the MCP SDK nor an embedding model, so hooks can import it on their fast path.
"""

from ..domain.secrets import SecretFinding, find_secrets, redact
from .adapters import build_file_candidates, git_change_flags, statement_candidates, working_note_candidate
from .admission import REASONS, Admission, Similarity, admit, plan_candidates, similarity
from .candidates import Candidate, Plan, ReviewFlag, Skip
from .decisions import accept, reject
from .events import (
    Bootstrap,
    EventContext,
    ExplicitSubmit,
    FileSnapshot,
    GitChange,
    Handoff,
    SubmittedEntry,
    TaskEvent,
    TurnStop,
    UserCorrection,
    UserPrompt,
    Verification,
    event_from_dict,
    event_to_dict,
    read_build_files,
)
from .extractor import Extraction, ModelExtractor, TokenUsage
from .outcomes import CaptureOutcome, CaptureResult, Proposal
from .pipeline import CapturePipeline, capture
from .queue import QueueItem, ReviewQueue
from .settings import CaptureFiles, CaptureMode, CaptureSettings, ExtractorSettings, capture_files

__all__ = [
    "REASONS",
    "Admission",
    "Bootstrap",
    "Candidate",
    "CaptureFiles",
    "CaptureMode",
    "CaptureOutcome",
    "CapturePipeline",
    "CaptureResult",
    "CaptureSettings",
    "EventContext",
    "ExplicitSubmit",
    "Extraction",
    "ExtractorSettings",
    "FileSnapshot",
    "GitChange",
    "Handoff",
    "ModelExtractor",
    "Plan",
    "Proposal",
    "QueueItem",
    "ReviewFlag",
    "ReviewQueue",
    "SecretFinding",
    "Similarity",
    "Skip",
    "SubmittedEntry",
    "TaskEvent",
    "TokenUsage",
    "TurnStop",
    "UserCorrection",
    "UserPrompt",
    "Verification",
    "accept",
    "admit",
    "build_file_candidates",
    "capture",
    "capture_files",
    "event_from_dict",
    "event_to_dict",
    "find_secrets",
    "git_change_flags",
    "plan_candidates",
    "read_build_files",
    "redact",
    "reject",
    "similarity",
    "statement_candidates",
    "working_note_candidate",
]
