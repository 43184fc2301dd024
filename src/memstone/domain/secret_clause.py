"""Secrets told by the clause they sit in, not by a format or an exact naming phrase (issue 16, item 4).

The other finders ask for a named format, a naming word right before a value, or a long random token. Developers
also write "ssh in as root: F%uFDGY7R", "le compte admin, c'est admin@verbier et A@g66ZjfpL", "账号是 ops-admin，登录用
hk50Jf2EUZEH": a short value in a clause about logging in or a key, with no copula after the word that names it. This
module reads the structure instead of the phrasing:

- **a generated value in a credential clause**: a clause (up to a sentence end) that holds a credential word of
  any of the languages capture sees (password, key, token, secret, login, account, root, admin, credentials and
  their French, German, Spanish, Portuguese, Italian, Chinese, Japanese and Korean words), and after that word a
  value of 8 to 64 characters that mixes upper case, lower case and digits (or letters, digits and a symbol) in
  several runs and is not made of words: not an identifier, a version, a hex digest, an e-mail address or a path;
- **an app password**: four groups of four lower-case letters after a password word (the shape Google and Apple
  give app-specific passwords), unless the groups are words of prose;
- **a one-time code**: 4 to 8 digits (grouped or not) after a word naming a verification, confirmation, login,
  SMS or 2FA code, or after "code" in a clause that says it was sent or texted.

Each finder returns ``(kind, start, end)`` spans for :mod:`memstone.domain.secrets`, the one detector every write
path runs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from math import log2

__all__ = ["CLAUSE_KINDS", "app_passwords", "clause_secrets", "generated_in_clause", "one_time_codes"]

CLAUSE_KINDS = ("credential_in_clause", "app_password", "one_time_code")
Span = tuple[str, int, int]
Check = Callable[[str], bool]

# ------------------------------------------------------------------------------ a generated value in a clause
# Words that make a clause about a credential (matched on the lower-cased text; ASCII words need a boundary).
_CUE = re.compile(
    r"(?<![a-z0-9_\-./])(?:pass(?:word|wd|phrase)?s?|pwd|pw|logins?|log in|sign in|credentials?|creds|accounts?"
    r"|root|admin|ssh|users?(?:name)?|keys?|tokens?|secrets?|api[ _-]?keys?"
    r"|mot de passe|mdp|identifiants?|comptes?|connexion|cl(?:é|e)s?|jetons?"
    r"|passwort|kennwort|benutzer(?:name)?|konto|zugang(?:sdaten)?|anmeldung|schl(?:ü|ue)ssel"
    r"|contrase(?:ñ|n)a|clave|cuenta|usuario|acceso|credenciales|senha|chave|conta|usu(?:á|a)rio|acesso"
    r"|credenciais|utente|accesso|credenziali|chiave|token)(?![a-z0-9_\-])"
    r"|密码|口令|密碼|账号|帐号|账户|賬號|登录|登陆|用户名|密钥|秘钥|令牌"
    r"|パスワード|アカウント|ログイン|ユーザー|トークン|キー|비밀번호|계정|로그인|토큰"
)
_CUE_ANCHORS = (
    *str.split("pass pw log sign cred account root admin ssh user key token secret mdp ident compte connexion cl"),
    *str.split("jeton wort benutzer konto zugang anmeldung schl contrase clave cuenta usuario acceso senha chave"),
    *str.split("conta usu acesso utente access chiave 密 口令 账 帐 賬 登 用户 令牌 パスワード アカウント ログイン"),
    *str.split("ユーザー トークン キー 비밀 계정 로그인 토큰"),
)
_CLAUSE_END = re.compile(r"[.!?。！？](?:\s|$)|\n\s*\n|[;；]")
_CLAUSE_CHARS = 80
_VALUE = re.compile(
    r"(?<![A-Za-z0-9!#$%&*+?@^~_\-./:=|\\\[])([A-Za-z0-9!#$%&*+?@^~_\-]{8,64})(?![A-Za-z0-9!#$%&*+?@^~_\-./:(\[\]|\\])"
)
# Words between the credential word and the value that make the clause about a shape, not a value ("tokens begin
# with ATATT3xFfGF0", "keys look like …", "the key id is …", "the hash of the password is …").
_ABOUT = re.compile(
    r"begin|start|prefix|look|like|e\.g\.|example|such as|format|shape|hash|digest|fingerprint|public|\bids?\b|name"
    r"|commen|beginn|anfang|wie|comme|como|come|ejemplo|exemple|beispiel|esempio|例|如|形式"
)
_DIGIT = re.compile(r"\d")
_RANGE = re.compile(r"0-9|a-z|A-Z")
_SYMBOL = frozenset("!#$%&*+?@^~")
_RUN = re.compile(r"[A-Z]+|[a-z]+|\d+|[^A-Za-z\d]+")
_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}")  # capitals alone (EUZEH, HTTP) are neither word nor proof of randomness
_VOWELS = frozenset("aeiouy")
_HEXISH = re.compile(r"[0-9a-fA-F]+")
_VERSIONISH = re.compile(r"(?i)^v?\d+(?:[._-]\d+)+")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+\.[\w.-]+$")


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * log2(n / len(value)) for n in counts.values())


def _wordlike(run: str) -> bool:
    """A run of letters that reads as a word: three letters with a vowel, or four or more, a third of them vowels."""
    vowels = sum(c in _VOWELS for c in run.lower())
    return vowels >= 1 if len(run) == 3 else vowels >= 0.3 * len(run)


def generated(value: str) -> bool:
    """A value a password manager or a key generator wrote: mixed classes in many runs, not words or a name.

    >>> generated("hk50Jf2EUZEH"), generated("F%uFDGY7R"), generated("sha256Hex"), generated("MRN-2024-000187")
    (True, True, False, False)
    """
    v = value.rstrip("-_")
    if len(v) < 8 or _HEXISH.fullmatch(v) or _VERSIONISH.match(v) or _EMAIL.match(v):
        return False
    upper, lower = any(c.isupper() for c in v), any(c.islower() for c in v)
    digit, symbol = any(c.isdigit() for c in v), any(c in _SYMBOL for c in v)
    if not (upper and lower and digit) and not ((upper or lower) and digit and symbol):
        return False  # one case and digits is an id (MRN-2024-000187, ops-admin1); a password mixes more
    runs = _RUN.findall(v)
    if len(runs) < 4:
        return False  # OAuth2, Python311, X509Certificate: a word and a number
    letters = sum(c.isalpha() for c in v)
    if sum(map(len, filter(_wordlike, _WORDISH.findall(v)))) >= 0.5 * letters:
        return False  # code names and words with numbers: getUser2Id, Base64Encoder, iPhone15Pro, svc_Deploy01
    return _entropy(v) >= 0.75 * log2(min(len(v), 64))


def generated_in_clause(text: str, is_placeholder: Check) -> list[Span]:
    """A generated value after a credential word in the same clause (see the module doc)."""
    out: list[Span] = []
    lower = text.lower()
    if len(lower) != len(text) or not any(a in lower for a in _CUE_ANCHORS):
        return out
    taken = -1
    for cue in _CUE.finditer(lower):
        if cue.start() < taken:
            continue
        end = min(len(text), cue.end() + _CLAUSE_CHARS)
        stop = _CLAUSE_END.search(text, cue.end(), end)
        end = stop.start() if stop else end
        if not _DIGIT.search(text, cue.end(), end):
            continue  # every generated value holds a digit: most clauses of code and prose have none
        for m in _VALUE.finditer(text, cue.end()):  # not cut at the window's end: a value runs to its own end
            value = m.group(1)
            if m.start() >= end or _RANGE.search(value):
                break  # past the clause, or a regular expression's character class ([0-9a-zA-Z])
            if _ABOUT.search(lower, cue.end(), m.start()):
                break
            value = value.rstrip("!?")  # a sentence's end, as the pair rule reads it ("admin / 09xhTGOWvG!")
            if generated(value) and not is_placeholder(value):
                out.append(("credential_in_clause", m.start(1), m.start(1) + len(value)))
                taken = m.end(1)
                break
    return out


# ------------------------------------------------------------------------------ app passwords
_PASSWORD = re.compile(
    r"pass(?:word|wd)s?\b|mot de passe|passwort|kennwort|contrase(?:ñ|n)a|senha|密码|密碼|パスワード|비밀번호"
)
_APP_PASSWORD = re.compile(r"(?<![A-Za-z])([a-z]{4}(?: [a-z]{4}){3})(?![A-Za-z]| [a-z])")
_APP_CHARS = 80
_UNSPELLABLE = re.compile(r"^[^aeiouy]+$|[^aeiouy]{3}|^(.)\1")  # no vowel, three consonants, a doubled start
_APP_ANCHORS = ("pass", "senha", "contrase", "wort", "密", "パス", "비밀")


def app_passwords(text: str, is_function_word: Check) -> list[Span]:
    """Four groups of four lower-case letters after a password word, unless two of them are words of prose."""
    lower = text.lower()
    if len(lower) != len(text) or not any(a in lower for a in _APP_ANCHORS):
        return []
    found = (
        m
        for word in _PASSWORD.finditer(lower)
        for m in _APP_PASSWORD.finditer(text, word.end(), min(len(text), word.end() + _APP_CHARS))
    )
    # Random groups: at most one a function word ("with this that they" is prose), one that no word spells (nngl, dpry).
    return [
        ("app_password", m.start(1), m.end(1))
        for m in found
        if sum(map(is_function_word, groups := m.group(1).split())) < 2 and any(map(_UNSPELLABLE.search, groups))
    ]


# ------------------------------------------------------------------------------ one-time codes
_OTP_WORD = re.compile(
    r"(?:verification|confirmation|security|login|sign[- ]?in|one[- ]time|2fa|mfa|otp|sms|auth(?:entication)?"
    r"|authenticator|totp)[\s-]?codes?\b|\botp\b|\btan\b"
    r"|codes? (?:de )?(?:v[ée]rification|confirmation|connexion|s[ée]curit[ée])"
    r"|(?:best(?:ä|ae)tigungs|verifizierungs|sicherheits|anmelde|einmal)-?codes?\b"
    r"|c[óo]digos? (?:de )?(?:verificaci[óo]n|verifica[çc][ãa]o|confirmaci[óo]n|confirma[çc][ãa]o|seguridad"
    r"|seguran[çc]a|acceso|acesso)|codice (?:di )?(?:verifica|conferma|sicurezza|accesso)"
    r"|验证码|校验码|動態碼|驗證碼|認証コード|確認コード|ワンタイム|인증 ?번호|인증 ?코드"
)
_SENT_CODE = re.compile(
    r"\bcodes?\b(?=[^.!?\n]{0,48}?\b(?:texted|sent|sms|emailed|received|got|envoy[ée]|re[çc]u|enviado|recibido"
    r"|recebido|gesendet|geschickt|erhalten|inviato|ricevuto)\b)"
)
_OTP_ANCHORS = (*str.split("code otp tan 2fa mfa codigo código codice 验证 校验 動態 驗證 認証 確認 ワンタイム 인증"),)
_OTP_VALUE = re.compile(r"(?<![\d.,:/\-])(\d{3} \d{3}|\d{4,8})(?!\d|[.,:/]\d|\s?[%€$]|\s?(?:ms|s|px|kb|mb|gb)\b)")
_OTP_CHARS = 60


def one_time_codes(text: str) -> list[Span]:
    """4 to 8 digits after a word naming a one-time code, or after "code" in a clause saying it was sent."""
    out: list[Span] = []
    lower = text.lower()
    if len(lower) != len(text) or not any(a in lower for a in _OTP_ANCHORS):
        return out
    for word in (*_OTP_WORD.finditer(lower), *_SENT_CODE.finditer(lower)):
        end = min(len(text), word.end() + _OTP_CHARS)
        stop = _CLAUSE_END.search(text, word.end(), end)
        m = _OTP_VALUE.search(text, word.end(), stop.start() if stop else end)
        if m and len(set(m.group(1).replace(" ", ""))) > 1:
            out.append(("one_time_code", m.start(1), m.end(1)))
    return out


def clause_secrets(text: str, is_placeholder: Check, is_function_word: Check) -> list[Span]:
    """Every finder of this module, with the detector's placeholder and function-word checks."""
    return [
        *generated_in_clause(text, is_placeholder),
        *app_passwords(text, is_function_word),
        *one_time_codes(text),
    ]
