"""Secret detection: find API keys, tokens, private keys and passwords before anything is stored.

:func:`find_secrets` returns :class:`SecretFinding` values (a kind and a character span). No finding, message or
``repr`` ever contains the secret itself, so a finding can be logged, shown to a model or stored in a refusal.

Four families of rules:

- **Formats** that are secrets wherever they appear: the provider token formats of
  :mod:`memstone.domain.secret_formats` (one rule per documented prefix and shape, ~100 of them: AI providers,
  code hosting, registries, chat and mail, payments, clouds, observability, PEM/PGP/PuTTY private keys, JWTs,
  passwords in URLs, ``Authorization`` headers, ``mysql -p…``/``--password …`` on a command line), with the
  checks a regex cannot express in :func:`_format_match_ok` (placeholders, defaults, decodable parts).
- **Assignments**: a credential-like name (``api_key``, ``token``, ``secret``, ``password``, …) followed by
  ``=``, ``:``, ``is`` … and a value. Password-like names need a value that is not a placeholder; the others
  need a high-entropy value (at least 16 characters, two character classes, Shannon entropy ≥ 3.3 bits/char).
- **Near a credential word**: a long, random-looking token (≥ 20 characters, letters and digits, high entropy,
  not a hex digest, UUID or ULID) within 80 characters after "key", "token", "secret", "password",
  "credentials"…, whatever the phrasing; and a password-like value (digits, letters, symbols) within 60
  characters after a password word in English, German, French, Spanish, Chinese, Japanese and more (``Passwort``,
  ``mdp``, ``clave``, ``密码``, ``パスワード``), with or without a space before it; a UUID or ≥ 32 hex digits right
  after a word naming a credential ("Heroku API key 3fa8…"), a Twilio auth token beside its ``AC…`` account SID.
  Secrets of no format told by the word naming them (a door code, a wifi key), card numbers, BIP39 phrases and
  Basic credentials: :mod:`memstone.domain.secret_named`.
- **Shape alone**: a ``.env`` line ``NAME=value`` with a long random value, whatever the name; and the entropy rule
  for formats no list names: ≥ 32 base64/alphanumeric characters with mixed case, ≥ 3 digits, ≥ 4.3 bits/char,
  not a digest, an identifier made of words, an alphabet, or base64 that decodes to text. With no name, word or
  slot at all: a generated value standing alone in prose or on its own line, a generated value in any URL query
  parameter (:mod:`memstone.domain.secret_shape`).

Not secrets (tested): commit hashes, UUIDs, ULIDs, ``sha256:`` digests, bare hex, prose about "tokens" and
"passwords", type annotations (``token: str``), environment-variable references (``$TOKEN``, ``${DB_PASSWORD}``,
``os.environ["X"]``), placeholders (``<password>``, ``xxxx``, ``your-api-key``, ``***``), code on the right of an
assignment (``password = get_auth(proxy)``), base64 test data. ``bench/bench_secrets_fp.py`` measures false positives.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from . import secret_context as _ctx
from . import secret_named as _named
from .analyzer import STOPWORDS
from .secret_formats import CaseFree, FormatRule, anchored_rules, b64decode_loose, decodes_to, fold_ascii
from .secret_formats import file_magic as _file_magic
from .secret_formats import text_base64 as _printable_base64
from .secret_generic import (
    ak_sk_pairs,
    credential_pairs,
    hex_private_keys,
    keyed_ids,
    named_literals,
    passphrases,
    prefixed_tokens,
    query_credentials,
    seed_phrases,
    suffix_named_tokens,
    values_as_password,
)

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


# ------------------------------------------------------------------------------------------- assignments
_PASSWORD_NAMES = r"(?:passwd|password|passphrase|pwd|pass)"
_SECRET_NAMES = (
    r"(?:api[_\-\s]?key|apikey|access[_\-\s]?key(?:[_\-\s]?id)?|secret(?:[_\-\s]?access)?(?:[_\-\s]?key)?"
    r"|client[_\-\s]?secret|private[_\-\s]?key|auth[_\-\s]?token|access[_\-\s]?token|refresh[_\-\s]?token"
    r"|token|dsn|credentials?|signing[_\-\s]?key|webhook[_\-\s]?secret)"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?P<name>\b[A-Za-z0-9_.\-]*?(?:" + _PASSWORD_NAMES + "|" + _SECRET_NAMES + r")[A-Za-z0-9_\-]*)"
    r"[\"']?(?P<sep>\s*(?::=|=>|=|:|：|\bis\b|是|为|為)\s*)(?P<quote>[\"'`]?)(?P<value>[^\s\"'`,;]{6,})"
)
# Names that contain a credential word but are not credentials.
_NOT_CREDENTIAL_NAME = re.compile(
    r"(?i)(?:tokeniz|tokens\b|_tokens|max_tokens|token_count|token_type|token_url|token_endpoint|passthrough"
    r"|\bpass(?:ing|es|ed|age|ive)\b|pass_context|pass_through|last_pass|first_pass"
    r"|password_(?:policy|length|field|hash(?:er|ing)?|reset)|compass|bypass|passenger|passport|keyboard)"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%\(?[A-Za-z_]+\)?s?|<[^>]*>|\{\{?[^}]*\}?\}|\[[^\]]*\]"
    r"|x{3,}|\*{3,}|\.{3,}|_+|-+|(?:your|my|the|some|example|sample|dummy|fake|test|placeholder|changeme"
    r"|redacted|hidden|secret|password|passwd|token|none|null|nil|undefined|empty|required|optional|str|string"
    r"|int|bool|bytes|true|false)(?:[_\-]?(?:api|app|client|key|token|secret|password|here|value|string))*)$"
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
_CREDENTIAL_WORD = CaseFree(
    r"(?i)\b(?:api[\s_-]?keys?|keys?|tokens?|secrets?|passwords?|passwd|passphrase|credentials?|creds|auth"
    r"|cl(?:é|e)f?s?|claves?|chaves?|chiav[ei]|jetons?|pats?|secretos?|segret[oi]|токен\w*|ключ\w*)\b|トークン|キー|シークレット|秘密鍵|密钥|令牌|秘钥"
)
_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-./+=])([A-Za-z0-9][A-Za-z0-9_\-./+=]{19,})(?![A-Za-z0-9_\-./+=])")
_NEAR_CHARS = 80
# Every alternative of _PASSWORD_NAMES and _SECRET_NAMES holds one of these (pass, pwd; api key, access key,
# private key, signing key: key; secret; token; dsn; credential), so a text lacking all has no assignment.
_ASSIGNMENT_WORDS = ("pass", "pwd", "key", "secret", "token", "dsn", "credential")

_PUBLIC_WORD = re.compile(r"(?i)\b(?:public|publishable|pub)[\s_-]?$")
# Keys published by design: Stripe and Supabase publishable keys, SSH public key bodies.
_PUBLIC_PREFIX = re.compile(r"pk_(?:live|test)_|sb_publishable_|AAAA[BC]3NzaC1|AAAAE2VjZHNh")
# Twilio: the auth token is 32 hex beside the account SID (AC + 32 hex); the SID alone is an id.
_TWILIO_SID = re.compile(r"(?<![A-Za-z0-9])AC[0-9a-f]{32}(?![A-Za-z0-9])")
_HEX32 = re.compile(r"(?<![A-Za-z0-9])[0-9a-f]{32}(?![A-Za-z0-9])")

# A 40-character AWS secret access key, only next to an AWS key id or an aws/secret keyword.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_AWS_CONTEXT = CaseFree(r"(?i)aws|secret|AKIA|ASIA")


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


_NAME_LIKE = re.compile(r"^_?[A-Za-z][A-Za-z0-9]*$")
# A Python/JS identifier made of words (token_normalize_func, proxy_auth) or a dotted type (x25519.X25519PrivateKey).
_IDENTIFIER = re.compile(
    r"^_?[a-z]+(?:_+[a-z]+)+$|^[A-Z]+(?:_[A-Z]+)+$|^urn:[a-z0-9:.\-]+$|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.(?:[A-Z]\w{3,}|[a-z]{4,})$"
)
_TYPE_WORD = re.compile(r"(?i)^(?:string|str|int|integer|bool|boolean|number|object|any|bytes)\??$")
_CODE_EXPRESSION = re.compile(r"^[\[{(]?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[(\[]|^[A-Za-z_]+(?:\.[A-Za-z_]+)+$")
_CREDENTIAL_IN_NAME = re.compile(r"(?i)password|passwd|secret|token|key|credential")


def _is_placeholder(value: str) -> bool:
    if value.endswith("(") or _CODE_EXPRESSION.match(value):
        return True  # code: ObjectIdentifier(…), var.set(…), NotRequired[ProgressToken], a.b.c
    if "<" in value and ">" in value:
        return True  # a template: vercel_blob_rw_<store>_<secret>
    v = value.strip("\"'`.,;:)(")
    if _EMPHASIS.match(v):
        return True  # reST/Markdown emphasis: ":param passwd: **DEPRECATED** Alias for password."
    if _NAME_LIKE.match(v) and _CREDENTIAL_IN_NAME.search(v):
        return True  # another name, not a value: "challengePassword", "privateKeyUsagePeriod"
    if _IDENTIFIER.match(v) or _TYPE_WORD.match(v):
        return True  # code: self.x = token_normalize_func, password: x25519.X25519PrivateKey, "string?"
    return bool(_PLACEHOLDER.match(v)) or bool(_CODE_REFERENCE.match(v)) or len(set(v)) <= 2


def _high_entropy(value: str) -> bool:
    v = value.strip("\"'`.,;:)(")
    if len(v) < 16 or _classes(v) < 2:
        return False
    if _UUID.fullmatch(v):
        return True  # a UUID assigned to a credential name is a credential (e.g. Heroku API keys)
    if _HEX.fullmatch(v):
        return len(v) >= 20  # hex API keys exist; a bare hex value is only a secret in an assignment
    return shannon_entropy(v) >= 3.3


_CAMEL_WORD = re.compile(r"[A-Z][a-z]{2,}")


def _random_token(value: str) -> bool:
    """A token that looks machine-generated: long, mixed letters and digits, high entropy, not a hash or an id.

    Paths, URLs, dotted names, hex digests (commits, sha256), UUIDs and ULIDs are not random tokens here.
    """
    v = value.rstrip(".,;:")
    if len(v) < 20 or "://" in v:
        return False
    if _HEX.fullmatch(v) or _UUID.fullmatch(v) or _ULID.fullmatch(v):
        return False
    parts = re.split(r"[/.]", v)
    if len(parts) > 1 and all(len(p) < 16 or p.isalpha() for p in parts):
        return False  # paths (src/a/b.py) and dotted names (com.acme.items) are made of short words
    if "." in v and all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) and shannon_entropy(p) < 4.2 for p in parts):
        return False  # a dotted code name: socksio.socks5.SOCKS5AuthMethod
    letters = sum(c.isalpha() for c in v)
    digits = sum(c.isdigit() for c in v)
    if letters < 4 or (digits < 2 and not _random_letters(v)):
        return False  # words-with-dashes-like-this and plain numbers are not keys
    camel = _CAMEL_WORD.findall(v)
    if len(camel) >= 3 and sum(map(len, camel)) >= 0.5 * len(v) and v.isalnum() and shannon_entropy(v) < 4.2:
        return False  # a CamelCase name: PKCS12PrivateKeyTypes, LangGraphDeprecatedSinceV10
    if not any(c.islower() for c in v) or not any(c.isupper() for c in v):
        return len(v) >= 32 and shannon_entropy(v) >= 4.0
    return shannon_entropy(v) >= 3.7


def _random_letters(v: str) -> bool:
    """Mixed case with few or no digits that is still generated (INjPFSAIF8hKGaTsCSLf): no run of words."""
    wordish = sum(len(w) for w in _WORDISH.findall(v) if sum(c in "aeiouy" for c in w.lower()) >= 0.25 * len(w))
    mixed = any(c.islower() for c in v) and any(c.isupper() for c in v)
    return mixed and v.isalnum() and len(v) >= 20 and wordish < 0.6 * len(v) and shannon_entropy(v) >= 4.0


# Password and key words in the languages capture sees (a CJK word has no word boundary to test).
_PASSWORD_WORD = CaseFree(
    r"(?i)\b(?:passwords?|passwd|passphrase|passwort|kennwort|contrase(?:ñ|n)as?|mot[ -]de[ -]passe|mdp|senhas?|пароль"
    r"|pw|psw|ww(?= van| voor|\s*:)|contra(?=\s*:)|parola d'ordine|wachtwoord|has(?:ł|l)(?:o|a|em)|şifre|mật khẩu"
    r"|kata sandi|lösenord(?:et)?|heslo|passord|salasana|frase de paso|frase secreta|phrase secr(?:è|e)te|claves?)\b"
    r"|密码|口令|密碼|パスワード|パス(?=は|:|：)|暗証番号|비밀번호|패스워드|비번|암호(?!화)|(?i:\bschl(?:ü|ue)ssel\b|\bzugangs\w*)|密钥|秘钥|令牌|私钥|凭证|凭据"
)
_NEAR_PASSWORD_CHARS = 60
# A password word inside a URL, path, anchor or hyphenated name is not an announcement of a password
# ("…/secure-password-authentication.html#…", "password-reset.md", "Passwort-Manager").
_WORD_IN_NAME_BEFORE = "/#._"
_WORD_IN_NAME_AFTER = re.compile(r"[-/._]\w")
# A lowercase snake_case name of words, each perhaps with a version number: a column, a charset or a plugin
# (utf8_bin, sha256_password, public_key), not a password.
_SNAKE_NAME = re.compile(r"^[a-z]+\d*(?:_(?:[a-z]+\d*|\d+))+$")  # also secret_key_123, a doc example
# Markdown or reST emphasis of a word (``**DEPRECATED**``): prose, not a value.
_EMPHASIS = re.compile(r"^\*{1,2}[A-Za-z][A-Za-z_\- ]*\*{1,2}$")
# A value after "password … is/ist/是/は/：": one run of ASCII letters, digits and symbols, wherever it starts; in
# Chinese and Japanese it follows a particle or a full-width quote with no space ("パスワードはXk29!mPq77です").
_PW_CHAR = r"A-Za-z0-9!#$%&*+\-./?@^_~|\\"
_PASSWORD_VALUE = re.compile(rf"(?<![{_PW_CHAR}])([{_PW_CHAR}]{{6,64}})(?![{_PW_CHAR}])")
# "… es hunter22", "密码是 hunter2": the value right after a copula or colon is stated as the password, so it needs
# only what an assignment's value needs (a digit or a symbol), not the look of a generated one.
_COPULA = re.compile(
    r"(?i)(?:[^\n]{0,40}?(?:\b(?:is|es|est|ist|è|é|lautet|era|är|je|là)\b|[:：=是为為は]))?\s*[:：]?\s*[\"'`“「«]?\s*"
)
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\.?$")
# A .env line: NAME=value alone on its line, NAME in UPPER_SNAKE_CASE.
_ENV_LINE = re.compile(r"(?m)^\s*(?:export\s+)?(?P<name>[A-Z][A-Z0-9_]{2,})=[\"']?(?P<value>[^\s\"'#]{16,})[\"']?\s*$")
_DIGEST_NAME = re.compile(r"SHA|HASH|DIGEST|CHECKSUM|MD5|COMMIT|REVISION|VERSION|_ID$")
_RANDOM_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])([A-Za-z0-9+/_\-]{32,}={0,2})(?![A-Za-z0-9+/=_\-])")
_ALPHABET_RUN = re.compile(r"(?i)abcdefg|0123456|qwerty")  # alphabets and keyboard runs are test data
_DIGEST_PREFIX = re.compile(r"(?i)^(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?|sha3-\d+)[-:=]")


def _default_password(url: str, password: str) -> bool:
    """``postgres://postgres:postgres@localhost``: a password equal to the user name is a documented default."""
    user = url.split("://", 1)[1].split(":", 1)[0]
    return password == user


