"""Secret detection: find API keys, tokens, private keys and passwords before anything is stored.

:func:`find_secrets` returns :class:`SecretFinding` values (a kind and a character span). No finding, message or
``repr`` ever contains the secret itself, so a finding can be logged, shown to a model or stored in a refusal.

Three families of rules:

- **Formats** that are secrets wherever they appear: provider key prefixes (OpenAI ``sk-``/``sk-proj-``,
  Anthropic ``sk-ant-``, GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/``github_pat_``, AWS ``AKIA…``,
  Slack ``xox?-``, Google ``AIza``, Stripe ``sk_live_``/``rk_live_``/``sk_test_``, crates.io ``cio…``, npm
  ``npm_``, PyPI ``pypi-``, Hugging Face ``hf_``, SendGrid ``SG.``, Mailgun ``key-``, GitLab ``glpat-``,
  Twilio ``SK…``, Shopify ``shpat_``, DigitalOcean ``dop_v1_``, Square ``sq0atp-``, Databricks ``dapi``,
  age ``AGE-SECRET-KEY-1``, Telegram bot tokens, Azure ``AccountKey=``), JWTs, PEM private key blocks,
  passwords in URLs (``scheme://user:pass@host``) and ``Authorization: Bearer/Basic`` credentials.
- **Assignments**: a credential-like name (``api_key``, ``token``, ``secret``, ``password``, …) followed by
  ``=``, ``:``, ``is`` … and a value. Password-like names need a value that is not a placeholder; the others
  need a high-entropy value (at least 16 characters, two character classes, Shannon entropy ≥ 3.3 bits/char).

- **Near a credential word**: a long, random-looking token (≥ 20 characters, letters and digits, high entropy,
  not a hex digest, UUID or ULID) within 80 characters after "key", "token", "secret", "password",
  "credentials"…, whatever the phrasing. This is the rule for formats no list names yet.

What is deliberately *not* a secret (tested): commit hashes, UUIDs, ULIDs, ``sha256:`` digests and other bare
hex, prose about "tokens" and "passwords", type annotations (``token: str``), environment-variable references
(``$TOKEN``, ``${DB_PASSWORD}``, ``os.environ["X"]``) and obvious placeholders (``<password>``, ``xxxx``,
``your-api-key``, ``***``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["SecretFinding", "contains_secret", "describe_findings", "find_secrets", "redact"]


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class SecretFinding:
    """One secret found in a text: what it looks like and where it is (``text[start:end]``), never its value."""

    start: int
    end: int
    kind: str

    def __str__(self) -> str:
        return f"{self.kind} at characters {self.start}-{self.end}"

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "start": self.start, "end": self.end}


# ------------------------------------------------------------------------------------------- format rules
# Each rule: (kind, pattern, group). ``group`` is the capture group holding the secret (0 = whole match).
_B = r"(?<![A-Za-z0-9_\-])"  # a token boundary that treats - and _ as word characters
_E = r"(?![A-Za-z0-9_\-])"

_FORMAT_RULES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?",
            re.S,
        ),
        0,
    ),
    ("anthropic_api_key", re.compile(_B + r"sk-ant-[A-Za-z0-9_\-]{20,}"), 0),
    ("openai_api_key", re.compile(_B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}"), 0),
    ("openai_api_key", re.compile(_B + r"sk-(?!ant-)[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}"), 0),
    (
        "openai_api_key",
        re.compile(_B + r"sk-(?!ant-)(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{32,}" + _E),
        0,
    ),
    ("github_token", re.compile(_B + r"gh[pousr]_[A-Za-z0-9]{30,}" + _E), 0),
    ("github_token", re.compile(_B + r"github_pat_[A-Za-z0-9_]{22,}" + _E), 0),
    ("aws_access_key_id", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"), 0),
    ("slack_token", re.compile(_B + r"xox[abposr]-(?:[0-9]+-)*[A-Za-z0-9\-]{10,}"), 0),
    ("slack_webhook", re.compile(r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"), 0),
    ("google_api_key", re.compile(_B + r"AIza[0-9A-Za-z_\-]{35}" + _E), 0),
    ("stripe_secret_key", re.compile(_B + r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}" + _E), 0),
    ("crates_io_token", re.compile(r"(?<![A-Za-z0-9])cio[A-Za-z0-9]{32}(?![A-Za-z0-9])"), 0),
    ("npm_token", re.compile(_B + r"npm_[A-Za-z0-9]{36}" + _E), 0),
    ("huggingface_token", re.compile(_B + r"hf_[A-Za-z0-9]{30,}" + _E), 0),
    ("sendgrid_api_key", re.compile(_B + r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}" + _E), 0),
    ("mailgun_api_key", re.compile(_B + r"key-[0-9a-f]{32}" + _E), 0),
    ("gitlab_token", re.compile(_B + r"gl(?:pat|dt|ptt|rt)-[A-Za-z0-9_\-]{20,}" + _E), 0),
    ("twilio_api_key", re.compile(r"(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])"), 0),
    ("shopify_token", re.compile(_B + r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}" + _E), 0),
    ("digitalocean_token", re.compile(_B + r"do[opr]_v1_[0-9a-f]{64}" + _E), 0),
    ("square_token", re.compile(_B + r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,}" + _E), 0),
    ("databricks_token", re.compile(_B + r"dapi[0-9a-f]{32}" + _E), 0),
    ("age_secret_key", re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{58}"), 0),
    ("telegram_bot_token", re.compile(r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])"), 0),
    ("azure_storage_key", re.compile(r"(?i)AccountKey=([A-Za-z0-9+/]{40,}={0,2})"), 1),
    ("pypi_token", re.compile(_B + r"pypi-AgE[A-Za-z0-9_\-]{50,}"), 0),
    (
        "jwt",
        re.compile(_B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _E),
        0,
    ),
    # scheme://user:password@host — the password group must not be a placeholder (checked below).
    (
        "url_password",
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\"'<>]*:([^\s@/\"'<>]+)@[A-Za-z0-9.\-\[\]]"),
        1,
    ),
    ("bearer_token", re.compile(r"(?i)\bBearer\s+([A-Za-z0-9\-._~+/]{20,}=*)"), 1),
    ("basic_auth", re.compile(r"(?i)\bAuthorization:\s*Basic\s+([A-Za-z0-9+/]{12,}={0,2})"), 1),
)

# ------------------------------------------------------------------------------------------- assignments
_PASSWORD_NAMES = r"(?:passwd|password|passphrase|pwd|pass)"
_SECRET_NAMES = (
    r"(?:api[_\-\s]?key|apikey|access[_\-\s]?key(?:[_\-\s]?id)?|secret(?:[_\-\s]?access)?(?:[_\-\s]?key)?"
    r"|client[_\-\s]?secret|private[_\-\s]?key|auth[_\-\s]?token|access[_\-\s]?token|refresh[_\-\s]?token"
    r"|token|dsn|credentials?|signing[_\-\s]?key|webhook[_\-\s]?secret)"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?P<name>\b[A-Za-z0-9_.\-]*?(?:" + _PASSWORD_NAMES + "|" + _SECRET_NAMES + r")[A-Za-z0-9_\-]*)"
    r"[\"']?\s*(?::=|=>|=|:|\bis\b)\s*(?P<quote>[\"'`]?)(?P<value>[^\s\"'`,;]{6,})"
)
# Names that contain a credential word but are not credentials.
_NOT_CREDENTIAL_NAME = re.compile(
    r"(?i)(?:tokeniz|tokens\b|_tokens|max_tokens|token_count|token_type|token_url|token_endpoint|passthrough"
    r"|password_(?:policy|length|field|hash(?:er|ing)?|reset)|compass|bypass|passenger|passport|keyboard)"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%\(?[A-Za-z_]+\)?s?|<[^>]*>|\{\{?[^}]*\}?\}|\[[^\]]*\]"
    r"|x{3,}|\*{3,}|\.{3,}|_+|-+|(?:your|my|the|some|example|sample|dummy|fake|test|placeholder|changeme"
    r"|redacted|hidden|secret|password|passwd|token|none|null|nil|undefined|empty|required|optional|str|string"
    r"|int|bool|bytes|true|false)(?:[_\-]?(?:api|key|token|secret|password|here|value|string))*)$"
)
_CODE_REFERENCE = re.compile(
    r"(?i)^(?:os\.environ|os\.getenv|getenv|process\.env|env\(|env\.|environ|settings\.|config\.|self\.|"
    r"secrets\.|vault:|ssm:|arn:|Optional\[|str\b|dict\[|list\[|None\b)"
)
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

# Any long random-looking token shortly after a credential word, in any phrasing ("the sendgrid key for the
# mailer: SG…", "here's my token so you can pull it: …"): the rule that catches formats no list names yet.
_CREDENTIAL_WORD = re.compile(
    r"(?i)\b(?:api[\s_-]?keys?|keys?|tokens?|secrets?|passwords?|passwd|passphrase|credentials?|creds|auth)\b"
)
_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-./+=])([A-Za-z0-9][A-Za-z0-9_\-./+=]{19,})(?![A-Za-z0-9_\-./+=])")
_NEAR_CHARS = 80

# A 40-character AWS secret access key, only next to an AWS key id or an aws/secret keyword.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_AWS_CONTEXT = re.compile(r"(?i)aws|secret|AKIA|ASIA")


def shannon_entropy(value: str) -> float:
    """Bits per character of ``value`` (0.0 for an empty string)."""
    if not value:
        return 0.0
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def _is_placeholder(value: str) -> bool:
    v = value.strip("\"'`.,;:)(")
    return bool(_PLACEHOLDER.match(v)) or bool(_CODE_REFERENCE.match(v)) or len(set(v)) <= 2


def _high_entropy(value: str) -> bool:
    v = value.strip("\"'`.,;:)(")
    if len(v) < 16 or _classes(v) < 2:
        return False
    if _UUID.match(v):
        return True  # a UUID assigned to a credential name is a credential (e.g. Heroku API keys)
    if _HEX.match(v):
        return len(v) >= 20  # hex API keys exist; a bare hex value is only a secret in an assignment
    return shannon_entropy(v) >= 3.3


def _random_token(value: str) -> bool:
    """A token that looks machine-generated: long, mixed letters and digits, high entropy, not a hash or an id.

    Paths, URLs, dotted names, hex digests (commits, sha256), UUIDs and ULIDs are not random tokens here.
    """
    v = value.rstrip(".,;:")
    if len(v) < 20 or "://" in v:
        return False
    if _HEX.match(v) or _UUID.match(v) or _ULID.match(v):
        return False
    parts = re.split(r"[/.]", v)
    if len(parts) > 1 and all(len(p) < 16 or p.isalpha() for p in parts):
        return False  # paths (src/a/b.py) and dotted names (com.acme.items) are made of short words
    letters = sum(c.isalpha() for c in v)
    digits = sum(c.isdigit() for c in v)
    if letters < 4 or digits < 2:
        return False  # words-with-dashes-like-this and plain numbers are not keys
    if not any(c.islower() for c in v) or not any(c.isupper() for c in v):
        return len(v) >= 32 and shannon_entropy(v) >= 4.0
    return shannon_entropy(v) >= 3.7


def _password_like(value: str) -> bool:
    v = value.strip("\"'`.,;:)(")
    if len(v) < 6 or _is_placeholder(v):
        return False
    # A real password has a digit or a symbol, or is long and varied; "required" or "rotation" is prose.
    return (_classes(v) >= 2 and (any(c.isdigit() for c in v) or any(not c.isalnum() for c in v))) or (
        len(v) >= 12 and shannon_entropy(v) >= 3.5
    )


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Every secret-looking span in ``text``, ordered by position; overlapping findings are merged.

    >>> find_secrets("key: sk-proj-" + "a1B2" * 10)[0].kind
    'openai_api_key'
    >>> find_secrets("commit 9c1d4f2e7a3b5c8d0e6f1a2b3c4d5e6f7a8b9c0d, never log passwords")
    ()
    """
    if not text:
        return ()
    found: list[SecretFinding] = []
    for kind, pattern, group in _FORMAT_RULES:
        for m in pattern.finditer(text):
            if kind == "url_password" and _is_placeholder(m.group(1)):
                continue
            if kind == "bearer_token" and not _high_entropy(m.group(1)):
                continue
            if kind == "aws_access_key_id" and m.group(0).endswith("EXAMPLE"):
                continue  # AWS's documented example key id (AKIAIOSFODNN7EXAMPLE)
            found.append(SecretFinding(kind=kind, start=m.start(group), end=m.end(group)))
    for m in _ASSIGNMENT.finditer(text):
        name, value = m.group("name"), m.group("value")
        if _NOT_CREDENTIAL_NAME.search(name) or _is_placeholder(value):
            continue
        is_password = re.search(_PASSWORD_NAMES, name, re.I) is not None
        ok = _password_like(value) if is_password else _high_entropy(value)
        if not ok and is_password and m.group("quote"):
            ok = len(value) >= 6 and not _is_placeholder(value)
        if ok:
            found.append(
                SecretFinding(
                    kind="password_assignment" if is_password else "credential_assignment",
                    start=m.start("value"),
                    end=m.end("value"),
                )
            )
    for word in _CREDENTIAL_WORD.finditer(text):
        window_end = min(len(text), word.end() + _NEAR_CHARS)
        for m in _TOKEN.finditer(text, word.end(), window_end):
            if _random_token(m.group(1)):
                found.append(SecretFinding(kind="credential_near_keyword", start=m.start(1), end=m.end(1)))
    if _AWS_CONTEXT.search(text):
        for m in _AWS_SECRET.finditer(text):
            value = m.group(1)
            window = text[max(0, m.start() - 120) : m.start()]
            if _classes(value) >= 3 and shannon_entropy(value) >= 4.0 and _AWS_CONTEXT.search(window):
                found.append(SecretFinding(kind="aws_secret_access_key", start=m.start(1), end=m.end(1)))
    return _merge(found)


