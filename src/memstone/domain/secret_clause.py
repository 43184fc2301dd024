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
from collections.abc import Callable, Iterator
from math import log2

from .regex_gate import Gate

__all__ = [
    "CLAUSE_KINDS",
    "app_passwords",
    "clause_secrets",
    "credential_slots",
    "generated_in_clause",
    "generated_letters",
    "one_time_codes",
    "shape_talk",
]

CLAUSE_KINDS = ("credential_in_clause", "app_password", "one_time_code", "credential_slot")
Span = tuple[str, int, int]
Check = Callable[[str], bool]

# ------------------------------------------------------------------------------ a generated value in a clause
# Words that make a clause about a credential (matched on the lower-cased text; ASCII words need a boundary).
_CUE = re.compile(
    r"(?:pass(?:word|wd|phrase)?s?|pwd|pw|logins?|log in|sign in|credentials?|creds|accounts?"
    r"|root|admin|ssh|users?(?:name)?|keys?|tokens?|secrets?|api[ _-]?keys?"
    r"|mot de passe|mdp|identifiants?|comptes?|connexion|cl(?:é|e)s?|jetons?"
    r"|passwort|kennwort|benutzer(?:name)?|konto|zugang(?:sdaten)?|anmeldung|schl(?:ü|ue)ssel"
    r"|contrase(?:ñ|n)a|clave|cuenta|usuario|acceso|credenciales|senha|chave|conta|usu(?:á|a)rio|acesso"
    r"|credenciais|utente|accesso|accedi|credenziali|chiave|amministratore|token"
    r"|wachtwoord(?:en)?|inlog(?:gen|gegevens|naam)?|gebruiker(?:snaam)?|beheerder|sleutel"
    r"|has(?:ł|l)(?:o|a|em)|logowania|zaloguj|u(?:ż|z)ytkownik(?:a|iem)?|klucz(?:a|e)?"
    r"|logs in|logged in|signs in|signed in|s?ftp|connecte(?:-toi|z-vous)?|entrar|anmelden|inloggen)(?![a-z0-9_\-])"
    r"|密码|口令|密碼|账号|帐号|账户|賬號|登录|登陆|用户名|密钥|秘钥|令牌"
    r"|パスワード|アカウント|ログイン|ユーザー|トークン|キー|管理者|비밀번호|패스워드|비번|암호(?!화)|계정|로그인|토큰|아이디|관리자"
)
_CUE_GATE = Gate.of(_CUE)  # every _CUE match holds one of its literals (read off the pattern: regex_gate)
# A cue's ASCII word starts a word: not after one of these (_CUE leaves the test out, so sre scans for its first
# letters; :func:`_cues` makes it).
_CUE_BEFORE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-./")
_CLAUSE_END = re.compile(r"[.!?。！？](?:\s|$)|\n\s*\n|[;；]")
_CLAUSE_CHARS = 80
_VALUE = re.compile(
    r"(?<![A-Za-z0-9!#$%&*+?@^~_\-./:=|\\\[])([A-Za-z0-9!#$%&*+?@^~_\-]{8,64})(?![A-Za-z0-9!#$%&*+?@^~_\-./:(\[\]|\\])"
)
# "Accedi come admin con …", "entra como root", "connecte-toi comme admin": "as" before a role, not "like".
_NOT_ROLE = r"(?!\s+(?:(?:el|o|l'|der|il|un|una|an?)\s*)?(?:admin\w*|root|super\w*|amministratore|usuario|utente))"
# Words between the credential word and the value that make the clause about a shape, not a value ("tokens begin
# with ATATT3xFfGF0", "keys look like …", "the key id is …", "the hash of the password is …").
_ABOUT = re.compile(
    r"begin|start|prefix|look|like|e\.g\.|example|such as|format|shape|hash|digest|fingerprint|public|\bids?\b|name"
    r"|commen|beginn|anfang|(?:wie|comme|como|come)" + _NOT_ROLE + r"|ejemplo|exemple|beispiel|esempio|例|如|形式"
)
_DIGIT = re.compile(r"\d")
# A value presented as the thing itself ("le voici :", "hier ist er:", "キーはこちら", "这是 … 的 token："): such a
# clause may hold a generated value of letters alone, which the digit gate would pass over.
_INTRO = re.compile(
    r"\bhere(?:'s| is| it is| you go| they are)\b|\bvoi(?:ci|là)\b|\bhier (?:ist|sind)\b|\becco(?:la|lo|li)?\b"
    r"|\baqu[íi] (?:est[áa]|tienes|va|van)\b|\bsegue(?:m)?\b|\beis\b|こちら|これです|这是|這是|如下|여기"
)
_INTRO_BEFORE = 40
_INTRO_GATE = Gate.of(_INTRO)
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


