"""Secrets with no format of their own: told by the word that names them, or by a check a format rule cannot make.

The format list, the entropy rules and the context rules of :mod:`memstone.domain.secret_context` judge a value by
how random it looks. A door code (``7351``), a wifi key made of words (``kantorhytta-baalpanne-77``), a password
after "is still" (``raspberry42``), the answer to a security question (``Bakkevold``) or a quoted passphrase of
plain words look like nothing; what makes them secrets is the sentence around them. And some structured secrets
are only told by a check: a card number (Luhn and a card-issuer prefix), a BIP39 seed phrase (every word from its
list), HTTP Basic credentials (base64 that decodes to ``user:password``). The finders here (issue 16, capsec4):

- **a secret-naming word, a copula or colon, and a value of any shape** (:func:`named_values`): PIN, passcode,
  door, alarm, safe or keypad code, CVV, in English, French, German, Spanish, Portuguese, Italian, Dutch, Polish,
  Chinese, Japanese and Korean, take 4 to 8 digits; password, wifi/WPA key, PSK or sudo words take a value
  with a digit or a symbol, three or more joined words, or a quoted one. Placeholders, well-known PINs (``1234``,
  ``0000``) and prose are not values;
- **the answer to a security question** (:func:`security_answers`);
- **a password passed as a literal next to its user** in code (``auth=("user", "…")``, ``HTTPBasicAuth("user",
  "…")``) (:func:`credential_literals`);
- **card numbers** (:func:`card_numbers`): 13 to 19 digits with an issuer prefix, Luhn-valid, grouped as on a card or
  named by a card word; the documented test cards (``4242 4242 4242 4242``) are not secrets;
- **BIP39 seed phrases** (:func:`bip39_runs`): twelve or more words in a row, all from the BIP39 English list;
- **HTTP Basic credentials** (:func:`basic_credentials`): ``Basic`` and base64 that decodes to ``user:password``.
- **a credential named in any language** (:func:`stated_credentials`, capsec8): a password, key, token, secret,
  access-code or passphrase word of Korean, Japanese, Chinese, Spanish, French, German, Portuguese, Italian or
  English, a copula or colon (``는``, ``は``, ``是``, ``es``, ``est``, ``ist``, ``é``, ``è``), and a value the other
  rules leave: lowercase letters with digits, letters that read as no word, hex of a key, joined words, a
  passphrase of plain words; not a value followed by a place particle, an env-var name, a path, a version.

Each finder returns ``(kind, start, end)`` spans and stays cheap on texts without its anchor words.
``bench/bench_secret_lines.py`` measures them on labelled lines, ``bench/bench_secrets_fp.py`` their false positives.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import re
from pathlib import Path

from . import secret_clause as _clause
from . import secret_shape as _shape
from .regex_gate import Gate
from .secret_context import Check, Span

__all__ = [
    "NAMED_KINDS",
    "basic_credentials",
    "bip39_runs",
    "card_numbers",
    "credential_literals",
    "named_secrets",
    "named_values",
    "security_answers",
    "stated_credentials",
]

# Kinds judged by a naming word rather than a format: a named format found on the same span wins over them.
NAMED_KINDS = (
    "named_pin_or_code",
    "named_password",
    "named_credential",
    "security_answer",
    "password_literal",
    *_clause.CLAUSE_KINDS,
    *_shape.SHAPE_KINDS,
)

# ------------------------------------------------------------------------------ naming word, copula, value
# Words that name a short numeric secret: a PIN, a passcode, the code of a door, an alarm, a safe, a padlock.
_PIN_WORD = (
    r"pin[\s-]?(?:code|number|nummer|kod)s?\b|pincode\b|passcodes?\b|cvv2?\b|cvc2?\b"
    r"|(?:door|keypad|alarm|safe|lock|gate|padlock|entry|access|unlock|garage|building|locker|disarm|key ?safe)"
    r"[\s-]?codes?\b|combination\b|digicode\b"
    r"|codes? (?:du|de la|de l'|d'|de) ?(?:cadenas|porte|coffre|alarme|portail|local|acc[eè]s|entr[ée]e|digicode)"
    r"|code pin\b|(?:t(?:ü|ue)r|zugangs|tresor|alarm|schloss|zahlen)-?codes?\b|pin-code\b"
    r"|c[óo]digos? (?:de (?:la |acceso|acesso)?|del? |do |da )?(?:puerta|porta|acceso|acesso|alarma|alarme|candado"
    r"|cadeado|caja fuerte|cofre)\b|codice (?:della |dell'|di )?(?:porta|accesso|allarme|cassaforte|lucchetto)\b"
    r"|(?:toegangs|deur|alarm|kluis)code\b|kod(?:u)? (?:do |dost[eę]pu|sejfu|alarmu|drzwi|pin)\w*"
    r"|disarm\b|密码|口令|门禁码|开门码|暗証番号|暗証コード|비밀번호|핀 ?번호"
)
# Words that name a password, a wifi key or a passphrase, in the same languages (a login names a user).
_PASSWORD_WORD = (
    r"pass(?:word|wd|phrase)s?\b|(?:wifi|wi-fi|wlan|wpa2?|wpa3|network|wireless)[\s-]?(?:keys?|passwords?"
    r"|passphrases?|psk)\b|psk\b|sudo(?:[\s-]password)?\b|wifi\b|wi-fi\b|wlan\b"
    r"|mot de passe\b|mdp\b|passwort\b|kennwort\b|contrase(?:ñ|n)a\b|senha\b|parola d'ordine\b"
    r"|wachtwoord\b|has(?:ł|l)o\b|cl(?:é|e) (?:wifi|wpa)\b|密码|口令|密碼|비밀번호"
)  # not パスワード: its value runs into the sentence ("パスワードは…です"); the password rule of secrets.py reads it
# Matched on the lower-cased text (a case-insensitive regex costs twice as much); "PIN" alone only in capitals.
_NAME = re.compile(rf"(?P<pin>{_PIN_WORD})|(?P<pw>{_PASSWORD_WORD})")
_NAME_CI = re.compile(_NAME.pattern, re.I)  # for the rare text whose lower-casing changes its length
_PIN_CAPS = re.compile(r"\b(?P<pin>PIN)\b")
# Every _NAME or _NAME_CI match holds one of its literals (on the lower-cased text).
_NAME_GATE = Gate.of(_NAME, _NAME_CI)
# The words between a name and its value: anything but a sentence end, then a copula, a colon or an "is" word.
_COPULA = re.compile(
    r"(?i)[^.!?\n。！？]{0,48}?(?:(?:'|’)s\s|\bc(?:'|’)est\s|\s(?:is|are|was|=|est|ist|lautet|es|è|é|era|jest|to|wynosi"
    r"|with|avec|mit|met|con|com|z)\s|[:：=]\s*|是|为|為|は|는|은|이)\s*(?:(?:still|now|currently|nog|steeds|toujours"
    r"|encore|noch|immer|jetzt|ainda|todav[íi]a|a[úu]n|ancora|wci[ąa][żz]|nadal|还是|仍然|依然|现在|まだ)\s+)*"
)
# Words between a name and its value that make the sentence about something else than the secret's value.
_ABOUT = re.compile(
    r"(?i)hash|polic|length|format|type|field|rule|encod|algorithm|scheme|strength|requir|reset|manager|expir|hint"
    r"|column|option|flag|prompt|digits|characters|chiffres|caract|zeichen|stellen|cijfers|cyfr|位"
)
_WITH = re.compile(r"(?i)\s(?:with|avec|mit|met|con|com|z)\s+$")
_PROSE_START = re.compile(r"(?i)^(?:a|an|the|your|my|some|any|un|une|le|la|ein|eine|der|die|das|el|il|de)\s")
# A quoted value right after the name ("the passphrase 'quiet lynx under the birch'").
_BARE = re.compile(r"\s+(?=[\"'`“«「])")
# A PIN word right before its digits, which end the clause ("Door of the server cupboard: PIN 7958").
_BARE_PIN = re.compile(r"[ \t]+(?=#?\d{4,8}[ \t]*(?:$|[.,;!)\n]))")
_PW_IN_PIN = re.compile(r"密码|口令|비밀번호")
_VALUE = re.compile(
    r"(?P<q>[\"'`])(?P<quoted>[^\"'`\n]{4,80})(?P=q)|[“«「](?P<quoted2>[^”»」\n]{4,80})[”»」]|(?P<plain>[^\s\"'`,;。，；、)）]+)"
)
# 4 to 8 digits, digits in groups ("2 9 1 7", "38-12-27"), or a keypad code with A to D ("4B792"); a leading "#".
_PIN_VALUE = re.compile(
    r"#?(\d{4,8}|\d{1,2}(?:[- ]\d{1,2}){2,7}|(?=(?:[A-D]*\d){3})[0-9A-D]{4,8})(?![\d:%.,]\d|[A-Za-z])"
)
# A lock, door or safe and a verb of opening: "the door takes 2 9 1 7", "el candado se abre con 0-5-8-3".
_OPENS = re.compile(
    r"(?:door|lock|padlock|locker|safe|gate|keypad|candado|taquilla|cadenas|porte|schloss|t(?:ü|ue)r|tresor|k(?:ł|l)ódka"
    r"|sejf|cofre|cadeado|lucchetto)s?\b[^.!?\n]{0,40}?\b(?:takes|accepts|opens with|open with|unlocks with|se abre con"
    r"|s'ouvre avec|(?:ö|oe)ffnet (?:sich )?mit|abre com|si apre con|otwiera si[ęe])\s+"
)
_OPENS_GATE = Gate.of(_OPENS)
# Words that make a value prose, not a password ("the password is hashed", "le mot de passe est stocké").
_NOT_VALUE = re.compile(
    r"(?i)^(?:the|a|an|same|hashed|stored|set|required|rotated|changed|in|on|at|not|never|only|kept|sent|le|la|les"
    r"|un|une|dans|pas|der|die|das|ein|eine|nicht|el|los|no|il|non|het|de|een|niet|nie|w|jest)$"
)


def _weak_pin(value: str) -> bool:
    """``1234``, ``0000``, ``123456``: a documentation PIN or a count, not a secret."""
    d = re.sub(r"\D", "", value)
    steps = {int(b) - int(a) for a, b in itertools.pairwise(d)}
    return len(set(d)) == 1 or steps in ({1}, {-1})


def _password_value(value: str, quoted: bool, is_placeholder: Check) -> bool:
    """A stated password: not a placeholder or a word of prose; a digit or symbol, joined words, or quoted."""
    v = value.rstrip(".,;:!?)")
    if len(v) < 6 or is_placeholder(v) or _NOT_VALUE.match(v) or "://" in v or v.startswith(("/", "~", "$", "%")):
        return False
    if quoted:
        return len(set(v)) > 3 and not _PROSE_START.match(v)  # "a secret", "your password": prose
    if re.fullmatch(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", v):
        return False  # a login's e-mail address, not its password
    if (re.fullmatch(r"[A-Za-z_][\w.]*\(?\)?", v) and "_" in v) or v.endswith("()"):
        return False  # a name in code: validate_password(), settings.PASSWORD_HASHERS
    if re.fullmatch(r"[A-Za-z]+(?:[-.][A-Za-z]+){2,}", v):
        return True  # three or more joined words: nordlys-over-jotunheimen
    symbol = any(not c.isalnum() and c not in "-_." for c in v)  # "tintero-ops" is a name, "Rk8!mvT3" is not
    return any(c.isalpha() for c in v) and (symbol or any(c.isdigit() for c in v)) and "/" not in v


def named_values(text: str, is_placeholder: Check) -> list[Span]:
    """A secret-naming word, a copula or colon, and a value of the shape that word takes (see the module doc)."""
    out: list[Span] = []
    lower = text.lower()
    names = list(_PIN_CAPS.finditer(text)) if "PIN" in text else []
    if _NAME_GATE.admits(lower):
        names += (_NAME if len(lower) == len(text) else _NAME_CI).finditer(lower if len(lower) == len(text) else text)
    if len(lower) == len(text) and _OPENS_GATE.admits(lower):
        names += _OPENS.finditer(lower)
    for name in names:
        if (
            name.start()
            and (lower[name.start() - 1].isalnum() or lower[name.start() - 1] in "_\"'`")
            and name.group(0).isascii()
        ):
            continue  # inside a word ("pseudo", "mapping"): the names match without a leading \b, which is faster
        span = _judge(text, name, is_placeholder)
        if span is None and name.re is _NAME and name.group("pw"):
            span = _stated_later(text, name.end(), is_placeholder)
        if span is not None:
            out.append(span)
    return out


def _judge(text: str, name: re.Match[str], is_placeholder: Check) -> Span | None:
    """The value stated right after a naming word, if it has the shape that word takes."""
    opens = name.re is _OPENS  # "the door takes 2 9 1 7": the match already holds its verb
    cop = _COPULA.match(text, name.end()) or _BARE.match(text, name.end()) if not opens else name
    if cop is None and not opens and name.group("pin"):
        cop = _BARE_PIN.match(text, name.end())
    if cop is None or (not opens and _ABOUT.search(cop.group(0))):
        return None  # "the password hash is argon2id": the sentence is about something else
    pos = cop.end()
    if opens or name.group("pin"):
        m = _PIN_VALUE.match(text, pos)
        if m and len(re.sub(r"\D", "", m.group(1))) >= 4 and not _weak_pin(m.group(1)):
            return ("named_pin_or_code", m.start(1), m.end(1))
        if m or opens or not _PW_IN_PIN.match(name.group("pin")):
            return None  # a code word takes digits only; 密码 and 口令 also name passwords
    v = _VALUE.match(text, pos)
    if v is None or (v.group("plain") and cop.re is _BARE) or _WITH.search(cop.group(0)):
        return None  # with no copula, only a quoted value is stated; "with" states a code, not a password
    group = "quoted" if v.group("quoted") else "quoted2" if v.group("quoted2") else "plain"
    quoted, value = group != "plain", v.group(group)
    digits = value.replace("-", "") if re.fullmatch(r"\d{3,}(?:-\d{3,})+", value) else value  # 0307-6822, not 2024-06
    if digits.isdigit() and len(digits) >= 4 and not _weak_pin(digits) and cop.group(0).strip()[-1:] in ":：是为":
        return ("named_password", v.start(group), v.end(group))  # "密码：582931"
    if _password_value(value, quoted, is_placeholder):
        return ("named_password", v.start(group), v.end(group))
    return None


# A password stated a sentence or two after its word ("… the same password everywhere. It's ClimbOn plus the
# postcode, so for Part-Dieu it is ClimbOn69003."): "it is"/"c'est"/":" and a mixed-case value with a digit.
_LATER = re.compile(
    r"(?i)(?:\bit(?:'|’)s|\bit is|\bthat(?:'|’)s|\bis|\bc(?:'|’)est|\best|\bist|\bes|:)\s+"
    r"(?-i:(?P<value>(?=\S*[A-Z])(?=\S*[a-z])(?=\S*\d)[A-Za-z0-9!#$%&*+?@^~_-]{8,40}))(?![\w@/])"
)
_LATER_CHARS = 200


def _stated_later(text: str, start: int, is_placeholder: Check) -> Span | None:
    paragraph = text.find("\n\n", start, start + _LATER_CHARS)
    m = _LATER.search(text, start, paragraph if paragraph >= 0 else min(len(text), start + _LATER_CHARS))
    if m is None or is_placeholder(m.group("value")) or _ABOUT.search(text, start, m.start()):
        return None
    return ("named_password", m.start("value"), m.end("value"))


# ------------------------------------------------------------------------------ security questions
_QUESTION = re.compile(
    r"(?i)security question|secret question|question secr[eè]te|question de s[ée]curit[ée]|sicherheitsfrage"
    r"|pregunta de seguridad|pergunta de seguran[çc]a|domanda di sicurezza|beveiligingsvraag|pytanie (?:pomocnicze|"
    r"bezpiecze)|安全问题|密保问题|秘密の質問|보안 질문"
)
# "… the security question; the name of my first gym, I put Bloc Session.": a name the writer says they gave.
_ANSWERED = re.compile(
    r"(?i)\b(?:i|we)\s+(?:put|wrote|set|used|entered|typed|chose|gave)\s+(?:it\s+(?:to|as)\s+)?[\"'“]?"
    r"(?-i:(?P<value>[A-Z][^\s\"'”.,;]{2,30}(?: [A-Z][^\s\"'”.,;]{2,30})?))(?=[\"'”]?\s*(?:[.,;!?)]|$))"
)
_QUESTION_GATE = Gate.of(_QUESTION)
_ANSWER = re.compile(
    r"(?i)(?:\banswers?\b|\br[ée]ponse\b|\bantwort\b|\brespuesta\b|\bresposta\b|\brisposta\b|\bantwoord\b"
    r"|\bodpowied[źz]\b|答案|答え|답)[^.!?\n。]{0,30}?(?:\s(?:is|est|ist|es|é|è|jest|to)\s|[:：]\s*|是|为|は)\s*"
    r"[\"'“«「]?(?P<value>[^\s\"'”»」.,;。，]{3,40}(?: [A-Z][^\s\"'”»」.,;。，]{2,30})?)"
    r"(?=[\"'”»」]?\s*(?:[.,;!?)。，！？]|$|\s(?:and|et|und|y|e|en|i|but|mais|aber)\b))"
)


def security_answers(text: str) -> list[Span]:
    """The answer given to a security question in the same text ("… the answer we set is Bakkevold")."""
    lower = text.lower()
    if not _QUESTION_GATE.admits(lower) or not _QUESTION.search(text):
        return []
    return [
        ("security_answer", m.start("value"), m.end("value"))
        for m in (*_ANSWER.finditer(text), *_ANSWERED.finditer(text))
        if not _NOT_VALUE.match(m.group("value"))
    ]


# ------------------------------------------------------------------------------ literal credentials in code
_AUTH_LITERAL = re.compile(
    r"(?:\bauth\s*=\s*\(|Auth\w*\(|\.(?:login|authenticate|basic_auth|setBasicAuth|auth|sign_?in)\()\s*"
    r"(?P<q>[\"'])[^\"'\n]{1,64}(?P=q)\s*,\s*(?P<r>[\"'])(?P<value>[^\"'\n]{4,128})(?P=r)"
)


def credential_literals(text: str, is_placeholder: Check) -> list[Span]:
    """``auth=("user", "…")``, ``HTTPBasicAuth("user", "…")``: a password passed as a literal beside its user."""
    return [
        ("password_literal", m.start("value"), m.end("value"))
        for m in (_AUTH_LITERAL.finditer(text) if "uth" in text or ".login(" in text or ".sign" in text else ())
        if not is_placeholder(m.group("value")) and len(set(m.group("value"))) > 3
    ]


# ------------------------------------------------------------------------------ card numbers
_NO_DIGITS = str.maketrans("", "", "0123456789")
_CARD = re.compile(r"(\d{4}(?:[ -]\d{4}){2}[ -]\d{1,7}|\d{4}[ -]\d{6}[ -]\d{5}|\d{13,19})(?![\d\-/])")
_CARD_WORD = re.compile(
    r"(?i)\b(?:cards?|carte|karte|tarjeta|cart[ãa]o|carta|karta|kaart|visa|mastercard|amex|cc|cvv|cvc|pan)\b|卡号|信用卡|カード|카드"
)
# The documented test numbers of card processors (Stripe, Adyen, Braintree, PayPal): shared, not secrets.
_TEST_CARDS = frozenset(
    str.split(
        "4242424242424242 4000056655665556 5555555555554444 2223003122003222 5200828282828210 5105105105105100 "
        "378282246310005 371449635398431 6011111111111117 6011000990139424 3056930009020004 36227206271667 "
        "3566002020360505 6200000000000005 4111111111111111 4012888888881881 4000000000000002 4000000000009995 "
        "4000000000000077 4000002500003155 4000000000003220 5454545454545454 4444333322221111 4917610000000000"
    )
)


def _luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _issuer(d: str) -> bool:
    """Visa, Mastercard (51–55, 2221–2720), Amex, Discover, JCB, Diners, UnionPay, Maestro prefixes and lengths."""
    n2, n4 = int(d[:2]), int(d[:4])
    return (
        (d[0] == "4" and len(d) in (13, 16, 19))
        or ((51 <= n2 <= 55 or 2221 <= n4 <= 2720) and len(d) == 16)
        or (n2 in (34, 37) and len(d) == 15)
        or ((d.startswith(("6011", "65", "62")) or 644 <= int(d[:3]) <= 649) and 16 <= len(d) <= 19)
        or (3528 <= n4 <= 3589 and 16 <= len(d) <= 19)
        or ((n2 in (36, 38, 39) or 300 <= int(d[:3]) <= 305) and 14 <= len(d) <= 19)
        or (d.startswith(("5018", "5020", "5038", "6304", "6759", "6761", "6763")) and 12 <= len(d) <= 19)
    )


def card_numbers(text: str) -> list[Span]:
    """A payment card number: issuer prefix, Luhn-valid, not a test card, and grouped or named by a card word."""
    out: list[Span] = []
    if len(text) - len(text.translate(_NO_DIGITS)) < 13:
        return out  # a card number has 13 digits or more
    for m in _CARD.finditer(text):
        raw = m.group(1)
        if m.start() and text[m.start() - 1] in "0123456789.-/":
            continue  # part of a longer number, a version or a path (the regex leaves this out: it is faster)
        d = re.sub(r"\D", "", raw)
        if not 13 <= len(d) <= 19 or d in _TEST_CARDS or len(set(d)) < 4 or not _issuer(d) or not _luhn(d):
            continue
        named = _CARD_WORD.search(text, max(0, m.start() - 60), min(len(text), m.end() + 40))
        if raw != d or named:
            out.append(("card_number", m.start(1), m.end(1)))
    return out


# ------------------------------------------------------------------------------ BIP39 seed phrases
@functools.cache
def _bip39() -> frozenset[str]:
    path = Path(__file__).with_name("data") / "bip39-english.txt"
    return frozenset(w for w in path.read_text(encoding="utf-8").split("\n") if w and not w.startswith("#"))


_WORD_RUN = re.compile(
    r"(?<![\w-])[a-z]{3,8}+(?![a-z])"
    r"(?:(?:[ \t]+|[ \t]*,[ \t]*|\n|[ \t]*\d{1,2}[.)][ \t]*)[a-z]{3,8}+(?![a-z])){11,}(?![\w-])"
)


_LETTER_RUN = re.compile(r"[a-z]+")


def _bip39_run_in(text: str) -> bool:
    """Twelve BIP39 words among the text's runs of [a-z] in a row, which every run :func:`bip39_runs` takes holds:
    the words of a _WORD_RUN match are whole runs of the text, with no letter between them."""
    words, run = _bip39(), 0
    for w in _LETTER_RUN.findall(text):
        run = run + 1 if w in words else 0
        if run >= 12:
            return True
    return False


def bip39_runs(text: str, is_function_word: Check) -> list[Span]:
    """Twelve or more words in a row all from the BIP39 English list, at most two of them function words."""
    out: list[Span] = []
    if text.count(" ") + text.count("\n") < 11 or not _bip39_run_in(text):
        return out
    for m in _WORD_RUN.finditer(text):
        words = re.findall(r"[a-z]+", m.group(0))
        best = run = 0
        for w in words:
            run = run + 1 if w in _bip39() else 0
            best = max(best, run)
        if best >= 12 and sum(map(is_function_word, words)) <= 2:
            out.append(("seed_phrase", m.start(), m.end()))
    return out


# ------------------------------------------------------------------------------ HTTP Basic credentials
_BASIC = re.compile(r"(?<![A-Za-z])(?i:basic)\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")
_BASIC_GATE = Gate.of(_BASIC)  # folded: "bAsIc" holds neither "asic" nor "ASIC"


def basic_credentials(text: str, is_placeholder: Check) -> list[Span]:
    """``Basic`` and base64 of ``user:password`` with a password that is not empty or a placeholder."""
    out: list[Span] = []
    for m in _BASIC.finditer(text) if _BASIC_GATE.admits(text.lower()) else ():
        try:
            raw = base64.b64decode(m.group(1) + "=" * (-len(m.group(1)) % 4), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        user, sep, password = raw.partition(":")
        if sep and user and password.isprintable() and len(password) >= 3 and not is_placeholder(password):
            out.append(("basic_auth_credentials", m.start(1), m.end(1)))
    return out


# ------------------------------------------------------------------------------ credentials named in any language
# A credential word of the languages capture sees, then a copula or a colon, then a value of any case (issue 16,
# capsec8): "비번은 gongju0717", "QQ 邮箱的授权码是 msqkshmqivvfkpyy", "il segreto del webhook è kchq…", "key 是
# <32 hex>", "la phrase secrète … est gdupsn acbfyum ecyol xxqwnn". The other rules want a value that looks
# generated (mixed case and digits) or a word they list; these words and these values are what they miss.
_STATED_WORD = re.compile(
    r"(?P<phrase>pass[\s-]?phrases?\b|phrases? secr[eè]tes?\b|frases? (?:de paso|secretas?)\b|frase-senha\b"
    r"|合言葉|암호 ?문구)"
    r"|(?P<word>pass(?:words?|wd|code)\b|暗号鍵|mot de passe\b|mdp\b|passwort\b|kennwort\b|contrase(?:ñ|n)as?\b"
    r"|senhas?\b|palavra-passe\b|parola d'ordine\b|(?:la|el|le|il|mon|ma|mi|meu|minha) pass\b|pw\b|creds\b"
    r"|credenci(?:al|ais|ales)\b|credenziali\b|identifiants\b|zugangsdaten\b|codes? d'acc[eè]s\b"
    r"|c[óo]digos? de acc?esso?\b|codice di accesso\b|access codes?\b|zugangscodes?\b|s[ée]same\b"
    r"|secrets?\b|secretos?\b|segred(?:o|os)\b|segret(?:o|i)\b|geheimnis\b|jetons?\b|tokens?\b|llaves?\b"
    r"|claves?\b|chaves?\b|chiav[ei]\b|cl(?:é|e)s?\b|schl(?:ü|ue)ssel\b|api[\s-]?keys?\b"
    r"|密码|口令|授权码|密钥|秘钥|令牌|パスワード|パス(?![ァ-ヶー])|暗証番号|認証キー|アクセスキー|シークレット|トークン"
    r"|비밀번호|비번|패스워드|암호(?!화)|시크릿|토큰|인증 ?키|접속 ?키|액세스 ?키|api ?키)"
    r"|(?P<bare>key\b|キー|키)"
)
_STATED_WORD_CI = re.compile(_STATED_WORD.pattern, re.I)  # for the rare text whose lower-casing changes its length
_STATED_GATE = Gate.of(_STATED_WORD, _STATED_WORD_CI)  # matched on the lower-cased text: (?i) costs twice as much
# The words between the name and its value (no sentence end), then a copula or a colon; a bare "key" takes only a
# CJK copula or a full-width colon right after it ("key 是 …", "키는 …"): "key" alone names too much in English.
_STATED_COPULA = re.compile(
    r"[^.!?\n。！？]{0,48}?(?:\s(?:is|est|ist|lautet|es|è|é|era|sono|son|são|sind)\s|\s?c(?:'|’)est\s|[:：]\s*"
    r"|\s?(?:是|为|為)\s*|(?<=[^\sa-zA-Z])(?:は|는|은|이)\s*|\s+(?:は|는|은)\s*)"
)
_BARE_COPULA = re.compile(r"\s*(?:：|是|为|は|는|은)\s*")
# What makes the clause about the credential rather than its value.
_STATED_ABOUT = re.compile(
    r"(?i)hash|polic|length|longueur|l(?:ä|ae)nge|longitud|lunghezza|comprimento|format|rule|r[eè]gle|regel|regla"
    r"|example|exemple|beispiel|ejemplo|exemplo|esempio|e\.g\.|z\. ?b\.|p\. ?ej\.|ex\.|\bid\b|ids\b|fingerprint"
    r"|empreinte|fingerabdruck|huella|impronta|digest|sha\d|md5|checksum|type|field|column|champ|feld|campo|name"
    r"|nom\b|nombre|nome|variable|env|manager|vault|coffre|tresor|b[oó]veda|cofre|expir|ttl|rotat|hint|prompt"
    r"|例|如|形如|格式|长度|哈希|指纹|形式|長さ|ハッシュ|예시|예:|형식|길이|해시|이름|변수|字段|变量|変数"
)
_PASSWORDISH = re.compile(r"(?i)pass|mdp|wort|contrase|senha|ordine|비번|비밀|密码|口令|パス|암호")
_CLAUSE_END = re.compile(r"\s*(?:[.,;!?)\n。，]|$)")
_CJK_BARE = re.compile(r"[ \t]+(?=[A-Za-z0-9])")
# A value, perhaps after its user ("identifiants : admin / kdmq…").
_STATED_VALUE = re.compile(r"[\"'`“«「]?(?:[\w.@-]{2,40}[ \t]*/[ \t]*)?(?P<value>[A-Za-z0-9!#$%&*+\-_.@~^]{6,80})")
# A value followed by a place particle is a place ("パスは 1Password にある", "비번은 1Password 에 있어요").
_PLACE_AFTER = re.compile(r"\s*(?:の|に|で(?!す)|へ|から|에서|에|으로|里|内|中)")
_LATIN_LETTER_AFTER = re.compile(r"[^\W\d_]", re.ASCII)
_VOWELS = frozenset("aeiouy")


def _gibberish(v: str) -> bool:
    """Lowercase letters that read as no word: few vowels or four consonants in a row (``msqkshmqivvfkpyy``)."""
    vowels = sum(c in _VOWELS for c in v)
    run = max((len(r) for r in re.findall(r"[^aeiouy]+", v)), default=0)
    return len(v) >= 8 and len(set(v)) >= 6 and (vowels / len(v) < 0.3 or run >= 4)


def _wordish(v: str) -> bool:
    return sum(c in _VOWELS for c in v) / len(v) >= 0.3 and not re.search(r"[^aeiouy]{4}", v)


def _stated_value(v: str, is_placeholder: Check, *, password: bool) -> bool:
    """A value a credential word states: hex of a key, letters with digits, letters that read as no word."""
    v = v.rstrip(".,;:!?)-")
    if len(v) < 8 or is_placeholder(v) or _NOT_VALUE.match(v) or v.startswith(("$", "%", "-", ".")):
        return False
    if re.fullmatch(r"[A-Z][A-Z0-9_]+", v) or re.fullmatch(r"v?\d+(?:[.-]\d+)*", v) or "." in v or "@" in v:
        return False  # an env-var name, a version, a number, a host, a file or an e-mail address
    if re.fullmatch(r"[0-9a-fA-F]{32,64}", v):
        return not re.search(r"(.)\1{7,}", v)
    if re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)+", v) or re.fullmatch(r"[A-Za-z]+(?:[A-Z][a-z]+)+", v):
        return False  # snake_case or CamelCase: a name in code
    if password and re.fullmatch(r"[a-z]+(?:-[a-z]+){2,}(?:-\d+)?", v):
        return True  # joined words after a password word: hrwky-wrsayw-jeypn (not a kebab-case package name)
    letters, tail = sum(c.isalpha() for c in v), v.rsplit("-", 1)[-1]
    if re.search(r"(.)\1{3,}", v) or ("-" in v and len(tail) >= 4 and tail.isalpha() and _wordish(tail.lower())):
        return False  # sk-test-xxxxxxxx; sha256-hashed, HS256-signed, ed25519-based: a word of how, not a value
    if v.isalpha():
        return v.islower() and _gibberish(v)
    # mixed case is the other rules' (a generated value); here one case, as a name in code rarely is (ASGI3Application)
    return letters >= 3 and any(c.isdigit() for c in v) and len(set(v)) >= 6 and (v.islower() or v.isupper())


_PHRASE_VALUE = re.compile(r"(?P<value>[a-z]{3,12}(?: [a-z]{3,12}){2,7})(?=\s*(?:[.,;!)\n。，]|$))")


def stated_credentials(text: str, is_placeholder: Check, is_function_word: Check) -> list[Span]:
    """A credential word in any language, a copula or colon, and a value it states (see the comment above)."""
    out: list[Span] = []
    lower = text.lower()
    if not _STATED_GATE.admits(lower):
        return out
    same = len(lower) == len(text)
    for name in _STATED_WORD.finditer(lower) if same else _STATED_WORD_CI.finditer(text):
        before, word = lower[name.start() - 1] if name.start() and same else " ", name.group(0)
        if (before.isascii() and (before.isalnum() or before == "_") and word.isascii()) or (
            word in ("키", "キー") and ("가" <= before <= "힣" or "ァ" <= before <= "ヺ")
        ):
            continue  # inside a word ("monkey", "비밀키"): no leading \b or lookbehind, which keeps the scan fast
        cop = (_BARE_COPULA if name.group("bare") else _STATED_COPULA).match(text, name.end())
        if cop is None and not name.group(0).isascii():
            cop = _CJK_BARE.match(text, name.end())  # "口令 kdmq…", "관리자 비번 rb7k… 임": no copula in CJK
        if cop is None or _STATED_ABOUT.search(cop.group(0)):
            continue
        if name.group("phrase"):
            p = _PHRASE_VALUE.match(text, cop.end())
            words = p.group("value").split() if p else []
            if p and not any(map(is_function_word, words)):
                out.append(("named_credential", p.start("value"), p.end("value")))
                continue
        v = _STATED_VALUE.match(text, cop.end())
        if v is None or _LATIN_LETTER_AFTER.match(text, v.end("value")) or _PLACE_AFTER.match(text, v.end("value")):
            continue  # "envoyé" is a word cut at its accent; "1Password の" a place
        value = v.group("value")
        if text.startswith(("(", "[", "/", "\\"), v.end("value")):
            continue
        password = bool(name.group("phrase") or _PASSWORDISH.search(name.group(0)))
        if not _stated_value(value, is_placeholder, password=password) and not (
            password
            and re.fullmatch(r"[a-z]{14,40}", value)
            and not value.endswith(("mente", "ment", "ly", "ung", "tion", "zione", "ção", "cion", "ado", "ido"))
            and _CLAUSE_END.match(text, v.end("value"))
        ):
            continue  # one long lowercase run after a password word is words run together: pinheirolaranjaverde
        out.append(("named_credential", v.start("value"), v.end("value")))
    return out


def named_secrets(text: str, is_placeholder: Check, is_function_word: Check) -> list[Span]:
    """Every finder of this module, with the detector's placeholder and function-word checks."""
    return [
        *named_values(text, is_placeholder),
        *security_answers(text),
        *credential_literals(text, is_placeholder),
        *card_numbers(text),
        *bip39_runs(text, is_function_word),
        *basic_credentials(text, is_placeholder),
        *_clause.clause_secrets(text, is_placeholder, is_function_word),
        *_shape.shape_secrets(text, is_placeholder),
        *stated_credentials(text, is_placeholder, is_function_word),
    ]
