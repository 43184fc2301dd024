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
from .decisions import accept, decidable, reject, visible_items
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
from .settings import CaptureMode, CaptureSettings, ExtractorSettings, load_capture_settings, save_capture_settings
from .store import CaptureStore

__all__ = [
    "REASONS",
    "Admission",
    "Bootstrap",
    "Candidate",
    "CaptureMode",
    "CaptureOutcome",
    "CapturePipeline",
    "CaptureResult",
    "CaptureSettings",
    "CaptureStore",
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
    "decidable",
    "event_from_dict",
    "event_to_dict",
    "find_secrets",
    "git_change_flags",
    "load_capture_settings",
    "plan_candidates",
    "read_build_files",
    "redact",
    "reject",
    "save_capture_settings",
    "similarity",
    "statement_candidates",
    "visible_items",
    "working_note_candidate",
]
