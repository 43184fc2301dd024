"""Secrets with no slot, no credential word and no introduction, told by the value's shape and its place (issue 16,
item 4; capsec7, fitted on ``bench/data/capture/brisa.jsonl``): a generated value said in passing in a sentence of
any language, a value split over lines, a token in a URL query under a name that says nothing, a header of the
team's own naming. Each with a near miss of the same subject
that must be stored; every secret row fails on the detector of main (2232360)."""

# ruff: noqa: E501  (tables of realistic-looking fake values read better unwrapped)

from __future__ import annotations

from pathlib import Path

import pytest
from test_secrets import refused_by_remember_and_capture_near_misses_stored

from memstone.domain.secrets import find_secrets

# (id, text with a secret, the kind found, a near miss of the same subject that must not be refused)
SHAPES = [
    ("es-in-passing", "Para el panel de Render usa ops-agenda y Tq7wZk2mRx9B, mañana lo cambio.", "generated_value",
     "Para el panel de Render usa la cuenta ops-agenda con SSO; nadie comparte la sesión."),
    ("ja-pair", "検証環境の管理画面は kensho / bX4nQe8wLr2K で入れます。", "generated_value",
     "検証環境の管理画面は社内 SSO で入れます。バージョンは v2.14.3 です。"),
    ("it-pair", "per la stampante del magazzino usa operatore e Hf6pWz3nKq8T", "generated_value",
     "per la stampante del magazzino usa l'utente operatore; la porta è 9100."),
    ("split-lines", "The key is too long for one line, two halves:\nPz8kRw3nTq6mXv2L\nJb5yHc9fNd4sWg7E", "generated_value",
     "The fixture is too long for one line, two halves:\n3f9c2e1a8b7d4c6e\n5f0a9b8c7d6e5f4a"),
    ("header-own-name", 'call it with -H "X-Atelier-Partner: mK3vQ8zLw2TpR6nY" and nothing else', "generated_value",
     'call it with -H "X-Request-Id: 5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f" and nothing else'),
    ("quoted-in-prose", 'the wifi of the Porto shop: Atelier-Loja, "wN7qT2kZx5Rm"', "generated_value",
     'the wifi of the Porto shop is Atelier-Loja, colour #0E7C86 on the sign'),
    ("query-any-name", "curl 'https://api.tides.example/v1/table?port=417&k=Rv3Tq8ZmWx2LkP7nYc4H' every hour", "query_value",
     "curl 'https://api.tides.example/v1/table?port=417&station_id=Gq5Wm2TzKx8RnLp3Vb6D' every hour"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind"), [pytest.param(t, k, id=i) for i, t, k, _ in SHAPES])
def test_secrets_told_by_their_shape_are_found(text: str, kind: str) -> None:
    assert kind in {f.kind for f in find_secrets(text)}, (text, find_secrets(text))


@pytest.mark.parametrize("text", [pytest.param(n, id=i) for i, _, _, n in SHAPES])
def test_their_near_misses_are_not_refused(text: str) -> None:
    assert find_secrets(text) == ()


async def test_secrets_told_by_their_shape_are_refused_by_remember_and_capture(tmp_path: Path) -> None:
    await refused_by_remember_and_capture_near_misses_stored(tmp_path, SHAPES)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("from ipaddress import IPv4Address, IPv6Address, ip_address", id="code-names-import"),
        # kebab-case names after a credential word (a joined-words passphrase rule refused one on unseen data, stop 35)
        pytest.param("For the admin account we use vue-keycloak-sso-plugin now.", id="kebab-package"),
        pytest.param("Password rotation is handled by nightly-vault-rotate-job in prod", id="kebab-service"),
        pytest.param("    host: str | IPv4Address | IPv6Address", id="union-type"),
        pytest.param("Use camino's Utf8PathBuf and ChaCha20Poly1305 in the public API.", id="names-in-prose"),
        pytest.param("    'Base64UrlStr',\n    'GetPydanticSchema',", id="list-literal"),
        pytest.param("magic numbers 0x9123683E and 0x794C7630 name the filesystems", id="hex-literals"),
        pytest.param("Fixtures hold base64 like Ym9hcmQtcmVudGFs and dGVzdC1maXh0dXJl.", id="base64-text"),
        pytest.param("Customer ids look like cus_Q8mZt2xKp9RvLw; ULIDs like 01HV8ZK3Q4M7T2X9R5N6P8W1YB.", id="ids"),
        pytest.param(
            "Pin commit 3f9c2e1a8b7d4c6e5f0a9b8c7d6e5f4a3b2c1d0e; Node 20.11.1 on port 8080.", id="sha-version"
        ),
        pytest.param("Analytics is G-7XK2M9QZ4L and the migration 2024_03_11_split_rentals_v2.sql.", id="ga-file"),
        pytest.param("https://olaria.example/t/?order=3b241101&lang=fr&utm_source=Zq8vR2kLp0WnYt5X", id="query-utm"),
        pytest.param("the login page links to terms-of-service-and-privacy", id="kebab-with-function-word"),
        pytest.param("run with --prefetch-multiplier-low-memory-mode and the admin flag", id="cli-option"),
        pytest.param("self.frame.code.path = entry.frame.code.raw  # the admin token path", id="dotted-code"),
    ],
)
def test_code_shapes_are_left_alone(text: str) -> None:
    assert find_secrets(text) == ()


def test_a_long_line_of_many_values_is_read_for_code_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Found at stop 35: each standalone candidate re-read its whole line for code, so an 80 KB one-line text of
    # words and generated-looking values took 4.7 s to scan (0.24 s before the rule); each line is now read once.
    import random
    import re as _re

    from memstone.domain import secret_shape

    searched: list[int] = []

    class Counting:
        def __init__(self, pattern: _re.Pattern[str]) -> None:
            self.pattern = pattern

        def search(self, line: str) -> _re.Match[str] | None:
            searched.append(len(line))
            return self.pattern.search(line)

    monkeypatch.setattr(secret_shape, "_CODE_LINE", Counting(secret_shape._CODE_LINE))
    rng = random.Random(7)
    alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    values = ["".join(rng.choice(alphabet) for _ in range(14)) for _ in range(200)]
    text = " and ".join(values)  # one line
    assert secret_shape.generated_values(text, lambda v: False)
    assert len(searched) == 1
