"""Kind and flags from a rule's wording (Graphit "Acquisition").

| wording                                         | kind       | flags                                        |
|-------------------------------------------------|------------|----------------------------------------------|
| never, always, must, do not, don't, under a     | constraint | mandatory when the file applies to every     |
| "Don'ts" heading                                |            | session and the rule is unconditional        |
| we chose/decided, decision                      | decision   | important                                    |
| I prefer, I like; or starting Prefers, Likes... | preference | important                                    |
| a command in backticks with run/use/build/...,  | procedure  | important                                    |
| or under a Commands/Build/Test/Setup heading    |            |                                              |
| prefer, use, avoid, should, follow, keep, ...   | convention | important                                    |
| anything else                                   | fact       | important                                    |

A rule that starts with a condition ("When editing migrations, never ...") is important, not mandatory: Graphit
keeps mandatory for standing context needed in every session, and important for context that is conditional.
Rule files are curated guidance, so everything they hold is at least important.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONSTRAINT = re.compile(
    r"\b(never|always|must|mustn't|must not|do not|don't|shall not|under no circumstances|forbidden|prohibited)\b",
    re.IGNORECASE,
)
_NEGATIVE_HEADING = re.compile(r"\b(don'?ts?|do not|never|forbidden|prohibited|constraints?)\b", re.IGNORECASE)
_DECISION = re.compile(r"\b(we (chose|decided|picked|went with)|decided to|decision)\b", re.IGNORECASE)
_PREFERENCE = re.compile(
    r"\b(i prefer|i like|i want|my preference)\b|^\W*(prefers|likes|dislikes|loves|enjoys|hates|wants)\b",
    re.IGNORECASE,
)
_PROCEDURE_HEADING = re.compile(
    r"\b(commands?|build|building|test|tests|testing|setup|set up|install|workflow|scripts?|deploy|release|"
    r"getting started|development)\b",
    re.IGNORECASE,
)
_COMMAND = re.compile(r"`[^`]+`|^\s*```", re.MULTILINE)
_PROCEDURE_VERB = re.compile(r"^\W*(run|execute|build|install|start|invoke)\b", re.IGNORECASE)
_CONVENTION = re.compile(
    r"\b(prefer|use|avoid|should|follow|keep|write|name|format|style|convention|instead of)\b", re.IGNORECASE
)
_CONDITIONAL = re.compile(r"^\W*(when|if|before|after|while|unless|for|in)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    kind: str
    important: bool
    mandatory: bool


def classify(text: str, *, heading: str | None, every_session: bool) -> Reading:
    """The kind and flags a rule's wording calls for (see the module docstring)."""
    head = heading or ""
    if _CONSTRAINT.search(text) or _NEGATIVE_HEADING.search(head):
        conditional = bool(_CONDITIONAL.match(text))
        return Reading(kind="constraint", important=True, mandatory=every_session and not conditional)
    if _DECISION.search(text):
        return Reading(kind="decision", important=True, mandatory=False)
    if _PREFERENCE.search(text):
        return Reading(kind="preference", important=True, mandatory=False)
    if (_COMMAND.search(text) and (_PROCEDURE_VERB.match(text) or _PROCEDURE_HEADING.search(head))) or (
        _PROCEDURE_HEADING.search(head) and _COMMAND.search(text)
    ):
        return Reading(kind="procedure", important=True, mandatory=False)
    if _CONVENTION.search(text):
        return Reading(kind="convention", important=True, mandatory=False)
    return Reading(kind="fact", important=True, mandatory=False)


__all__ = ["Reading", "classify"]