_PASSWORD_SYMBOL = frozenset("!#$%&*@^~?")


def password_shaped(value: str) -> bool:
    """A password a person chose or a manager wrote, once a clause names a credential: letters, a digit and one
    of ``!#$%&*@^~?`` inside it (Sommer2024!, DRNvvjafr*72), 8 to 64 characters, not an e-mail or a version.

    >>> password_shaped("QWD1gka02%54"), password_shaped("OAuth2Client"), password_shaped("ops@host1")
    (True, False, False)
    """
    v = value.rstrip("!?")
    if not 8 <= len(value) <= 64 or value[0] in _PASSWORD_SYMBOL or _EMAIL.match(value) or _VERSIONISH.match(v):
        return False
    symbols = {c for c in value if c in _PASSWORD_SYMBOL}
    if not symbols or symbols == {"@"}:
        return False  # no symbol; or user@host, an address
    return sum(c.isalpha() for c in v) >= 3 and any(c.isdigit() for c in v) and len(set(v)) >= 6


def generated_letters(value: str) -> bool:
    """Letters alone that a generator wrote: both cases in five or more runs, not words or a CamelCase name.

    >>> generated_letters("RNIJKpJBAwXlChNU"), generated_letters("ConsecteturAdipiscing")
    (True, False)
    """
    if not (12 <= len(value) <= 64 and value.isascii() and value.isalpha()) or value.isupper() or value.islower():
        return False
    if len(_RUN.findall(value)) < 5:
        return False
    if sum(map(len, filter(_wordlike, _WORDISH.findall(value)))) >= 0.5 * len(value):
        return False
    return _entropy(value) >= 0.75 * log2(len(value))


def _cues(lower: str) -> Iterator[re.Match[str]]:
    """``finditer`` of _CUE with the lookbehind it had before its ASCII words (not after a letter, digit or one of
    ``_-./``): where a match fails that test the old pattern failed at that position, so the scan goes on at the next
    character, as ``finditer`` would."""
    pos = 0
    while (cue := _CUE.search(lower, pos)) is not None:
        start = cue.start()
        if start and lower[start].isascii() and lower[start - 1] in _CUE_BEFORE:
            pos = start + 1
            continue
        yield cue
        pos = cue.end()


def generated_in_clause(text: str, is_placeholder: Check) -> list[Span]:
    """A generated value after a credential word in the same clause (see the module doc)."""
    out: list[Span] = []
    lower = text.lower()
    if len(lower) != len(text) or (not _DIGIT.search(text) and not _INTRO_GATE.admits(lower)):
        return out  # every clause would be skipped below: no digit in its window, no _INTRO before it
    if not _CUE_GATE.admits(lower):
        return out
    taken = -1
    for cue in _cues(lower):
        if cue.start() < taken:
            continue
        end = min(len(text), cue.end() + _CLAUSE_CHARS)
        stop = _CLAUSE_END.search(text, cue.end(), end)
        end = stop.start() if stop else end
        letters = False
        if not _DIGIT.search(text, cue.end(), end):
            letters = _INTRO.search(lower, max(0, cue.start() - _INTRO_BEFORE), end) is not None
            if not letters:
                # a generated value holds a digit unless presented as itself: most clauses have neither
                out.extend(_shaped_before(text, cue.start(), is_placeholder))
                continue
        for m in _VALUE.finditer(text, cue.end()):  # not cut at the window's end: a value runs to its own end
            value = m.group(1)
            if m.start() >= end or _RANGE.search(value):
                break  # past the clause, or a regular expression's character class ([0-9a-zA-Z])
            if _ABOUT.search(lower, cue.end(), m.start()):
                break
            value = value.rstrip("!?")  # a sentence's end, as the pair rule reads it ("admin / 09xhTGOWvG!")
            if (
                generated(value) or (letters and generated_letters(value)) or password_shaped(m.group(1))
            ) and not is_placeholder(value):
                out.append(("credential_in_clause", m.start(1), m.start(1) + len(value)))
                taken = m.end(1)
                break
        else:
            out.extend(_shaped_before(text, cue.start(), is_placeholder))
    return out