def _long_hex(value: str) -> bool:
    return len(value) >= 32 and bool(_HEX.match(value))


def _password_in_prose(value: str) -> bool:
    """A password written after a password word: mixed classes with a digit or symbol, not a path, URL or word."""
    v = value.rstrip(".,;:!?)")
    if len(v) < 8 or _is_placeholder(v) or "://" in v or "/" in v or v.startswith(("$", "%", "{")):
        return False
    if _SNAKE_NAME.match(v):
        return False  # "`password` varchar(255) COLLATE utf8_bin", "Used for sha256_password"
    if _PRODUCT_NAME.fullmatch(v):
        return False  # "1Password" is a product's name
    if not any(c.isalpha() for c in v) or not v.isascii():
        return False
    if not any(c.isdigit() for c in v):
        # letters only: a generated one (CXlMaXZjljEN: several capitals inside, not words), never a word or a Name
        inner_caps = sum(c.isupper() for c in v[1:])
        wordish = sum(len(w) for w in _WORDISH.findall(v))
        varied = shannon_entropy(v) >= 0.8 * math.log2(min(len(v), 64))
        return len(v) >= 10 and inner_caps >= 2 and wordish < 0.5 * len(v) and varied
    return _classes(v) >= 3 or (len(v) >= 12 and shannon_entropy(v) >= 3.5)


