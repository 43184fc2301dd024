"""Secrets with no digit or no code word, told by their slot or by being presented as themselves (issue 16, item 4;
capsec6, fitted on ``bench/data/capture/tarn.jsonl`` and the named dev misses of kestrel and sirocco): a value in a
Kubernetes ``name``/``value`` pair or a ``set NAME=…`` whose name says signing, token or password; letters alone after
"こちら"/"voici"/"here it is"; a bare "PIN 4821"; the six digits an authenticator shows; a comma-separated list of
backup codes, or a list of codes that runs past the 100 characters read after its word. Each with a near miss of the same subject that must be stored; every secret row fails on the detector
of main (db59fde)."""

# ruff: noqa: E501  (tables of realistic-looking fake values read better unwrapped)

from __future__ import annotations

from pathlib import Path

import pytest
from test_secrets import refused_by_remember_and_capture_near_misses_stored

from memstone.domain.secret_clause import generated_letters
from memstone.domain.secrets import find_secrets

# (id, text with a secret, the kind found, a near miss of the same subject that must not be refused)
SLOTS = [
    ("k8s-name-value", '```yaml\nenv:\n  - name: BILLING_WEBHOOK_SIGNING\n    value: "pQ7vLx2RkTz9WmNa4HcYe8Ud"\n```', "credential_slot",
     '```yaml\nenv:\n  - name: BILLING_WEBHOOK_URL\n    value: "https://billing.example/hooks/v2"\n  - name: BILLING_TOKEN_TTL\n    value: "3600"\n```'),
    ("json-name-value", '{"name": "SENTRY_AUTH_TOKEN", "value": "kVbTqWzRnMxLpYcHdJfGsAeU"}', "credential_slot",
     '{"name": "SENTRY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": "sentry", "key": "token"}}}'),
    ("hcl-block", 'variable "alerts_signing_key" {\n  type    = string\n  default = "Wq8rTz3KpLm2XvNb7YcHd4"\n}', "credential_slot",
     'variable "alerts_signing_key" {\n  type      = string\n  sensitive = true\n}\nvariable "alerts_region" {\n  default = "europe-west6"\n}'),
    ("set-pw", "set DEPLOY_PW=Tf4kq9ZmPw2x", "credential_slot",
     "set DEPLOY_PW from the vault before running deploy.cmd; DEPLOY_PW_MIN_LENGTH=12"),
    ("letters-kochira", "ストレージの API キーはこちら QmXkTrbWvHnLpZcY（読み取り専用）", "credential_in_clause",
     "ストレージの API キーはこちらの Vault にあります（読み取り専用）。"),
    ("letters-voici", "Le jeton du portail, le voici : hRtKwZmQbXnVpLsD", "credential_in_clause",
     "Le jeton du portail, le voici : il est dans Bitwarden, dossier Portail."),
    ("bare-pin", "Door of the plant room at the Lyon office: PIN 5830", "named_pin_or_code",
     "The PIN pad of the plant room at the Lyon office takes 4 or 6 digits."),
    ("authenticator-shows", "I'm at the Okta prompt and the authenticator shows 417 093 now", "one_time_code",
     "Okta logins use the authenticator app since 2023; codes rotate every 30 seconds."),
    ("codes-past-window", "Recovery codes of the shared Apple ID, printed for the safe of the Lyon office, 2nd floor:\n58203917  40918266  73160485  29574031  81640392  06713854", "otp_or_recovery_code",
     "Recovery codes of the shared Apple ID are printed and kept in the safe of the Lyon office; ticket 20241101."),
    ("backup-code-list", "Backup codes for the registrar account: x7kq2mfa, 9pd4tzrw, m3vn8cye, 5hbj6wqs", "otp_or_recovery_code",
     "Backup codes for the registrar account are in the vault; backup jobs 20241101, 20241102, 20241103 ran fine."),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind"), [pytest.param(t, k, id=i) for i, t, k, _ in SLOTS])
def test_secrets_told_by_their_slot_are_found(text: str, kind: str) -> None:
    assert kind in {f.kind for f in find_secrets(text)}, (text, find_secrets(text))


@pytest.mark.parametrize("text", [pytest.param(n, id=i) for i, _, _, n in SLOTS])
def test_their_near_misses_are_not_refused(text: str) -> None:
    assert find_secrets(text) == ()


async def test_secrets_told_by_their_slot_are_refused_by_remember_and_capture(tmp_path: Path) -> None:
    await refused_by_remember_and_capture_near_misses_stored(tmp_path, SLOTS, min_len=4)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            "```yaml\nauth:\n  token_ttl: 3600\n  signing_alg: RS256\n  password_min_length: 12\n```",
            id="yaml-settings",
        ),
        pytest.param("- name: SIGNING_KEY_PATH\n  value: /etc/keys/signing.pem", id="pair-path"),
        pytest.param('{"name": "API_TOKEN", "value": "${API_TOKEN}"}', id="pair-placeholder"),
        pytest.param("public_key: AbCdEfGhIjKlMnOp and sort_key=lambdaXy3Zq", id="public-and-words"),
        pytest.param("PASSWORD_HASHERS=Argon2PasswordHasher", id="class-name"),
        pytest.param("Here is the token format: ConsecteturAdipiscing", id="intro-words"),
        pytest.param("voici la clé de tri : HTTPServerRequestHandler", id="intro-camel"),
        pytest.param("Reverted commits, in order: 3f9a2c1d7e4b 8c2d1e9f0a3b 7a6b5c4d3e2f", id="sha-list"),
        pytest.param(
            "backup ids d6a3f0e2-1b4c-4e8a-9f7d-2c5b8a1e3f90, 5b1e8c2a-7d3f-4a9b-8e6c-1f2d3a4b5c6d", id="uuid-list"
        ),
        pytest.param("Theme colours are #1f6f8b and #f4a261; PIN field width 4", id="colours-pin-width"),
    ],
)
def test_ordinary_texts_are_left_alone(text: str) -> None:
    assert find_secrets(text) == ()


@pytest.mark.parametrize(
    ("value", "expected"),
    [("RNIJKpJBAwXlChNU", True), ("QmXkTrbWvHnLpZcY", True), ("ConsecteturAdipiscing", False),
     ("HTTPServerRequest", False), ("getUserByIdAndName", False), ("abcdefghijklmn", False), ("Short", False)],
)  # fmt: skip
def test_generated_letters(value: str, expected: bool) -> None:
    assert generated_letters(value) is expected