def _merge(found: list[SecretFinding]) -> tuple[SecretFinding, ...]:
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    out: list[SecretFinding] = []
    for f in found:
        if out and f.start < out[-1].end:
            last = out[-1]
            if f.end > last.end:
                out[-1] = SecretFinding(kind=last.kind, start=last.start, end=f.end)
            continue
        out.append(f)
    return tuple(out)


def contains_secret(text: str) -> bool:
    """True when :func:`find_secrets` finds anything in ``text``."""
    return bool(find_secrets(text))


def redact(text: str, findings: tuple[SecretFinding, ...] | None = None) -> str:
    """``text`` with every secret span replaced by ``[REDACTED:<kind>]`` (for logs and error messages).

    >>> redact("token = " + "Zx9" * 8)
    'token = [REDACTED:credential_assignment]'
    """
    spans = find_secrets(text) if findings is None else findings
    out: list[str] = []
    pos = 0
    for f in sorted(spans):
        out.append(text[pos : f.start])
        out.append(f"[REDACTED:{f.kind}]")
        pos = max(pos, f.end)
    out.append(text[pos:])
    return "".join(out)


def describe_findings(findings: tuple[SecretFinding, ...], *, where: str = "the text") -> str:
    """A one-line refusal reason naming the kinds and positions, never the values."""
    kinds = sorted({f.kind for f in findings})
    spans = ", ".join(f"{f.start}-{f.end}" for f in findings[:5])
    more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
    return f"{where} contains what looks like a secret ({', '.join(kinds)}; characters {spans}{more})"