# Words between a password word and the copula that make the sentence about something else ("the password hash is …").
_NOT_STATED = re.compile(
    r"(?i)hash|polic|length|format|type|field|rule|encod|algorithm|scheme|strength|requir|reset"
    r"|forgot|oubli|olvid|vergessen|esquec|dimentic"
)
# A flag's value that is a path, URL or key file (--private-key ~/.ssh/id_rsa), not the secret itself.
_FILE_VALUE = re.compile(r"^(?:/|~|\.\.?/)|://|\.(?:pem|key|json|txt|p12|pfx|jks|crt|der|gpg|asc|pub|env)$")


_PRODUCT_NAME = re.compile(r"\d[A-Z][a-z]+")
# A word, "_" and a number stated as the password ("la clave es cangrejo_137"), not a name (utf8_bin, secret_key_1)
_WORD_NUMBER = re.compile(r"^[a-z]{3,}_\d{2,}$")


def _stated_password(value: str) -> bool:
    v = value.rstrip(".,;:!?)")
    snake = _SNAKE_NAME.match(v) and not (_WORD_NUMBER.match(v) and not _CREDENTIAL_IN_NAME.search(v))
    if snake or "/" in v or not v.isascii() or v.startswith(("$", "%", "{")) or _PRODUCT_NAME.fullmatch(v):
        return False
    return any(c.isalpha() for c in v) and _password_like(v)


