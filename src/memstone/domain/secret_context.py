"""Secrets told by their context, in any language, and values that only look like secrets (issue 16, item 4).

The format list and the entropy rules of :mod:`memstone.domain.secrets` judge a value by its shape. Developers also
paste secrets whose shape is ordinary, and say what they are around them; and they paste public values whose
shape is random. This module reads the context:

- **one-time-password seeds and recovery codes**: groups of letters and digits (``Z5YF HISL 5D7T …``,
  ``KSI6-DA7Y-FFQT``, ``3f8a1-c92de``) or a base32 run after a word naming a 2FA seed or a recovery code, in
  English, German, French, Spanish, Portuguese, Italian, Chinese and Japanese;
- **a value named after it**: a quoted or code-span value followed, in the same sentence, by a credential word
  ("use `Zk4mP9vR2xQ7wL1n` as the HMAC key", "`…` es la clave"), when the value looks generated;
- **a password described instead of written**: a password word, a copula, and a recipe that composes it ("the
  name of the shop cat with a capital M followed by 2024!", "Name des Hundes plus 2024!");
- **the values of a Kubernetes Secret**: every value under ``data:`` or ``stringData:`` of a manifest of
  ``kind: Secret`` is a secret by declaration, whatever its shape, unless it is empty or a placeholder.

And what is *not* a secret although a rule found it (:func:`public_value`): a password hash in PHC or crypt format
(``$argon2id$v=19$…``, ``$2b$12$…``), an SSH public key blob (``ssh-ed25519 AAAAC3…``), an elliptic-curve public
point (a VAPID key: base64url of 65 bytes starting with 0x04), and a value introduced as a public key in any of
these languages ("clé publique", "öffentlicher Schlüssel", "公钥").

Each finder returns ``(kind, start, end)`` spans; value checks that live in :mod:`memstone.domain.secrets` are
passed in, so the detector stays one. ``bench/bench_secret_lines.py`` measures these rules on labelled lines,
``bench/bench_secrets_fp.py`` their false positives on real code and prose.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable

from .regex_gate import Gate

__all__ = [
    "context_secrets",
    "described_passwords",
    "grouped_codes",
    "manifest_secrets",
    "named_env_values",
    "public_value",
    "trailing_named_values",
]

# A finding (its kind, start, end) and a test of a value: the detectors here and in secret_generic.py share them.
Span = tuple[str, int, int]
Check = Callable[[str], bool]


def _entropy(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


# ------------------------------------------------------------------------------ 2FA seeds and recovery codes
_CODE_WORD = re.compile(
    r"(?i)\b(?:recovery|backup|rescue|emergency|scratch)[\s_-]?(?:codes?|keys?)\b|\b(?:totp|otp|2fa|mfa|hotp)\b"
    r"|\b(?:authenticator|seed)\b|\bwiederherstellungs\w*|\bnotfall-?codes?\b|\bbackup-?codes?\b"
    r"|\bcodes? de (?:r[ée]cup[ée]ration|secours|recuperaci[óo]n|respaldo|recupera[çc][ãa]o|backup)\b"
    r"|\bc[óo]digos? de (?:recuperaci[óo]n|respaldo|recupera[çc][ãa]o|backup|seguridad)\b"
    r"|\bcodici di (?:recupero|backup|emergenza)\b"
    r"|恢复码|备用码|救援码|恢復碼|備用碼|验证器密钥|二次验证|两步验证|リカバリーコード|バックアップコード|復旧コード|二段階認証"
)
_RECOVERY = re.compile(
    r"(?i)recovery|backup|rescue|emergency|scratch|wiederherstellung|notfall|r[ée]cup|secours|respaldo|recupera|codici"
    r"|恢复|备用|救援|恢復|備用|リカバリー|バックアップ|復旧"
)
# Groups of 4 to 6 letters and digits joined by a space or a dash, at least two groups (three when spaced), or
# two groups of four digits (Google's backup codes), or three or more codes of 6 to 10 digits (Render's, GitHub's).
_GROUPS = re.compile(
    r"(?<![A-Za-z0-9_\-])(\d{6,10}(?:\s+\d{6,10}){2,}|\d{4} \d{4}(?![ -]?[A-Za-z0-9])"
    r"|[A-Za-z0-9]{4,6}(?:-[A-Za-z0-9]{4,6})+|[A-Za-z0-9]{4,6}(?: [A-Za-z0-9]{4,6}){2,}"
    r"|[A-Z2-7]{16,64}={0,6}|[a-z2-7]{16,64})(?![A-Za-z0-9_\-])"
)
_CODE_CHARS = 100
# A list of three or more codes of one length, separated by commas or blanks ("qqedudyx, 96u9kg25, 4r98xdep, …").
_CODE_LIST = re.compile(r"(?<![\w\-])([A-Za-z0-9]{6,12}(?:(?:[ \t]*[,;][ \t]*|\s+)[A-Za-z0-9]{6,12}){2,})(?![\w\-])")
_LIST_SEP = re.compile(r"[\s,;]+")
_LIST_STOP = re.compile(r"[.;!?。；](?:\s|$)")  # a list follows its word in the same sentence


def _code_list(value: str) -> bool:
    """Distinct codes of one length, most of them letters and digits mixed (or all digits): generated, not words."""
    codes = _LIST_SEP.split(value)
    if len({len(c) for c in codes}) > 1 or len(set(codes)) < len(codes):
        return False
    if all(c.isdigit() for c in codes):
        return all(len(set(c)) > 2 for c in codes)
    mixed = sum(any(ch.isdigit() for ch in c) and any(ch.isalpha() for ch in c) for c in codes)
    return mixed * 2 >= len(codes)


def _code_like(value: str, *, recovery: bool) -> bool:
    """Generated groups of one length (or a base32 run): varied characters, not a date, a version or words."""
    flat = re.sub(r"[\s-]", "", value)
    recovery_digits = r"\d{4} \d{4}|\d{6,10}(?:\s+\d+)+|\d{4,8}(?:-\d{4,8}){3,}"  # last: BitLocker's 8 groups of 6
    if len(flat) < 8 or (flat.isdigit() and not (recovery and re.fullmatch(recovery_digits, value))):
        return False  # digits alone only as "1234 5678" or a list after "backup codes": not a date or a number
    groups = re.split(r"\s+|-", value)
    if any(re.fullmatch(r"[a-z]+|[A-Z][a-z]+", g) and len(re.findall(r"[aeiou]", g)) >= 2 for g in groups):
        return False  # a word among the groups ("affect normal usage"): prose, not a code
    if re.fullmatch(r"[A-Z2-7]+=*|[a-z2-7]+", flat) and len(flat) >= 16:
        # a base32 seed; unbroken, it needs a digit, so that a long word is not one
        return _entropy(flat) >= 3.5 and (len(groups) > 1 or any(c.isdigit() for c in flat))
    if len({len(g) for g in groups}) > 1 or len(groups) < 2:
        return False  # codes come in groups of one length; 2024-06-11 or v2-beta3 do not
    return flat.isdigit() or len(set(flat.lower())) >= 0.6 * len(flat)


# The word regex runs only on a text holding one of its literals (most code and prose holds none).
_CODE_GATE = Gate.of(_CODE_WORD)


def grouped_codes(text: str) -> list[Span]:
    """OTP seeds and recovery codes: generated groups within 100 characters after a word naming them."""
    out: list[Span] = []
    lower = text.lower()
    if not _CODE_GATE.admits(lower):
        return out
    for word in _CODE_WORD.finditer(text):
        recovery = _RECOVERY.search(word.group(0)) is not None
        window = min(len(text), word.end() + _CODE_CHARS)
        for m in _GROUPS.finditer(text, word.end()):  # a code starts in the window and runs to its own end
            if m.start() >= window:
                break
            if _code_like(m.group(1), recovery=recovery):
                out.append(("otp_or_recovery_code", m.start(1), m.end(1)))
        stop = _LIST_STOP.search(text, word.end(), window) if recovery else None
        for m in _CODE_LIST.finditer(text, word.end(), stop.start() if stop else len(text)) if recovery else ():
            if m.start() >= window:
                break
            if _code_list(m.group(1)):
                out.append(("otp_or_recovery_code", m.start(1), m.end(1)))
    return out


# ------------------------------------------------------------------------------ a value named after it
_QUOTED = re.compile(r"[`\"'“«「]([^\s`\"'”»」]{12,80})[`\"'”»」]")
_NAMED_AFTER = re.compile(
    r"(?i)[^.!?\n。！？]{0,40}?(?:\b(?:api[\s_-]?key|key|token|secret|password|passphrase|credential|passwort"
    r"|schl(?:ü|ue)ssel|kennwort|cl(?:é|e)|jeton|mot de passe|clave|contrase(?:ñ|n)a|chave|senha|chiave|segreto)s?\b"
    r"|密码|密钥|秘钥|令牌|口令|パスワード|トークン|秘密鍵|キー)"
)


_WORDISH = re.compile(r"[A-Za-z][a-z]{2,}")


def _generated(value: str) -> bool:
    """Upper and lower case and digits, varied, not made of words, not a path, URL, version or hex digest."""
    if any(c in value for c in "/.:\\@") or re.fullmatch(r"[0-9a-fA-F-]+", value):
        return False
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
        return False
    wordish = sum(len(w) for w in _WORDISH.findall(value))
    return wordish < 0.5 * len(value) and _entropy(value) >= 3.3


def trailing_named_values(text: str, is_placeholder: Check) -> list[Span]:
    """A quoted or code-span value that the same sentence names a credential after it ("use `…` as the key")."""
    out: list[Span] = []
    for m in _QUOTED.finditer(text):
        value = m.group(1)
        if _NAMED_AFTER.match(text, m.end()) and _generated(value) and not is_placeholder(value):
            out.append(("credential_named_after", m.start(1), m.end(1)))
    return out


# ------------------------------------------------------------------------------ a described password
_PASSWORD_THEN_COPULA = re.compile(
    r"(?i)(?:\bpass(?:word|wort|phrase)|\bkennwort|mot de passe|contrase(?:ñ|n)a|\bsenha|\bparola d'ordine|密码|口令"
    r"|パスワード)[^.!?\n。]{0,50}?(?:\b(?:is|ist|est|es|é|è|lautet|era)\b|是|为|は)"
)
_RECIPE = re.compile(
    r"(?i)\b(?:followed by|then|plus|and then|with a capital|capitali[sz]ed|gefolgt von|dahinter|danach|mit gro(?:ß|ss)"
    r"|suivi(?:e)? de|puis|avec une majuscule|seguid[oa] de|más|luego|con may[úu]scula|seguito da|pi[úu]|e poi"
    r"|seguido de|mais|depois)\b|加上|后面加|後面加|再加|のあとに|の後に|に続けて|\s\+\s"
)
_COMPOSED_PART = re.compile(r"\d{2,}|[!@#$%^&*?]")
# The end of a sentence, but not the dot of an abbreviation ("e.g.", "i.e.", "z.B.", "p.ex.").
_CLAUSE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bz\.B)(?<!\bex)[.!?。！？](?:\s|$)|\n")


def described_passwords(text: str) -> list[Span]:
    """ "the password is the name of the dog plus 2024!": a password word, a copula, and a recipe in one sentence."""
    out: list[Span] = []
    lower = text.lower()
    if not any(
        a in lower
        for a in ("pass", "kennwort", "mot de passe", "contrase", "senha", "parola", "密码", "口令", "パスワード")
    ):
        return out
    for m in _PASSWORD_THEN_COPULA.finditer(text):
        end = _CLAUSE_END.search(text, m.end() + 1)
        stop = end.end() if end else len(text)
        clause = text[m.end() : stop]
        recipes = _RECIPE.finditer(clause)
        if len(clause) <= 160 and any(_COMPOSED_PART.search(clause, r.end(), r.end() + 25) for r in recipes):
            out.append(("described_password", m.end(), stop))
    return out


# ------------------------------------------------------------------------------ Kubernetes Secret manifests
_SECRET_KIND = re.compile(r"(?m)(?:^|\s)[\"']?kind[\"']?\s*:\s*[\"']?Secret[\"']?\s*,?\s*$")
_DATA_BLOCK = re.compile(r"(?m)^(?P<indent>[ \t]*)(?:string)?[dD]ata:\s*$")
_ENTRY = re.compile(r"(?m)^(?P<indent>[ \t]+)[\"']?[A-Za-z0-9_.\-]+[\"']?\s*:\s*[\"']?(?P<value>[^\s\"'#]+)[\"']?\s*$")


def manifest_secrets(text: str, is_placeholder: Check) -> list[Span]:
    """The values under ``data:``/``stringData:`` of a ``kind: Secret`` manifest, unless empty or placeholders."""
    out: list[Span] = []
    if "Secret" not in text or not _SECRET_KIND.search(text):
        return out
    for block in _DATA_BLOCK.finditer(text):
        indent = len(block.group("indent").expandtabs())
        pos = block.end() + 1
        while pos < len(text):
            m = _ENTRY.match(text, pos)
            if m is None or len(m.group("indent").expandtabs()) <= indent:
                break
            value = m.group("value")
            decoded = _b64_text(value) if "string" not in block.group(0) else value
            if len(value) >= 4 and not is_placeholder(value) and not (decoded is not None and is_placeholder(decoded)):
                out.append(("kubernetes_secret_value", m.start("value"), m.end("value")))
            pos = m.end() + 1
    return out


def _b64_text(value: str) -> str | None:
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        return raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None


# ------------------------------------------------------------------------------ values of secret-named variables
# A variable whose name says secret: a password, a secret, a token, an API, access or private key, credentials.
_SECRET_VAR = re.compile(
    r"(?i)(?:^|[_.-])(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|signing[_-]?key|auth[_-]?key|credentials?)(?:$|[_.-])"
    r"|(?<![A-Z])(?!(?:CACHE|SORT|PRIMARY|PARTITION|FOREIGN|IDEMPOTENCY|ROUTING|SHARD|LOOKUP|HOT|PUBLIC|PUB|OBJECT"
    r"|S3|MAP|DEDUP|UNIQUE|SEARCH|TRANSLATION|I18N|GROUP|QUEUE|STREAM|SSH|GPG)_KEY$)[A-Z0-9]+_KEY$"
)
_ENV_VALUE_LINE = re.compile(
    r"(?m)(?:^[ \t]*|(?<=\s)(?=export\s))(?:export[ \t]+|set[ \t]+\"?|\$env:)?(?P<name>[A-Z][A-Z0-9_]{2,})"
    r"[ \t]*=[ \t]*[\"']?(?P<value>[^\s\"'#]{8,})[\"']?[ \t]*$"
)
# A name and a value given as two fields: a Kubernetes or Compose env list, an ECS task definition.
_NAME_VALUE = re.compile(
    r"(?m)\bname[\"']?\s*:\s*[\"']?(?P<name>[A-Za-z][A-Za-z0-9_.-]{2,})[\"']?\s*(?:,\s*|\n\s*)[\"']?value[\"']?"
    r"\s*:\s*[\"']?(?P<value>[^\s\"'#,}]{6,})"
)


def _short_secret(value: str) -> bool:
    """A value a secret-named variable holds: letters and digits (or symbols), varied, not a path, URL or number."""
    if any(c in value for c in "/:\\") or value.startswith(("$", "%", "{")) or not any(c.isalpha() for c in value):
        return False
    if not (any(c.isdigit() for c in value) or any(not c.isalnum() and c not in "-_." for c in value)):
        return False  # words joined by dashes ("current-span", "my-secret-value") are names or placeholders
    return len(set(value)) >= 0.5 * len(value) and _entropy(value) >= 2.8


def named_env_values(text: str, is_placeholder: Check) -> list[Span]:
    """``export HB_KEY=38v0O8Y7tK9K`` and ``- name: API_TOKEN / value: "…"``: the value of a secret-named variable."""
    out: list[Span] = []
    # A match of _ENV_VALUE_LINE holds "=", one of _NAME_VALUE (case-sensitive) "value".
    for rx, literal in ((_ENV_VALUE_LINE, "="), (_NAME_VALUE, "value")):
        for m in rx.finditer(text) if literal in text else ():
            value = m.group("value")
            if _SECRET_VAR.search(m.group("name")) and not is_placeholder(value) and _short_secret(value):
                out.append(("secret_named_value", m.start("value"), m.end("value")))
    return out


def context_secrets(text: str, is_placeholder: Check) -> list[Span]:
    """Every finder of this module, with the detector's placeholder check."""
    return [
        *grouped_codes(text),
        *trailing_named_values(text, is_placeholder),
        *described_passwords(text),
        *manifest_secrets(text, is_placeholder),
        *named_env_values(text, is_placeholder),
    ]


