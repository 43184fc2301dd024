"""The cheap gates before the secret finders' passes skip only texts the pass could not flag (issue 13, secspeed).

Each text sits at a gate's edge: the one anchor that lets it through, a letter (ſ, ı) that ``(?i)`` folds to ASCII,
a value with no digit presented as itself, a BIP39 phrase in a numbered list.
"""

from __future__ import annotations

import pytest

from memstone.domain import secret_clause, secret_generic, secret_named
from memstone.domain.secrets import find_secrets

BIP39_12 = "abandon ability absent absorb abstract absurd abuse access accident account accuse achieve"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Uſer: admin / Xk29!mPq77zR", "credential_pair"),  # (?i) reads ſ as s: "user"
        ("the paſsphrase is harbour lantern 42 quietly.", "passphrase_in_prose"),
        ("ssh key, here's it: RNIJKpJBAwXlChNU", "credential_in_clause"),  # letters only, presented as itself
        ("the clé for the backup box: hk50Jf2EUZEH", "credential_in_clause"),  # "clé" is the only cue
        ("The authenticator shows 832 139 right now", "one_time_code"),
        ("export FLY_DEPLOY_PW=HQ5uyoy5Zu6c", "credential_slot"),
        ("the garage door takes 2 9 1 7 since June", "named_pin_or_code"),
        ("seed: " + " ".join(f"{i}. {w}" for i, w in enumerate(BIP39_12.split(), 1)), "seed_phrase"),
    ],
)
def test_a_text_at_a_gates_edge_is_still_flagged(text: str, kind: str) -> None:
    assert kind in {f.kind for f in find_secrets(text)}


def test_each_finder_passes_its_gate_on_the_edge_texts() -> None:
    assert secret_generic.credential_pairs("Uſer: admin / Xk29!mPq77zR", lambda v: True)
    assert secret_generic.prefixed_tokens("acme_live_Xy7Qa2Lm9PzR4tVb8NcW", lambda v: True)
    assert secret_generic.suffix_named_tokens("appSecret = Zx9Qw3Er5Ty7Ui9Op1As3", lambda v: True)
    assert secret_named.bip39_runs(BIP39_12.replace(" ", ", "), lambda w: False)
    assert secret_clause.one_time_codes("your verification code 4821")


def test_texts_without_the_anchors_are_skipped_with_nothing_lost() -> None:
    # No digit, no "here's" or the like: no generated value can be in the clause, so nothing is flagged.
    assert secret_clause.generated_in_clause("the admin key is in the usual place", lambda v: False) == []
    # Eleven BIP39 words in a row, then one that is not: no phrase.
    assert secret_named.bip39_runs(BIP39_12.rsplit(" ", 1)[0] + " zzzq", lambda w: False) == []