def _env_secret(value: str) -> bool:
    """A .env value that is a secret whatever its name: long, random-looking, not a path, URL, number or word."""
    v = value.strip("\"'")
    if "://" in v or v.startswith(("/", "./", "~")) or _UUID.match(v) or _DIGEST_PREFIX.match(v):
        return False
    if any(c in v for c in "()[]{}.,") or not any(c.isdigit() for c in v) or _ALPHABET_RUN.search(v):
        return False  # code (QuerystringState.BEFORE_FIELD, re.compile(X)) or a word
    if _HEX.match(v):
        return len(v) >= 32
    return _random_token(v) or (len(v) >= 24 and _classes(v) >= 3 and shannon_entropy(v) >= 4.0)


def _unknown_random(value: str) -> bool:
    """The entropy rule for formats no list names: a long token of random letters, digits and symbols.

    Trigger: ≥ 32 characters of [A-Za-z0-9+/=_-], upper and lower case and digits, ≥ 4.3 bits per character.
    Not: hex digests, UUIDs, ULIDs, ``sha512-…`` integrity strings, identifiers made of words, paths, URLs, and
    base64 that decodes to readable text (test data). Measured on installed packages by bench/bench_secrets_fp.py.
    """
    v = value.rstrip(".,;:")
    if len(v) < 32 or "://" in v or "." in v or _DIGEST_PREFIX.match(v) or _PUBLIC_PREFIX.match(v):
        return False
    if not re.fullmatch(r"[A-Za-z0-9+/=_\-]+", v) or _HEX.match(v.replace("-", "")):
        return False
    if "/" in v and any(len(p) < 4 for p in v.split("/")):
        return False  # a path: a/b/cdef
    words = re.split(r"[_\-/]+", v)
    if len(words) > 1 and all(p.isalpha() or len(p) < 12 for p in words):
        return False  # snake_case, kebab-case or path made of words
    if not (any(c.islower() for c in v) and any(c.isupper() for c in v) and sum(c.isdigit() for c in v) >= 3):
        return False
    if re.search(r"[a-z]{2,}[A-Z][a-z]+[A-Z][a-z]+", v) and shannon_entropy(v) < 4.6:
        return False  # camelCaseIdentifierWords
    if _printable_base64(v) or _ALPHABET_RUN.search(v):
        return False
    return shannon_entropy(v) >= 4.3


