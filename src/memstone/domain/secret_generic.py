"""Generic secret shapes no provider list names (issue 16, item 4), for :mod:`memstone.domain.secrets`.

- **credential query parameters**: ``?key=…``, ``&sig=…``, ``&access_token=…`` in a URL of any scheme, when the
  value looks random (after percent-decoding);
- **a name that ends in a credential word** in camelCase or PascalCase (``ApiSecret``, ``botToken``) and a random
  token within 80 characters after it, as in XML elements and attributes (``<Setting name="ApiSecret">…``);
- **a user and password pair** after a login word, in prose or on a command line (``login: admin / …``, ``user
  admin, pass …``, ``credentials are admin:…``), when the second part reads as a password;
- **a provider-like prefix and a random body**: one to three short lowercase words joined by ``_`` or ``-`` and a
  body of ≥ 20 letters and digits that looks generated (``acme_live_…``, ``xk-…``): the shape of most API keys.

Each returns ``(kind, start, end)`` spans; the value checks are passed in by the caller (one detector: the
entropy and placeholder rules live in :mod:`memstone.domain.secrets`). Not: hashes, UUIDs, identifiers made of
words, paths, placeholders (tested; ``bench/bench_secrets_fp.py`` measures the false positives).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote

__all__ = [
    "credential_pairs",
    "hex_private_keys",
    "passphrases",
    "prefixed_tokens",
    "query_credentials",
    "suffix_named_tokens",
]

Span = tuple[str, int, int]
Check = Callable[[str], bool]

_QUERY = re.compile(
    r"(?i)[?&;](?P<name>[a-z0-9_\-.]*(?:key|token|secret|sig|signature|password|passwd|pwd|auth|apikey|credential)"
    r"[a-z0-9_\-]*)=(?P<value>[^&\s#\"'<>]{12,})"
)
_NOT_QUERY_NAME = re.compile(r"(?i)(?:^|_)(?:type|id|name|url|uri|length|count|method|format|hint|policy)$|keyword")


def query_credentials(text: str, random_value: Check) -> list[Span]:
    """``?key=…``/``&sig=…`` query parameters whose (percent-decoded) value is random."""
    out: list[Span] = []
    if "=" not in text:
        return out
    for m in _QUERY.finditer(text):
        if _NOT_QUERY_NAME.search(m.group("name")):
            continue
        if random_value(unquote(m.group("value"))):
            out.append(("url_query_credential", m.start("value"), m.end("value")))
    return out


_SUFFIX_NAME = re.compile(
    r"(?<=[a-z0-9])(?:Secret|Token|ApiKey|AccessKey|PrivateKey|Password|Passwd)s?(?![a-z])"
    r"|(?<=[A-Z])(?:KEY|TOKEN|SECRET)(?![A-Za-z])"  # UKEY, APPKEY, APITOKEN
)
_NEAR = 80
_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-./+=])([A-Za-z0-9][A-Za-z0-9_\-./+=]{15,})(?![A-Za-z0-9_\-./+=])")
_NAMEISH = re.compile(r"(?i)key|token|secret|passw|credential|public|private")


def suffix_named_tokens(text: str, random_token: Check) -> list[Span]:
    """A random token shortly after a camelCase/PascalCase name ending in a credential word (``ApiSecret``)."""
    out: list[Span] = []
    for word in _SUFFIX_NAME.finditer(text):
        line_end = text.find("\n", word.end())
        end = min(len(text), word.end() + _NEAR, line_end if line_end >= 0 else len(text))
        for m in _TOKEN.finditer(text, word.end(), end):
            value = m.group(1)
            if _NAMEISH.search(value):
                continue  # another name or type (MLKEM768X25519PrivateKey), not a value
            if random_token(value):
                out.append(("credential_near_keyword", m.start(1), m.end(1)))
                break
    return out


_PAIR = re.compile(
    r"(?i)\b(?:login|log in|logins?|credentials?|creds|account|user(?:name)?|usuario|utilisateur|usuário|utente"
    r"|benutzer|ユーザー|用户)\b[^\n]{0,24}?(?<![\w@.\-])(?P<user>[\w.@\-]{2,40})\s*(?:/|:|,\s*(?:pass(?:word)?|pwd"
    r"|pw|mdp|senha|contraseña|passwort)\s*:?)\s*(?P<value>[^\s,;'\"`<>]{8,64})"
)


def credential_pairs(text: str, password_like: Check) -> list[Span]:
    """``admin / s3cr3t!Pw`` after a login word: the second part when it reads as a password."""
    out: list[Span] = []
    for m in _PAIR.finditer(text):
        value = m.group("value").rstrip(".!?)")
        if "/" in value or "://" in text[m.start("user") : m.end("value")]:
            continue  # a path or a URL (which the URL rules read)
        if password_like(value):
            out.append(("credential_pair", m.start("value"), m.start("value") + len(value)))
    return out


_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9_\-./+=])(?P<prefix>[a-z][a-z0-9]{1,9}(?:[_\-][a-z0-9]{2,8}){0,2}[_\-])"
    r"(?P<body>[A-Za-z0-9]{20,64})(?![A-Za-z0-9_\-./+=])"
)
_WORDS = re.compile(r"[A-Z]?[a-z]{3,}")


def prefixed_tokens(text: str, random_body: Check) -> list[Span]:
    """``acme_live_Xy…``: a short lowercase prefix, then a generated body (mixed case and digits, high entropy,
    not made of words)."""
    out: list[Span] = []
    for m in _PREFIXED.finditer(text):
        body = m.group("body")
        if sum(c.isdigit() for c in body) < 2 or not (
            any(c.islower() for c in body) and any(c.isupper() for c in body)
        ):
            continue
        if sum(len(w) for w in _WORDS.findall(body)) >= 0.5 * len(body):
            continue  # test_PasswordResetFlow2Works: words
        if random_body(body):
            out.append(("prefixed_token", m.start(), m.end()))
    return out


# A 256-bit hex private key (Ethereum, ed25519 seeds) after a key word: "deployer key …: 0x1e1e…". A 0x address has
# 40 hex digits and a transaction hash is named as one ("tx hash 0x…"), so neither matches.
_KEY_WORD = re.compile(
    r"(?i)\b(?:private|secret|signing|deployer|wallet|signer|owner|admin)?[\s_-]?keys?\b|私钥|秘密鍵"
)
_HEX_KEY = re.compile(r"(?<![0-9A-Za-z])(?:0x)?([0-9a-fA-F]{64})(?![0-9A-Za-z])")
_NOT_KEY = re.compile(r"(?i)\b(?:hash|tx|transaction|block|digest|sha\w*|commit|checksum|address|public)\b")


def hex_private_keys(text: str) -> list[Span]:
    """A 64-hex-digit value within 64 characters after a key word, unless a word between makes it a hash."""
    out: list[Span] = []
    for word in _KEY_WORD.finditer(text):
        m = _HEX_KEY.search(text, word.end(), min(len(text), word.end() + 64 + 66))
        if (
            m
            and m.start() - word.end() <= 64
            and not _NOT_KEY.search(text, word.end(), m.start())
            and len(set(m.group(1))) > 4
        ):
            out.append(("credential_near_keyword", m.start(1), m.end(1)))
    return out


# A passphrase of several words after "passphrase/password … is": "the passphrase is harbour lantern 42 quietly".
_PASSPHRASE = re.compile(
    r"(?i)\b(?:passphrase|pass phrase|password|passwort|mot de passe|contraseña|senha|frase secreta)\s+"
    r"(?:is|ist|est|es|é|è|:|=|lautet)\s*[:\"'“«]?\s*(?P<value>(?-i:[a-z0-9'\-]+(?:\s+[a-z0-9'\-]+){2,6}))\s*[\"'”»]?"
    r"(?=\s*(?:[.,;!)]|$))"
)


def passphrases(text: str, is_function_word: Check) -> list[Span]:
    """Three to seven lowercase words (one with a digit, or none a function word) given as a passphrase."""
    out: list[Span] = []
    for m in _PASSPHRASE.finditer(text):
        words = m.group("value").split()
        if any(is_function_word(w) for w in words):
            continue  # "the password is stored in the vault": prose
        if any(any(c.isdigit() for c in w) for w in words) or len(words) >= 4:
            out.append(("passphrase_in_prose", m.start("value"), m.end("value")))
    return out
