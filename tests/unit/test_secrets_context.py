"""Secrets told by their context (2FA seeds, recovery codes, values named after them, described passwords,
Kubernetes Secret values, credential words in other languages) and public values that only look like secrets
(password hashes, SSH and EC public keys): each shape with its near miss, through the detector, ``remember`` and
``capture`` (issue 16, item 4; found on the fresh dev project ``bench/data/capture/werkbank.jsonl``)."""

# ruff: noqa: E501  (tables of realistic-looking fake keys read better unwrapped)

from __future__ import annotations

import base64
import random
import string
from pathlib import Path

import pytest
from test_secrets import refused_by_remember_and_capture_near_misses_stored

from memstone.domain.secrets import find_secrets

_RNG = random.Random(1206)
ALNUM = string.ascii_letters + string.digits
B32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"


def rnd(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# (id, text with a secret, the kind found, a near miss of the same shape that must not be refused)
CONTEXT = [
    ("totp-spaced-de", f"TOTP-Secret fürs Ops-Konto: {' '.join(rnd(4, B32) for _ in range(8))}", "otp_or_recovery_code",
     "Das Ops-Konto hat TOTP; die Geräte-ID ist 3 8 12 und der Build 2024 06 11."),
    ("totp-uri-seed", f"add it to your authenticator: {rnd(32, B32)}", "otp_or_recovery_code",
     "add it to your authenticator app, the issuer is Werkbank and the period is 30 s"),
    ("recovery-zh", f"阿里云主账号的恢复码：{rnd(4, B32)}-{rnd(4, B32)}-{rnd(4, B32)}，{rnd(4, B32)}-{rnd(4, B32)}-{rnd(4, B32)}", "otp_or_recovery_code",
     "恢复码要打印出来锁进保险柜，不要发到群里。订单号是 WB-20240611-8F3K2Q。"),
    ("recovery-en-hex", f"GitHub recovery codes for the bot:\n{rnd(5, HEX)}-{rnd(5, HEX)}\n{rnd(5, HEX)}-{rnd(5, HEX)}", "otp_or_recovery_code",
     "GitHub recovery codes for the bot are in the safe, see docs/ops/recovery.md (updated 2024-06-11)."),
    ("recovery-fr", f"Codes de récupération du compte admin : {rnd(4)}-{rnd(4)} {rnd(4)}-{rnd(4)}", "otp_or_recovery_code",
     "Codes de récupération : on en génère dix, ils sont dans le coffre depuis la version 2.4-beta."),
    ("named-after-code-span", f"use `{rnd(16)}` as the HMAC key for the kiosk signatures", "credential_named_after",
     "use `kiosk_signature_v2` as the HMAC key name for the kiosk signatures"),
    ("named-after-es", f"«{rnd(14)}» es la clave del panel de Stripe, no la compartas", "credential_named_after",
     "«sha256-Base64Url» es el formato de la clave, no la clave"),
    ("described-en", "The admin password on the tablets is the name of the shop cat with a capital M followed by 2024!", "described_password",
     "The admin password on the tablets is rotated every 90 days and stored in 1Password."),
    ("described-de", "Das Passwort für das WLAN ist der Name vom Hund, gefolgt von 1999 und einem Ausrufezeichen!", "described_password",
     "Das Passwort für das WLAN ist im Tresor, es wird nach 30 Tagen gefolgt von einer Mail erneuert."),
    ("k8s-secret-short-b64", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: door\ndata:\n  pin: " + base64.b64encode(b"48213977").decode(), "kubernetes_secret_value",
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: door\ndata:\n  pin-length: OA==\n  host: ZGIuaW50ZXJuYWw="),
    ("k8s-secret-stringdata", "kind: Secret\nstringData:\n  smtp-auth: mail-" + rnd(6), "kubernetes_secret_value",
     "kind: Secret\nstringData:\n  smtp-auth: <set-me>\n  smtp-user: changeme"),
    ("jeton-hex-fr", f"Mon jeton d'accès personnel pour l'API interne : {rnd(40, HEX)} (il expire en décembre).", "credential_near_keyword",
     f"Le jeton de l'API interne expire trop tôt, corrigé dans le commit {rnd(40, HEX)}."),
    ("backup-codes-digits-es", f"Códigos de respaldo de Google Workspace: {rnd(4, '0123456789')} {rnd(4, '0123456789')}, {rnd(4, '0123456789')} {rnd(4, '0123456789')}.", "otp_or_recovery_code",
     "Códigos de respaldo: se imprimen el 2024 0611 y se guardan 10 juntos."),
    ("login-label-then-pair", "Login for the Hetzner robot panel: tintero-ops / Rk8!mvT3qz (Marta set it up)", "credential_pair",
     "Login for the Hetzner robot panel: tintero-ops / see the ops vault (Marta set it up)"),
    ("basic-auth-code-span", "the staging basic-auth is `printer:Cmyk-7731` if you need to click around", "credential_pair",
     "the staging basic-auth is `printer:$STAGING_PASS` if you need to click around"),
    ("pod-env-name-value", f'env:\n  - name: DEPOSIT_API_TOKEN\n    value: "{rnd(24)}"', "secret_named_value",
     'env:\n  - name: DEPOSIT_API_TOKEN\n    valueFrom:\n      secretKeyRef: {name: deposit, key: token}'),
    ("ecs-name-value-json", f'"environment": [{{"name": "PG_PASSWORD", "value": "Gal8i-{rnd(6)}"}}]', "secret_named_value",
     '"environment": [{"name": "PG_HOST", "value": "db-1.internal"}]'),
    ("export-mid-line-ko", f"슬랙 봇 토큰 말고 이거 써요: export HB_ALIMTALK_KEY={rnd(12)}", "secret_named_value",
     "이거 써요: export HB_CACHE_KEY=v3deps2024 그리고 export HB_ALIMTALK_KEY=$ALIMTALK_KEY"),
    ("lingpai-hex-zh", f"内部 API 的令牌，测试环境用的：{rnd(40, HEX)}", "password_near_keyword",
     f"令牌相关的修复在这个提交里：{rnd(40, HEX)}"),
]  # fmt: skip

# Public values a rule used to refuse: a password hash, an SSH public key, an EC public point, a named public key.
PUBLIC = [
    pytest.param(
        f"Nutzerpasswörter hashen wir mit Argon2id: $argon2id$v=19$m=65536,t=3,p=4${rnd(22)}${rnd(43)}", id="argon2-phc"
    ),
    pytest.param(f"bcrypt hash of the fixture user: $2b$12${rnd(53, ALNUM + './')}", id="bcrypt"),
    pytest.param(
        f"The deploy key's public half is `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rnd(43)} deploy@werkbank`.",
        id="ssh-public-key",
    ),
    pytest.param(
        f"La clé publique VAPID des notifications push est {b64url(bytes([4]) + _RNG.randbytes(64))} ; elle est publique.",
        id="vapid-fr",
    ),
    pytest.param(f"VAPID public key for push: {b64url(bytes([4]) + _RNG.randbytes(64))}", id="vapid-en"),
    pytest.param(f"公钥（给前端验签用）：{rnd(44, ALNUM + '+/')}", id="public-key-zh"),
    pytest.param(
        f"The token refresh race was fixed in {rnd(40, HEX)}; don't revert that commit.",
        id="hex-named-a-commit-after-it",
    ),
    pytest.param(f"The Stripe publishable key pk_live_{rnd(24)} goes in the frontend bundle.", id="stripe-publishable"),
]


# Lines of installed packages the widened rules refused once (bench/bench_secrets_fp.py --lines 1000000).
PACKAGE_LINES = [
    pytest.param(
        "- Fix seed/reset state initialization in xxh32 and xxh64 (unlikely to affect normal usage)",
        id="seed-then-words",
    ),
    pytest.param(
        '<img alt="Shows a bar chart." src="https://user-images.githubusercontent.com/1309177/232603516-4fb4892d-585c-4b20-b810-3db9161831e4.svg">',
        id="user-in-a-host-name",
    ),
    pytest.param("the random seed is internationalization, a word", id="seed-then-a-long-word"),
    pytest.param('SPAN_KEY = "current-span"', id="constant-key-name"),
    pytest.param(
        "The app reads the database password from arn:aws:secretsmanager:ap-northeast-2:123456789012:secret:prod/db-Ab3dEf.",
        id="arn-of-a-secret",
    ),
]


@pytest.mark.parametrize("text", PACKAGE_LINES)
def test_package_lines_the_widened_rules_once_refused_are_not_refused(text: str) -> None:
    assert find_secrets(text) == ()


@pytest.mark.parametrize(("text", "kind"), [pytest.param(t, k, id=i) for i, t, k, _ in CONTEXT])
def test_secrets_told_by_their_context_are_found(text: str, kind: str) -> None:
    found = find_secrets(text)
    assert kind in {f.kind for f in found}, (text, found)


@pytest.mark.parametrize("text", [pytest.param(n, id=i) for i, _, _, n in CONTEXT])
def test_their_near_misses_are_not_refused(text: str) -> None:
    assert find_secrets(text) == ()


@pytest.mark.parametrize("text", PUBLIC)
def test_public_values_of_random_shape_are_not_refused(text: str) -> None:
    assert find_secrets(text) == ()


def test_a_private_key_after_the_words_public_key_is_still_refused() -> None:
    text = f"I don't have the public key, only the private one: {rnd(44, ALNUM + '+/')}"
    assert find_secrets(text)


async def test_context_rows_are_refused_by_remember_and_capture_and_their_near_misses_stored(tmp_path: Path) -> None:
    public = tuple(str(p.values[0]) for p in PUBLIC)
    await refused_by_remember_and_capture_near_misses_stored(tmp_path, CONTEXT, also_stored=public)