def _env_style(name: str, sep: str, value: str) -> bool:
    """``DB_PASSWORD=supersecret``: an UPPER_SNAKE name, ``=`` with no space, and not a documented default whose
    value is part of the name (``POSTGRES_PASSWORD=postgres``)."""
    return sep == "=" and name.isupper() and value.lower() not in name.lower()


def _password_like(value: str) -> bool:
    v = value.strip("\"'`.,;:)(")
    if len(v) < 6 or _is_placeholder(v):
        return False
    # A real password has a digit or a symbol, or is long and varied; "required" or "rotation" is prose.
    return (_classes(v) >= 2 and (any(c.isdigit() for c in v) or any(not c.isalnum() for c in v))) or (
        len(v) >= 12 and shannon_entropy(v) >= 3.5
    )


_SAME_CHAR_RUN = re.compile(r"(.)\1{7,}")  # xxxxxxxx, 00000000: a documentation placeholder, never a real key


def _random_tail(value: str) -> bool:
    """The part of a token after its prefix looks generated: varied, no long repeated run, and digits or mixed
    case that is not made of words (``re_findall_multilineStringWithoutDigits`` is a name, not a key)."""
    if _SAME_CHAR_RUN.search(value) or shannon_entropy(value) < 3.0 or not any(c.isalpha() for c in value):
        return False
    if any(c.isdigit() for c in value):
        return True
    wordish = sum(len(w) for w in _WORDISH.findall(value))
    return any(c.islower() for c in value) and any(c.isupper() for c in value) and wordish < 0.6 * len(value)


