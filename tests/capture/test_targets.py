"""A target's derived forms (subject tokens, values, searchable text, …) follow its text: ``retext`` (a plan in the
same batch revising it) makes every one of them read the new text, and marks it as just written."""

from __future__ import annotations

from memstone.capture.targets import JUST_WRITTEN, Target


def test_retext_recomputes_every_derived_form_from_the_new_text() -> None:
    old, new = "Sessions expire after 30 minutes.", "Die Produktsuche läuft über Meilisearch 1.6."
    target = Target(entry_id=None, entry_version_id=None, kind="fact", text=old, slug=None, plan_index=0, written="1")
    fresh = Target(entry_id=None, entry_version_id=None, kind="fact", text=new, slug=None, plan_index=0)
    forms = ("measures", "concepts", "values", "typed", "tokens", "exact", "search", "norm")
    before = {name: getattr(target, name) for name in forms}  # computed from the old text, and kept
    target.retext(new)
    after = {name: getattr(target, name) for name in forms}
    assert after == {name: getattr(fresh, name) for name in forms}
    assert before["values"] != after["values"] and before["search"] != after["search"]  # read from the new text
    assert target.written == JUST_WRITTEN