# ------------------------------------------------------------------------------ public values
_PHC_HASH = re.compile(
    r"\$(?:argon2(?:id|i|d)|2[abxy]|[156]|pbkdf2(?:-sha\d+)?|scrypt|bcrypt|sha(?:256|512)crypt|y)\$[^\s\"'`]*"
)
_SSH_PUBLIC = re.compile(r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+|sk-(?:ssh|ecdsa)-[\w@.-]+)\s+$")
_PUBLIC_KEY_PHRASE = re.compile(
    r"(?i)(?:\bpublic[\s_-]?key|\bcl(?:é|e) publique|\b(?:ö|oe)ffentliche[rn]? schl(?:ü|ue)ssel|\bclave p(?:ú|u)blica"
    r"|\bchave p(?:ú|u)blica|\bchiave pubblica|公钥|公開鍵|公開キー|공개\s?키)[^.!?\n。]{0,60}$"
)


def public_value(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is part of a password hash, an SSH public key, an EC public point or a named public key."""
    token_start = max(text.rfind(c, 0, start) for c in " \t\n\"'`(")
    if text.startswith("arn:", token_start + 1):
        return True  # inside an AWS ARN: the name of a secret, not its value
    for m in _PHC_HASH.finditer(text, max(0, start - 120), min(len(text), end + 1)):
        if m.start() <= start and end <= m.end():
            return True
    before = text[max(0, start - 40) : start]
    if _SSH_PUBLIC.search(before) or text.startswith(("AAAAC3NzaC1", "AAAAB3NzaC1", "AAAAE2VjZHNh"), start):
        return True
    if re.fullmatch(r"[0-9a-fA-F]{7,64}", text[start:end]) and _digest_named(text, start, end):
        return True  # a commit or a digest, named so in the same sentence
    if text.startswith(("pk_live_", "pk_test_", "sb_publishable_"), start):
        return True  # a publishable key is meant for the browser
    raw = _b64url_bytes(text[start:end])
    if raw is not None and ((len(raw) == 65 and raw[0] == 4) or (len(raw) == 33 and raw[0] in (2, 3))):
        return True  # an uncompressed or compressed P-256 point: a VAPID or ECDH public key
    phrase = _PUBLIC_KEY_PHRASE.search(text, max(0, start - 80), start)
    return phrase is not None and not _PRIVATE.search(phrase.group(0))


_DIGEST_WORD = re.compile(
    r"(?i)\b(?:commit|revision|sha\d*|hash|digest|checksum|md5|empreinte|prüfsumme|revert)\w*\b|提交|哈希|校验和|摘要|コミット|ハッシュ"
)
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)|\n")


def _digest_named(text: str, start: int, end: int) -> bool:
    """A commit, hash or digest word in the same sentence as ``text[start:end]``, within 60 characters of it."""
    before = text[max(0, start - 60) : start]
    cut = max((m.end() for m in _SENTENCE_END.finditer(before)), default=0)
    after = text[end : end + 60]
    stop = _SENTENCE_END.search(after)
    return bool(_DIGEST_WORD.search(before[cut:]) or _DIGEST_WORD.search(after[: stop.start() if stop else None]))


_PRIVATE = re.compile(r"(?i)privat|secret|秘密|私钥|私鑰|비밀")


def _b64url_bytes(value: str) -> bytes | None:
    if not re.fullmatch(r"[A-Za-z0-9_\-+/]+={0,2}", value):
        return None
    try:
        return base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_") + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return None