_BEFORE_CHARS = 40


def _shaped_before(text: str, pos: int, is_placeholder: Check) -> list[Span]:
    """A password-shaped value in the same clause just before the credential word ("use Xk2!… to sign in",
    "用 Xk2!… 登录", "Xk2!… でログイン"): languages that put the verb last, and "use X to log in"."""
    start = max(0, pos - _BEFORE_CHARS)
    if not _DIGIT.search(text, start, pos) or _PASSWORD_SYMBOL.isdisjoint(text[start:pos]):
        return []  # the value holds a digit and a symbol: most windows have neither
    ends = list(_CLAUSE_END.finditer(text, start, pos))
    start = ends[-1].end() if ends else start
    for m in _VALUE.finditer(text, start, pos):
        if password_shaped(m.group(1)) and not is_placeholder(m.group(1)):
            return [("credential_in_clause", m.start(1), m.end(1))]
    return []


def _clause_before(text: str, pos: int) -> str:
    start = max(0, pos - _CLAUSE_CHARS)
    ends = list(_CLAUSE_END.finditer(text, start, pos))
    return text[ends[-1].end() if ends else start : pos].lower()


def shape_talk(text: str, pos: int) -> bool:
    """The clause that ends at ``pos`` talks about a value's shape ("tokens begin with", "ids look like", "e.g.")."""
    before = _clause_before(text, pos)
    return any(
        m.start() == 0 or not (before[m.start() - 1].isalnum() or before[m.start() - 1] in "-_")
        for m in _ABOUT.finditer(before)
    )


# ------------------------------------------------------------------------------ app passwords
_PASSWORD = re.compile(
    r"pass(?:word|wd)s?\b|mot de passe|passwort|kennwort|contrase(?:ñ|n)a|senha|密码|密碼|パスワード|비밀번호"
)
_APP_PASSWORD = re.compile(r"(?<![A-Za-z])([a-z]{4}(?: [a-z]{4}){3})(?![A-Za-z]| [a-z])")
_APP_CHARS = 80
_UNSPELLABLE = re.compile(r"^[^aeiouy]+$|[^aeiouy]{3}|^(.)\1")  # no vowel, three consonants, a doubled start
_APP_GATE = Gate.of(_PASSWORD)


def app_passwords(text: str, is_function_word: Check) -> list[Span]:
    """Four groups of four lower-case letters after a password word, unless two of them are words of prose."""
    lower = text.lower()
    if len(lower) != len(text) or not _APP_GATE.admits(lower):
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
_OTP_VALUE = re.compile(r"(?<![\d.,:/\-])(\d{3} \d{3}|\d{4,8})(?!\d|[.,:/]\d|\s?[%€$]|\s?(?:ms|s|px|kb|mb|gb)\b)")
_OTP_CHARS = 60
# An authenticator app shows six digits and nothing else of that shape ("the authenticator shows 832139").
_AUTHENTICATOR = re.compile(r"authenticator|認証アプリ|身份验证器|验证器")
_SIX_DIGITS = re.compile(r"(?<![\d.,:/\-])(\d{3} ?\d{3})(?!\d|[.,:/]\d)")
_OTP_GATE = Gate.of(_OTP_WORD, _SENT_CODE, _AUTHENTICATOR)


def one_time_codes(text: str) -> list[Span]:
    """4 to 8 digits after a word naming a one-time code, or after "code" in a clause saying it was sent."""
    out: list[Span] = []
    lower = text.lower()
    if len(lower) != len(text) or not _DIGIT.search(text) or not _OTP_GATE.admits(lower):
        return out  # _OTP_VALUE and _SIX_DIGITS hold digits (a test checks it)
    for word in (*_OTP_WORD.finditer(lower), *_SENT_CODE.finditer(lower), *_AUTHENTICATOR.finditer(lower)):
        end = min(len(text), word.end() + _OTP_CHARS)
        stop = _CLAUSE_END.search(text, word.end(), end)
        value = _SIX_DIGITS if word.re is _AUTHENTICATOR else _OTP_VALUE
        m = value.search(text, word.end(), stop.start() if stop else end)
        if m and len(set(m.group(1).replace(" ", ""))) > 1:
            out.append(("one_time_code", m.start(1), m.end(1)))
    return out