_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}")


def _format_match_ok(rule: FormatRule, m: re.Match[str]) -> bool:
    """The checks a format's regex cannot express: placeholders, defaults, decodable parts."""
    kind, value = rule.kind, m.group(rule.group)
    if kind == "twitter_bearer_token":
        return _random_tail(value.lstrip("A"))
    if kind != "private_key" and _SAME_CHAR_RUN.search(m.group(0)):
        return False  # glpat-xxxxxxxxxxxxxxxxxxxx, AKIAXXXXXXXXXXXXXXXX: a placeholder in a doc
    if rule.random_tail >= 0 and not _random_tail(value[rule.random_tail :]):
        return False
    if kind == "url_password":
        if "://" not in m.group(0):
            return _password_like(value)  # Oracle's user/password@
        return not (_is_placeholder(value) or _default_password(m.group(0), value))
    if kind in ("bearer_token", "authorization_header"):
        return _high_entropy(value) and (len(value) >= 20 or _random_tail(value))
    if kind == "url_credentials":
        return _random_token(value) or _long_hex(value)
    if kind == "aws_access_key_id":
        return not value.endswith("EXAMPLE")  # AWS's documented example key id (AKIAIOSFODNN7EXAMPLE)
    if kind == "jwt":
        # eyJ…eyJ…sig as before; a header with spaces or no signature (alg "none") must decode to a JOSE header.
        signed = len(value.rsplit(".", 1)[1]) >= 8 and value.startswith("eyJ")
        return signed or decodes_to(value.split(".", 1)[0], b'"alg"')
    if kind == "discord_bot_token":
        raw = b64decode_loose(m.group(1))
        return raw is not None and raw.isdigit() and 16 <= len(raw) <= 20  # base64 of the bot's numeric id
    if kind == "private_key" and value.startswith("LS0t"):
        return decodes_to(value[:64], b"PRIVATE KEY")
    if kind in ("docker_auth", "npm_auth"):
        return decodes_to(value, b":")
    if kind in ("cli_password", "sql_password"):
        return _password_like(value) and not _FILE_VALUE.search(value)
    return True


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
    for rule in anchored_rules(lower := text.lower()):
        for m in rule.pattern.finditer(text):
            if _format_match_ok(rule, m):
                found.append(SecretFinding(kind=rule.kind, start=m.start(rule.group), end=m.end(rule.group)))
    folded = fold_ascii(lower)
    for m in _ASSIGNMENT.finditer(text) if any(w in folded for w in _ASSIGNMENT_WORDS) else ():
        name, value = m.group("name"), m.group("value")
        if _NOT_CREDENTIAL_NAME.search(name) or _is_placeholder(value) or f"{name} {m['sep'].strip()}" == "pass is":
            continue
        if name.lower().endswith(("file", "path", "dir")) and value.startswith(("/", "~", "./", "../")):
            continue  # RESTIC_PASSWORD_FILE=/run/secrets/restic: where the secret is, not the secret
        is_password = re.search(_PASSWORD_NAMES, name, re.I) is not None
        ok = _password_like(value) if is_password else _high_entropy(value)
        if not ok and is_password and (m.group("quote") or _env_style(name, m.group("sep"), value)):
            ok = len(value) >= 6 and not _is_placeholder(value)
        if ok:
            found.append(
                SecretFinding(
                    kind="password_assignment" if is_password else "credential_assignment",
                    start=m.start("value"),
                    end=m.end("value"),
                )
            )
    for word in _CREDENTIAL_WORD.finditer(text, lower):
        if _PUBLIC_WORD.search(text, max(0, word.start() - 12), word.start()):
            continue  # a public or publishable key is meant to be shared (SSH, Stripe pk_, Mercado Pago)
        window_end = min(len(text), word.end() + _NEAR_CHARS)
        for m in _TOKEN.finditer(text, word.end(), window_end):
            value = m.group(1)
            if _random_token(value) and not (_printable_base64(value) and not decodes_to(value, b":")):
                found.append(SecretFinding(kind="credential_near_keyword", start=m.start(1), end=m.end(1)))
    for word in _PASSWORD_WORD.finditer(text, lower):
        before = text[word.start() - 1] if word.start() > 0 else " "
        if before in _WORD_IN_NAME_BEFORE or _WORD_IN_NAME_AFTER.match(text, word.end()):
            continue
        window_end = min(len(text), word.end() + _NEAR_PASSWORD_CHARS)
        paragraph = text.find("\n\n", word.end(), window_end)
        window_end = paragraph if paragraph >= 0 else window_end  # a value belongs to its own paragraph
        for m in _PASSWORD_VALUE.finditer(text, word.end(), window_end):
            if text.startswith(("(", "["), m.end()) or _DOTTED_NAME.match(m.group(1)):
                continue  # code: base64.b64encode(userpass), self.password_hasher
            stated = _COPULA.fullmatch(text, word.end(), m.start()) and not _NOT_STATED.search(
                text, word.end(), m.start()
            )
            if _password_in_prose(m.group(1)) or (stated and _stated_password(m.group(1))):
                found.append(SecretFinding(kind="password_near_keyword", start=m.start(1), end=m.end(1)))
                break
    for m in _ENV_LINE.finditer(text) if "=" in text else ():  # NAME=value
        value = m.group("value")
        if not _is_placeholder(value) and not _DIGEST_NAME.search(m.group("name")) and _env_secret(value):
            found.append(SecretFinding(kind="env_assignment", start=m.start("value"), end=m.end("value")))
    for m in _RANDOM_RUN.finditer(text):
        if text.endswith(";base64,", 0, m.start(1)) or _file_magic(m.group(1)):
            continue  # a data: URI or a file's bytes (an image, a PDF), not a key
        if _unknown_random(m.group(1)):
            found.append(SecretFinding(kind="high_entropy_token", start=m.start(1), end=m.end(1)))
    found.extend(_generic(text))
    if "AC" in text:
        for sid in _TWILIO_SID.finditer(text):
            for m in _HEX32.finditer(text, max(0, sid.start() - 200), min(len(text), sid.end() + 200)):
                found.append(SecretFinding(kind="twilio_auth_token", start=m.start(), end=m.end()))
    if _AWS_CONTEXT.search(text):
        for m in _AWS_SECRET.finditer(text):
            value = m.group(1)
            window = text[max(0, m.start() - 120) : m.start()]
            if _classes(value) >= 3 and shannon_entropy(value) >= 4.0 and _AWS_CONTEXT.search(window):
                found.append(SecretFinding(kind="aws_secret_access_key", start=m.start(1), end=m.end(1)))
    return _merge([f for f in found if f.kind not in _CONTEXT_KINDS or not _ctx.public_value(text, f.start, f.end)])


