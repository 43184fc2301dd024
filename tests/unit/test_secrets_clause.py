"""Secrets told by the clause they sit in (issue 16, item 4; capsec5, fitted on ``bench/data/capture/moraine.jsonl``):
a short generated value after a login, account, key or token word with no copula, an app password of four letter
groups, a one-time code, a recovery key of digit groups, a password of digit groups. Each with a near miss of the same
subject that must be stored; every secret row fails on the detector before this pass (main c093055)."""

# ruff: noqa: E501  (tables of realistic-looking fake values read better unwrapped)

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest
from test_secrets import refused_by_remember_and_capture_near_misses_stored

from memstone.domain.secret_clause import generated
from memstone.domain.secrets import find_secrets

_RNG = random.Random(1207)
ALNUM = string.ascii_letters + string.digits


def rnd(n: int, alphabet: str = ALNUM) -> str:
    while True:  # a password generator's output: upper, lower and digits all present
        v = "".join(_RNG.choice(alphabet) for _ in range(n))
        if any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v):
            return v


# (id, text with a secret, the kind found, a near miss of the same subject that must not be refused)
CLAUSE = [
    ("ssh-root-colon", f"build box for the kiosk images, ssh in as root: {rnd(9, ALNUM + '%!')}", "credential_in_clause",
     "build box for the kiosk images: ssh in as root, the key is in the team vault (ops/kiosk-build)."),
    ("user-and-fr", f"Le compte admin du back-office de Sion, c'est admin@sion et {rnd(10, ALNUM + '@')}", "credential_in_clause",
     "Le compte admin du back-office de Sion est admin@sion ; le mot de passe est dans Bitwarden."),
    ("token-e-it", f"Il token del webhook di Livigno è {rnd(16)}, mettilo in Vault", "credential_in_clause",
     "Il token del webhook di Livigno scade ogni 90 giorni e si rinnova con scripts/rotate.sh"),
    ("login-zh", f"票务后台的账号是 ops-admin，登录用 {rnd(12)}", "credential_in_clause",
     "票务后台的账号是 ops-admin，登录走公司的 SSO，订单号格式是 MRN-2024-000187。"),
    ("account-ja", f"改札機の保守用アカウントは maint で、{rnd(14)} で入れます。", "credential_in_clause",
     "改札機の保守用アカウントは maint で、パスワードは社内の Vault にあります。"),
    ("app-password", "Gmail app password for the alerts@ mailbox: tqzk mwhd pnxr bvcl", "app_password",
     "Gmail app passwords are four groups of four letters; ours is in the vault, not here."),
    ("otp-texted", "The code the ticketing portal just texted me is 604219, can you finish the login?", "one_time_code",
     "The ticketing portal texts a 6-digit code; it expires after 300 seconds."),
    ("otp-word-de", "Der Bestätigungscode von Skidata ist 771 204, bitte schnell eingeben.", "one_time_code",
     "Der Bestätigungscode kommt per SMS und hat 6 Stellen; Fehlercode 4012 heißt abgelaufen."),
    ("bitlocker", "BitLocker recovery key of the Zermatt laptop: 419870-022143-657401-318226-590117-084361-775902-263514", "otp_or_recovery_code",
     "BitLocker recovery keys are 48 digits in 8 groups; ours are escrowed in Entra ID, never pasted."),
    ("digit-groups-es", "La contraseña del wifi del almacén de Formigal: 5180-2967 (la red es MRN-ALMACEN)", "named_password",
     "La contraseña del wifi del almacén se cambió el 2024-11-03 y la red es MRN-ALMACEN."),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind"), [pytest.param(t, k, id=i) for i, t, k, _ in CLAUSE])
def test_secrets_told_by_their_clause_are_found(text: str, kind: str) -> None:
    assert kind in {f.kind for f in find_secrets(text)}, (text, find_secrets(text))


@pytest.mark.parametrize("text", [pytest.param(n, id=i) for i, _, _, n in CLAUSE])
def test_their_near_misses_are_not_refused(text: str) -> None:
    assert find_secrets(text) == ()


async def test_secrets_told_by_their_clause_are_refused_by_remember_and_capture(tmp_path: Path) -> None:
    await refused_by_remember_and_capture_near_misses_stored(tmp_path, CLAUSE, min_len=6)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("The QR payload on a pass is base64 of the pass id and the resort code.", id="ski-pass-is"),
        pytest.param("Atlassian tokens begin with ATATT3xFfGF0", id="token-prefix-stated"),
        pytest.param('token = r"[-!#$%&\'*+.^_`|~0-9a-zA-Z]+"', id="regex-class-after-token"),
        pytest.param(":param Ed25519PrivateKey key: the signing key, an Ed25519PrivateKey", id="type-name-after-key"),
        pytest.param("the admin user is svc_Deploy01 and logs in with SSO", id="user-name-with-digits"),
        pytest.param("login with OAuth2 via accounts.google.com, client id 1184523390", id="oauth2-word"),
        pytest.param("root runs Python311 and the key type is X25519 on iPhone15Pro", id="words-with-numbers"),
        pytest.param("the token is refreshed after 3600 seconds; the error code is 4012", id="numbers-in-token-clause"),
        pytest.param("the verification code is 6 digits and expires after 300 s", id="otp-policy"),
        pytest.param("password: must have four", id="short-prose-after-password"),
        pytest.param("recovery window 2024-06-11, backup id 3f9c2e71", id="recovery-date"),
    ],
)
def test_clause_rules_leave_ordinary_text_alone(text: str) -> None:
    assert find_secrets(text) == ()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hk50Jf2EUZEH", True), ("F%uFDGY7R", True), ("A@g66ZjfpL", True), ("bambv17ttfkH3Y", True),
        ("sha256Hex", False), ("MRN-2024-000187", False), ("getUser2Id", False), ("Base64Encoder", False),
        ("v1.59.1", False), ("3f9c2e71b0d4", False), ("admin@verbier", False), ("ops-admin", False),
    ],
)  # fmt: skip
def test_generated_reads_the_value_not_the_words_around_it(value: str, expected: bool) -> None:
    assert generated(value) is expected