# ------------------------------------------------------------------------------ a value in a credential's slot
# A value whose slot is named for a credential: a variable set on a command line ("set FLY_DEPLOY_PW=HQ5uyoy5Zu6c",
# "export X_TOKEN=…"), a YAML, JSON or .env key, or a name and its value given as two fields (a Kubernetes env
# entry or a JSON pair: "- name: KESTREL_WEBHOOK_SIGNING / value: \"3jCn…\""; a Terraform block's label and its
# default). The name says what the value is, so a generated value there is the credential, even a short one or one
# of letters alone. A URL's query is not read here (its own rule reads it).
_ASSIGN = re.compile(
    r"(?<![\w.\-?&/])(?P<name>[A-Za-z_][\w\-]{1,80})[\"']?(?:[ \t]*=|:(?!:))[ \t]*[\"']?"
    r"(?P<value>[A-Za-z0-9!#$%*+@^~_\-/=]{8,200})(?=\.?(?:[\s\"',;}\])]|$))"
)  # a key is followed by its colon ("pass :data:`x`" is a reST role); a value ends at a blank, a quote or a bracket
_PAIR = re.compile(
    r"(?i)[\"']?\bname[\"']?[ \t]*[:=][ \t]*[\"']?(?P<name>[A-Za-z_][\w.\-]{1,80})[\"']?[ \t]*,?[ \t]*(?:\n[ \t]*)?"
    r"[\"']?\bvalue[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>[^\s\"',}]{8,200})"
)
# A block named by its label, its value in a field (Terraform/HCL: variable "db_signing_key" { default = "…" }).
_BLOCK = re.compile(
    r"\b(?:variable|output|resource|data)[ \t]+(?:\"[\w\-]+\"[ \t]+)?\"(?P<name>[\w\-]{1,80})\"[ \t]*\{[^{}]{0,200}?"
    r"\b(?:default|value)[ \t]*=[ \t]*\"(?P<value>[^\"\s]{8,200})\""
)
_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_CREDENTIAL_PARTS = frozenset(
    str.split("secret secrets signing token tokens password passwd pwd pw pass passphrase apikey key credential hmac")
)
_NOT_CREDENTIAL_PARTS = frozenset(
    str.split("url uri path file dir id name ttl alg algorithm length min max endpoint header type public publishable")
    + str.split("host port user username expiry expires count ref kind version prefix format hash digest sha")
)


# A slot is taken only when a part of its name is a credential part, so a text holds one (in any case).
_SLOT_GATE = Gate.of_words(_CREDENTIAL_PARTS, folded=False)
_SLOT_SHAPE_GATE = Gate.of(_ASSIGN, _PAIR, _BLOCK)  # each holds a "=" or a ":"


def credential_slots(text: str, is_placeholder: Check) -> list[Span]:
    """A generated value in a slot (an assignment, a key, a pair's ``value``) named secret, token, password…"""
    lower = text.lower()
    if not _SLOT_SHAPE_GATE.admits(lower) or not _SLOT_GATE.admits(lower):
        return []
    out: list[Span] = []
    pairs = _PAIR.finditer(text) if "value" in lower and "name" in lower else ()
    blocks = _BLOCK.finditer(text) if "{" in text else ()
    for m in (*_ASSIGN.finditer(text), *pairs, *blocks):
        parts = {p.lower() for p in _NAME_PART.findall(m.group("name"))}
        value = m.group("value").rstrip("=")
        if not parts & _CREDENTIAL_PARTS or parts & _NOT_CREDENTIAL_PARTS or is_placeholder(value):
            continue
        if generated(value) or generated_letters(value):
            out.append(("credential_slot", m.start("value"), m.end("value")))
    return out


def clause_secrets(text: str, is_placeholder: Check, is_function_word: Check) -> list[Span]:
    """Every finder of this module, with the detector's placeholder and function-word checks."""
    return [
        *generated_in_clause(text, is_placeholder),
        *app_passwords(text, is_function_word),
        *one_time_codes(text),
        *credential_slots(text, is_placeholder),
    ]