# Words that make a run of lowercase words prose about a password, not the password (English ones: STOPWORDS).
_PROSE_WORDS = frozenset(
    str.split(
        "characters chars long required rotated hashed stored set changed le la les de du des un une et ou el los las "
        "y en al del lo um uma os as e do da no na il gli di che der die das und oder ein eine zu im voir see ver vedi "
        "siehe dans avec con com mit"
    )
)


def _upper_random(value: str) -> bool:
    """An upper-case and digit key of 20 to 31 characters (YXPUIQZZT33L48NRP0XX200P): ≥ 4 digits, ≥ 8 letters,
    varied; shorter than the 32 :func:`_random_token` asks of a one-case token."""
    v = value.rstrip(".,;:")
    if not re.fullmatch(r"[A-Z0-9]{20,31}", v) or _HEX.match(v) or _ULID.match(v):
        return False
    digits = sum(c.isdigit() for c in v)
    return digits >= 4 and len(v) - digits >= 8 and shannon_entropy(v) >= 3.8


def _upper_id(v: str) -> bool:
    """An upper-case key id with a digit (Huawei's 20-character AK), only where a label names it."""
    return v.isupper() and v.isalnum() and any(c.isdigit() for c in v) and shannon_entropy(v) >= 3.5


def _generic(text: str) -> list[SecretFinding]:
    """The shapes of :mod:`memstone.domain.secret_generic`, judged by this module's value rules."""
    spans = [
        *query_credentials(text, lambda v: not _is_placeholder(v) and (_random_token(v) or _high_entropy(v))),
        *suffix_named_tokens(text, lambda v: (_random_token(v) or _upper_random(v)) and not _printable_base64(v)),
        *hex_private_keys(text),
        *keyed_ids(text),
        *ak_sk_pairs(text, lambda v: _random_token(v) or _upper_random(v) or _upper_id(v)),
        *passphrases(text, lambda w: w in STOPWORDS or w in _PROSE_WORDS),
        *credential_pairs(text, _password_in_prose),
        *values_as_password(text, lambda v, after: _stated_password(v) and not _NOT_STATED.search(after)),
        *named_literals(text, _password_like, lambda v: _random_token(v) or _long_hex(v)),
        *seed_phrases(text, lambda w: w in STOPWORDS or w in _PROSE_WORDS),
        *prefixed_tokens(text, lambda v: not _HEX.match(v) and _random_tail(v) and shannon_entropy(v) >= 3.8),
        *_ctx.context_secrets(text, _is_placeholder),
        *_named.named_secrets(text, _is_placeholder, lambda w: w in STOPWORDS or w in _PROSE_WORDS),
    ]
    return [SecretFinding(kind=kind, start=start, end=end) for kind, start, end in spans]


