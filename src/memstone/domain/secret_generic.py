"""Generic secret shapes no provider list names (issue 16, item 4), for :mod:`memstone.domain.secrets`.

- **credential query parameters**: ``?key=…``, ``&sig=…``, ``&access_token=…`` in a URL of any scheme, when the
  value looks random (after percent-decoding);
- **a name that ends in a credential word** in camelCase or PascalCase (``ApiSecret``, ``botToken``) and a random
  token within 80 characters after it, as in XML elements and attributes (``<Setting name="ApiSecret">…``);
- **a user and password pair** after a login word, in prose or on a command line (``login: admin / …``, ``user
  admin, pass …``, ``credentials are admin:…``), when the second part reads as a password;
- **a provider-like prefix and a random body**: one to three short lowercase words joined by ``_`` or ``-`` and a
  body of ≥ 20 letters and digits that looks generated (``acme_live_…``, ``xk-…``): the shape of most API keys;
- **a UUID or 24 to 64 hex digits right after a credential word** ("the Heroku API key 3fa8…", "plaid secret …");
- **a literal value given to a literal credential name** (``<add key="ClearTextPassword" value="…"/>``, PHP
  ``define('AUTH_KEY', '…')``, ``config.set("api_key", "…")``);
- **a value labelled AK or SK** (Huawei, Baidu and other Chinese clouds name their key pair so);
- **a wallet seed phrase**: 12 to 24 lowercase words after "seed phrase", "mnemonic", "助记词".

Each returns ``(kind, start, end)`` spans; the value checks are passed in by the caller (one detector: the
entropy and placeholder rules live in :mod:`memstone.domain.secrets`). Not: hashes, UUIDs, identifiers made of
words, paths, placeholders (tested; ``bench/bench_secrets_fp.py`` measures the false positives).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote

from .regex_gate import Gate
from .secret_context import Check, Span

__all__ = [
    "ak_sk_pairs",
    "credential_pairs",
    "hex_private_keys",
    "keyed_ids",
    "named_literals",
    "passphrases",
    "prefixed_tokens",
    "query_credentials",
    "seed_phrases",
    "suffix_named_tokens",
    "values_as_password",
]

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
_SUFFIX_GATE = Gate.of(_SUFFIX_NAME)
_NEAR = 80
_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-./+=])([A-Za-z0-9][A-Za-z0-9_\-./+=]{15,})(?![A-Za-z0-9_\-./+=])")
_NAMEISH = re.compile(r"(?i)key|token|secret|passw|credential|public|private")


def suffix_named_tokens(text: str, random_token: Check) -> list[Span]:
    """A random token shortly after a camelCase/PascalCase name ending in a credential word (``ApiSecret``)."""
    out: list[Span] = []
    if not _SUFFIX_GATE.admits(text):
        return out
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


_PAIR_TAIL = (
    r"[^\n]{0,40}?(?<![\w@.\-])(?P<user>[\w.@\-]{2,40})\s*(?:/|:|,\s*(?:pass(?:word)?|pwd"
    r"|pw|mdp|senha|contraseña|passwort)\s*:?)\s*(?P<value>[^\s,;'\"`<>]{8,64})"
)
_PAIR = re.compile(
    r"(?i)\b(?:login|log in|logins?|credentials?|creds|account|user(?:name)?|usuario|utilisateur|usuário|utente"
    r"|basic[- ]?auth|benutzer|identifiants|zugangsdaten|credenciales|credenziali|credenciais|ユーザー|用户"
    r"|inloggegevens|inloggen|gebruiker(?:snaam)?|dane logowania|logowania|u(?:ż|z)ytkownik|accesso|connexion"
    r"|anmeldung|konto|conta|cuenta|compte|acc(?:è|e)s|acceso|acesso)\b"
    r"(?![-./]\w)" + _PAIR_TAIL  # not a word inside a name: user-images.githubusercontent.com, user.name
)
_PAIR_AGAIN = re.compile(r"(?P<user>[\w.@\-]{2,40})\s*/\s*(?P<value>[^\s,;'\"`<>]{8,64})")
# Chinese account words, usually glued to the word before them ("数据库账号 root / …"): no word boundary to test.
_PAIR_CJK = re.compile(
    r"(?:账号|帐号|账户|賬號|用户名|登录|登陆|ログイン|管理者|로그인|계정|아이디|관리자)" + _PAIR_TAIL
)
# A well-known administrator account as the user itself: "admin/Xq7!… for the router", "root / …".
_PAIR_ROLE = re.compile(
    r"(?i)(?<![\w@.\-/])(?P<user>admin|root|administrator|superuser)\s*/\s*(?P<value>[^\s,;'\"`<>]{8,64})"
)
_PAIR_GATE, _PAIR_CJK_GATE, _TAIL_GATE = Gate.of(_PAIR), Gate.of(_PAIR_CJK), Gate.of(re.compile(_PAIR_TAIL))


def credential_pairs(text: str, password_like: Check) -> list[Span]:
    """``admin / s3cr3t!Pw`` after a login word: the second part when it reads as a password."""
    out: list[Span] = []
    if not _TAIL_GATE.admits(text):
        return out
    pairs = _PAIR.finditer(text) if _PAIR_GATE.admits(text.lower()) else ()
    low = text.lower()
    roles = _PAIR_ROLE.finditer(text) if "/" in text and ("admin" in low or "root" in low or "superuser" in low) else ()
    for first in (*pairs, *(_PAIR_CJK.finditer(text) if _PAIR_CJK_GATE.admits(text) else ()), *roles):
        # "Login for the panel: ops-user / pw": the first "name: value" may be the label and the user; then the pair
        # that starts at that value is the one to judge.
        again = _PAIR_AGAIN.match(text, first.start("value"))
        m = again if again and not password_like(first.group("value").rstrip(".!?)")) else first
        value = m.group("value").rstrip(".!?)")
        if "/" in value or "://" in text[first.start("user") : m.end("value")]:
            continue  # a path or a URL (which the URL rules read)
        if password_like(value):
            out.append(("credential_pair", m.start("value"), m.start("value") + len(value)))
    return out


_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9_\-./+=])(?P<prefix>[a-z][a-z0-9]{1,9}(?:[_\-][a-z0-9]{2,8}){0,2}[_\-])"
    r"(?P<body>[A-Za-z0-9]{20,64})(?![A-Za-z0-9_\-./+=])"
)
_WORDS = re.compile(r"[A-Z]?[a-z]{3,}")
_PREFIXED_GATE = Gate.of(_PREFIXED)
_NO_DIGITS = str.maketrans("", "", "0123456789")


def prefixed_tokens(text: str, random_body: Check) -> list[Span]:
    """``acme_live_Xy…``: a short lowercase prefix, then a generated body (mixed case and digits, high entropy,
    not made of words)."""
    out: list[Span] = []
    if not _PREFIXED_GATE.admits(text) or len(text) - len(text.translate(_NO_DIGITS)) < 2:
        return out  # a body taken holds two digits (the test below)
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
    if not _HEX_RUN.search(text):
        return out  # every value is a run of 64 hex digits, so the text holds one of ≥ 24
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
# Looser: a few words on between the password word (in the languages capture sees) and its copula, or "logs in
# with"; then words joined by dashes or underscores ("falcon-cobalt-lantern-tundra", "barro_sal_ponte_vidro"), or
# four or more words ("it's tundra basalt granite fjord kettle now").
_PASSPHRASE_LOOSE = re.compile(
    r"(?i)(?:\b(?:passphrase|pass phrase|password|passwort|kennwort|mot de passe|phrase de passe|contraseña|senha"
    r"|frase secreta|frase de paso|wachtwoord|has(?:ł|l)o|parola d'ordine)"
    r"[^\n.:=;]{0,60}?(?:\s(?:is|ist|est|es|é|è|lautet|são|sono|zijn|to|it(?:'|’)s)\b|[:=])\s*[\"'“«`]?\s*"
    r"|\blog(?:s|ged)? in with\s+|\bsign(?:s|ed)? in with\s+)"
    r"(?<![A-Za-z0-9])(?P<value>(?-i:[a-z]{3,}\d*(?:[-_][a-z]{2,}\d*){2,6}|[a-z]{3,}(?:\s+[a-z]{3,}){3,6}))"
    r"\s*[\"'”»`]?(?=\s*(?:[.,;!)(]|\bnow\b|$))"
)
_CREDENTIAL_PART = re.compile(r"(?i)pass|token|secret|key|hash|reset|auth|user|admin|login|sign")
_APP_PASSWORD_SHAPE = re.compile(r"^[a-z]{4}(?: [a-z]{4}){3}$")  # Google's app passwords: app_password names them
_PASSPHRASE_LOOSE_GATE = Gate.of(_PASSPHRASE_LOOSE)
_PASSPHRASE_GATE = Gate.of(_PASSPHRASE)


def passphrases(text: str, is_function_word: Check) -> list[Span]:
    """Three to seven lowercase words (one with a digit, or none a function word) given as a passphrase."""
    out: list[Span] = []
    lower = text.lower()
    for m in _PASSPHRASE.finditer(text) if _PASSPHRASE_GATE.admits(lower) else ():
        words = m.group("value").split()
        if any(is_function_word(w) for w in words):
            continue  # "the password is stored in the vault": prose
        if any(any(c.isdigit() for c in w) for w in words) or len(words) >= 4:
            out.append(("passphrase_in_prose", m.start("value"), m.end("value")))
    if out or not _PASSPHRASE_LOOSE_GATE.admits(lower):
        return out
    for m in _PASSPHRASE_LOOSE.finditer(text):
        value = m.group("value")
        if _CREDENTIAL_PART.search(value) or _APP_PASSWORD_SHAPE.match(value):
            continue  # password_reset_token, sign-in-with-google: a name, not a passphrase
        if not any(is_function_word(w) for w in re.split(r"[\s_\-]+", value)):
            out.append(("passphrase_in_prose", m.start("value"), m.end("value")))
    return out


# The value before the word: "pon tortuga80 como contraseña", "j'ai mis chaton41 comme mot de passe", "set x as the
# password", "nimm x als Passwort".
_VALUE_AS_PASSWORD = re.compile(
    r"(?i)(?<![\w!#$%&*+\-./?@^~|\\])(?P<value>[A-Za-z0-9!#$%&*+\-?@^_~]{6,64})\s+(?:como|comme|come|as|als)\s+"
    r"(?:(?:la|le|il|a|o|the|das|het|de|my|mon|ma|mi|mio|new|nueva|nouveau|neues)\s+){0,2}"
    r"(?:contrase(?:ñ|n)a|mot de passe|password|passwort|kennwort|senha|wachtwoord|has(?:ł|l)o|clave)\b"
)
_AS_GATE = Gate.of(_VALUE_AS_PASSWORD)
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\.?$")  # a code name: self.password_hasher

_AS_AFTER = 24  # the words after the password word that may make it a hash or a policy ("as the password hash")


def values_as_password(text: str, stated: Callable[[str, str], bool]) -> list[Span]:
    """``stated(value, the text after)`` judges the value put before "como contraseña" / "as the password"."""
    if not _AS_GATE.admits(text.lower()):
        return []
    return [
        ("password_near_keyword", m.start("value"), m.end("value"))
        for m in _VALUE_AS_PASSWORD.finditer(text)
        if stated(m["value"], text[m.end() : m.end() + _AS_AFTER]) and not _DOTTED.match(m["value"])
    ]


# A literal value given to a literal name: .NET appSettings (<add key="ClearTextPassword" value="…"/>), PHP
# define('AUTH_KEY', '…'), config.set("api_key", "…"). JSON and YAML pairs are the assignment rule's.
_NAMED_LITERALS = (
    re.compile(r'(?i)\bkey\s*=\s*"(?P<name>[\w.:\-]{2,60})"\s+value\s*=\s*"(?P<value>[^"]{6,200})"'),
    re.compile(r"""\(\s*(?P<q>["'])(?P<name>[\w.:\-]{2,60})(?P=q)\s*,\s*(?P<r>["'])(?P<value>[^"'\n]{6,200})(?P=r)"""),
)
_NAMED_LITERAL_GATES = tuple(Gate.of(p) for p in _NAMED_LITERALS)  # the first folds case: "KEY=… VALUE=…"
_PASSWORD_IN_NAME = re.compile(r"(?i)pass(?:word|wd)?(?![a-z])|passwd|password|pwd")
_SECRET_IN_NAME = re.compile(r"(?i)secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|auth[_\-]?key|_key$|salt")


def named_literals(text: str, password_like: Check, random_value: Check) -> list[Span]:
    """The value of a literal pair whose name holds a credential word: password-like for a password name, random
    for a secret, token or key name."""
    out: list[Span] = []
    for pattern, gate in zip(_NAMED_LITERALS, _NAMED_LITERAL_GATES, strict=True):
        if not gate.admits(text.lower() if gate.folded else text):
            continue
        for m in pattern.finditer(text):
            name, value = m.group("name"), m.group("value")
            if _PASSWORD_IN_NAME.search(name):
                ok = password_like(value)
            else:
                ok = _SECRET_IN_NAME.search(name) is not None and random_value(value)
            if ok:
                out.append(("credential_assignment", m.start("value"), m.end("value")))
    return out


# A wallet's seed phrase: 12 to 24 lowercase words right after "seed phrase", "mnemonic", "助记词".
_SEED_WORD = re.compile(
    r"(?i)\b(?:(?:seed|recovery|backup|secret|mnemonic)[\s_-]?(?:phrase|words)|mnemonic)\b|助记词|助記詞|ニーモニック"
)
_SEED_WORDS = re.compile(r"[a-z]{3,8}(?:[ \t,]+[a-z]{3,8}){11,23}\b")
_SEED_GATE = Gate.of(_SEED_WORD)


def seed_phrases(text: str, is_function_word: Check) -> list[Span]:
    """Twelve or more lowercase words within 16 characters after a seed-phrase word, at most three of them
    function words (prose about a seed phrase has many)."""
    out: list[Span] = []
    if not _SEED_GATE.admits(text.lower()):
        return out
    for word in _SEED_WORD.finditer(text):
        m = _SEED_WORDS.search(text, word.end(), min(len(text), word.end() + 16 + 9 * 24))
        if m is None or m.start() - word.end() > 16:
            continue
        words = re.split(r"[ \t,]+", m.group(0))
        if sum(map(is_function_word, words)) <= 3:
            out.append(("seed_phrase", m.start(), m.end()))
    return out


# A UUID or a hex id is not a secret by itself; right after a word that names a credential it is (Heroku and
# Postmark keys are UUIDs, Datadog, PagerDuty and Twilio ones hex): "the Heroku API key 3fa85f64-…".
_KEYED_WORD = re.compile(
    r"(?i)\b(?:api|app|application|access|auth|secret|server|account|integration|routing|license|licence|ingest"
    r"|admin|service|private|signing|master|deploy|personal|bot|client|webhook|management|rest|user|org|project"
    r"|team)[\s_.-]?(?:keys?|tokens?)\b|\b(?:secrets?|passwords?|passwd|passphrase|credentials?|apikey|tokens?)\b"
    r"|geniekey|\b(?:jetons?|cl(?:é|e)s? (?:d'api|secr[èe]te|d'acc[èe]s)|claves? (?:de api|secreta|de acceso)"
    r"|chaves? (?:de api|secreta|de acesso)|chiav[ei] (?:api|segreta|di accesso)|(?:zugangs|api-?)schl(?:ü|ue)ssel"
    r"|zugangstoken|токен|klucz(?:a|e)?(?: api| dostępu| tajny)?|(?:api-?)?sleutel|api-?nyckel)\b"
    r"|令牌|密钥|秘钥|访问密钥|アクセストークン|トークン|シークレット"
)
_KEYED_VALUE = re.compile(
    r"(?<![0-9A-Za-z_\-])(?:0x)?([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{24,64})"
    r"(?![0-9A-Za-z_\-])"
)
# Words between the credential word and the value that make the value an id, a digest or an example of a format.
_KEYED_NOT = re.compile(
    r"(?i)\b(?:ids?|fingerprints?|hash(?:es)?|digests?|sha\d*|md5|checksums?|commits?|uuids?|names?|versions?|like"
    r"|e\.g|examples?|formats?|such as|looks?|hex)\b|\n\s*\n|[.!?]\s"
)
_KEYED_CHARS = 48
# What every _KEYED_VALUE and _HEX_KEY match contains: 24 hex digits in a row, or a UUID's start.
_HEX_RUN = re.compile(r"[0-9a-fA-F]{24}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-")
_SAME_CHAR_RUN = re.compile(r"(.)\1{7,}")


def keyed_ids(text: str) -> list[Span]:
    """A UUID or ≥ 32 hex digits starting within 48 characters after a word naming a credential, unless the words
    between make it an id."""
    out: list[Span] = []
    if not _HEX_RUN.search(text):
        return out  # every value holds a run of ≥ 24 hex digits or is a UUID (8 hex, then -, 4 hex, -)
    for word in _KEYED_WORD.finditer(text):
        m = _KEYED_VALUE.search(text, word.end(), min(len(text), word.end() + _KEYED_CHARS + 64))
        if m is None or m.start() - word.end() > _KEYED_CHARS or _KEYED_NOT.search(text, word.end(), m.start()):
            continue
        if _SAME_CHAR_RUN.search(m.group(1)) or (len(m.group(1)) < 32 and "secret" not in word.group(0).lower()):
            continue  # 00000000-0000-0000-0000-000000000000; 24 to 31 hex digits only as a secret (Plaid's)
        out.append(("credential_near_keyword", m.start(1), m.end(1)))
    return out


# Chinese clouds (Huawei, Baidu, Volcengine, Kingsoft) call the key pair "AK" and "SK": "AK: …", "HUAWEICLOUD_SDK_SK=…".
_AK_SK = re.compile(
    r"(?:(?<![A-Za-z0-9])|(?<=_))(?:AK|SK)(?![A-Za-z0-9])\s*(?:[:=：]|是|为|\bis\b)\s*[\"'“]?"
    r"(?P<value>[A-Za-z0-9/+=]{16,64})(?![A-Za-z0-9/+=])"
)


def ak_sk_pairs(text: str, random_value: Check) -> list[Span]:
    """A random value labelled AK or SK (an access key id or secret key of a Chinese cloud)."""
    if "AK" not in text and "SK" not in text:
        return []
    return [
        ("access_key_pair", m.start("value"), m.end("value")) for m in _AK_SK.finditer(text) if random_value(m["value"])
    ]