_GENERIC_KINDS = frozenset(
    ["high_entropy_token", "env_assignment", "password_near_keyword", "credential_near_keyword",
     "url_query_credential", "credential_pair", "prefixed_token", "passphrase_in_prose", "access_key_pair",
     *_named.NAMED_KINDS]
)  # fmt: skip


_CONTEXT_KINDS = _GENERIC_KINDS | {"credential_assignment", "password_assignment"}  # kinds a public context clears


def _merge(found: list[SecretFinding]) -> tuple[SecretFinding, ...]:
    found.sort(key=lambda f: (f.start, -(f.end - f.start), f.kind in _GENERIC_KINDS))
    out: list[SecretFinding] = []
    for f in found:
        if out and f.start < out[-1].end:
            last = out[-1]
            # A named format wins over a generic rule for the same span (the finding says what it is).
            kind = f.kind if last.kind in _GENERIC_KINDS and f.kind not in _GENERIC_KINDS else last.kind
            if f.end > last.end or kind != last.kind:
                out[-1] = SecretFinding(kind=kind, start=last.start, end=max(f.end, last.end))
            continue
        out.append(f)
    return tuple(out)


def contains_secret(text: str) -> bool:
    """True when :func:`find_secrets` finds anything in ``text``."""
    return bool(find_secrets(text))


def redact(text: str, findings: tuple[SecretFinding, ...] | None = None) -> str:
    """``text`` with every secret span replaced by ``[REDACTED:<kind>]`` (for logs and error messages).

    >>> redact("token = Zx9Qw3Er5Ty7Ui9Op1As3")
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
