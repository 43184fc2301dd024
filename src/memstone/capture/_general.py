"""Junk read by what a sentence is about, not by a project's words (issue 16, capjunk8).

- **general knowledge** (an ``obvious`` fact): a sentence that defines or compares a technology, or says what one
  can or cannot do, and names nothing of this project: "HTTP 404 means the resource was not found", "Git es un
  sistema de control de versiones", "Python 的列表下标是从 0 开始的", "Redis はインメモリのキーバリューストアです",
  "HTTPS는 전송 구간을 암호화합니다". A project anchor keeps it: a "we/our" in any language (or a first-person
  plural verb), a code span, a path or file name, an identifier, a version, a quantity with a unit, a host, a
  place of this deployment ("here", "in production", "本番", "线上"), a reason, or a modality (the caller's
  reading). A predicate of definition ("means", "is a", "es un", "ist ein", "表示", "是一种", "の一種") or
  comparison ("than", "比", "より") is enough; one of ability ("can", "peut", "kann", "可以", "できません") only
  when the subject is a name (an acronym, a CamelCase word, a Latin name before a CJK or Korean topic particle) or
  a generic indefinite ("A primary key …", "Une clé étrangère …", "Ein Index …");
- **Korean** speculation, one-offs, chatter and glance facts: the sentence reader has no Korean tables, so a hedge
  ("아마", "것 같아요", "지도 모르"), a single occasion ("이번", "오늘", "내일", "지금 바로"), thanks
  ("감사합니다") and the glance shapes (a location, a count, what a file says, what the project is made with)
  passed.

Closed word classes of each language only; every threshold fitted on dev data (bench/data/capture/girandola.jsonl
and the rest of the dev part), never on the held-out part.
"""

from __future__ import annotations

import re

from ._obvious import _FILE_NAME
from .subjects import versioned_names

__all__ = ["GENERAL_MAX_WORDS", "is_general_knowledge", "korean_reason"]

# A general fact is short: at most this many words (a CJK character counts as half a word). Fitted on the dev
# part: 14 keeps every explicit and correction line of dev; the general facts of girandola have at most 11.
GENERAL_MAX_WORDS = 14

_ANCHOR = re.compile(
    r"(?i)\b(?:we|our|ours|us|here|wir|uns|unser\w*|hier|nosotros|nuestr[oa]s?|aquí|acá|nous|notre|nos|ici|nós"
    r"|noss[oa]s?|a gente|aqui|noi|nostr[oaie]|qui|prod|production|staging|produktion|producción|produção"
    r"|produzione|this (?:project|repo|app|codebase|service))\b"
    r"|\b\w{2,}(?:amos|emos|imos|iamo)\b"  # a first-person plural verb (es, pt, it)
    r"|`|\b[a-z][a-z0-9]*_[a-z0-9_]+\b|https?://|\b[\w\-]+\.(?:com|org|net|io|dev|app)\b"
    r"|我们|咱们|本项目|我司|线上|生产|这里|这边|统一|一律|私たち|うち|弊社|当社|本番|ここ|우리|여기|운영"
    # a quantified subject refers to this project's things ("Anything else is a scene-local node")
    r"|^(?:anything|everything|nothing|all|any|todo|toda|tout|toute|tous|alles|jede[rsn]?|tutto|tutti|qualsiasi)\b"
)
# A sentence to the agent ("You are a helpful assistant …") is a restated prompt, not a fact: another rule's.
# "du" and "tu" only as the subject of a verb of address: the French "du texte" is an article.
_ADDRESS = re.compile(
    r"(?i)\b(?:you|your|dein\w*|tú|usted|vous|votre|você|voi)\b|\bdu (?:bist|sollst|musst|kannst|hast|wirst|darfst)\b"
    r"|\btu (?:es|sei|dois|devi|peux|puoi)\b|\bsei (?:un|una|uno)\b|你|您|あなた|당신"
)
_REASON = re.compile(
    r"(?i)\b(?:because|since|so|otherwise|porque|ya que|parce que|car|sinon|weil|denn|sonst|pois|perché|poiché"
    r"|altrimenti)\b|因为|所以|否则|ので|ため|から[、。]|때문|므로|니까"
)
_DEFINES = re.compile(
    r"(?i)\b(?:means|stands for|refers to|is short for|is an?|are an?|than|significa|quiere decir|es una?|son un[oa]s"
    r"|signifie|veut dire|est une?|sont des|bedeutet|ist eine?|sind eine|quer dizer|é uma?|são um[as]|vuol dire"
    r"|è un[oa]?|sono de(?:i|gli|lle))\b"
    r"|\b(?:plus|moins|más|menos|mais|più|meno)\s+\w+\s+(?:que|di|do que)\b|\b\w+er\s+als\b"
    r"|表示|意味着|是(?:一个|一种|一款|一门|一类)|比\S{0,8}(?:快|慢|轻|重|好|安全)|从\s*\d+\s*开始"
    r"|を意味|の一種|より\S{0,8}(?:軽い|速い|遅い|重い|安全)"
)
_ABLE = re.compile(
    r"(?i)\b(?:can(?:not|'t)?|could|does(?: not|n't)|do(?: not|n't)|puede[n]?|no permite[n]?|no admite[n]?"
    r"|peu(?:t|vent)|ne permet pas|kann|können|pode[m]?|não permite[m]?|può|possono|non permette)\b"
    r"|可以|不能|无法|不支持|支持|でき(?:ます|ません)|できない|ことができ|할 수|합니다|입니다"
)
# A name: an acronym (HTTP, JSON), a CamelCase word (PostgreSQL), or a Latin name before a CJK or Korean topic
# particle ("Redis は", "Vue는", "Python 的").
_NAME_SUBJECT = re.compile(
    r"^(?:(?:the|el|la|los|las|le|les|o|os|a|as|der|die|das|il|lo|gli|i)\s+)?"
    r"(?:[A-Z]{2,}\w*|[A-Z][a-z]+[A-Z]\w*)\b"
    r"|^[A-Za-z][\w.+#\-]*(?:\s+[A-Za-z][\w.+#\-]*)?\s*(?:\d+\s*)?(?:は|では|って|는|은|에서는|的|是|表示)"
)
# A generic indefinite subject: "A primary key …", "Une clé étrangère …", "Ein Index …".
_GENERIC_SUBJECT = re.compile(r"^(?:an?|un|une|una|uno|um|uma|ein|eine)\s+\w", re.I)
# A quantity with a unit is a setting of this project ("50 MB", "90 日間", "24 hours"); a bare number is not
# ("HTTP 404", "从 0 开始").
_QUANTITY = re.compile(
    r"(?i)\d\s*(?:%|€|\$|£|¥|円|元|(?:ms|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|months?"
    r"|years?|kb|mb|gb|tb|px|rps|qps|x|times|segundos?|minutos?|horas?|días|dias|jours?|heures?|secondes?|tage?"
    r"|stunden?|sekunden?|minuten?|giorni|ore|secondi|minuti)\b|秒|分|天|日|时|小时|個|件|回|次|개|초|분|시간|일)"
)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7a3]")


def _words(text: str) -> float:
    return len(re.findall(r"[A-Za-z0-9À-ÿ'\-]+", text)) + len(_CJK.findall(text)) / 2


def is_general_knowledge(text: str, *, states_rule: bool) -> bool:
    """Whether ``text`` states what any developer knows, with nothing of the project in it.

    >>> is_general_knowledge("HTTP 404 means the resource was not found.", states_rule=False)
    True
    >>> is_general_knowledge("Our API answers 410, never 404, for a refunded ticket.", states_rule=True)
    False
    """
    s = text.strip()
    if states_rule or _ANCHOR.search(s) or _ADDRESS.search(s) or _REASON.search(s) or _FILE_NAME.search(s):
        return False
    if versioned_names(s) or _QUANTITY.search(s) or _words(s) > GENERAL_MAX_WORDS:
        return False
    if _DEFINES.search(s):
        return True
    named = bool(_NAME_SUBJECT.search(s)) or bool(_GENERIC_SUBJECT.search(s))
    return named and bool(_ABLE.search(s))


# A rule word of Korean (must, never, always, forbidden): a rule is never junk. A negative imperative ("…지
# 마세요") is not one: scoped to an occasion ("이번 PR에서는 … 신경 쓰지 마세요") it is a one-off.
_KO_RULE = re.compile(r"반드시|절대|해야|말아야|금지|항상|언제나|모든")
_KO_IMPERATIVE = re.compile(r"마세요|안 됩니다|안됩니다|하지 마|않습니다")
_KO_REASON = re.compile(r"때문|므로|니까|위해|려고")
# The glance shapes of ``_glance.py`` in Korean: where a thing is or that it exists ("루트에 X 파일이
# 있습니다"), a count of parts ("화면이 여덟 개 있습니다"), what a file says ("README에 … 나와 있습니다"),
# what the project is made with ("이 프로젝트는 Kotlin으로 작성되어 있습니다").
_KO_GLANCE = re.compile(
    r"(?:에|에는|안에|아래에|밑에|폴더에|디렉터리에)\s+(?:\S+\s+){0,4}?(?:있습니다|있어요|있다|들어\s?있습니다)\s*[.。]?$"
    r"|(?:[\d]+|한|두|세|네|다섯|여섯|일곱|여덟|아홉|열|스무)\s*(?:개|가지|종류)\s*(?:있습니다|있어요|입니다)"
    r"|(?:README|문서|위키|[\w\-]+\.\w+)(?:에|에는)\s.{0,40}(?:나와|적혀|쓰여|설명되어|정의되어)\s?있습니다"
    r"|(?:프로젝트|앱|백엔드|프론트엔드|서버|테스트|저장소)(?:는|은)\s.{0,40}(?:으로|로)\s*(?:작성되어|만들어져"
    r"|개발되어|구성되어)\s?있습니다"
)
_KO_SPECULATION = re.compile(
    r"아마|것 같(?:아|습|다|네)|지도 모르|수도 있을 것|인 듯|일지도|확실하지 않|잘 모르겠|어떨까|싶기도|나중에|언젠가"
)
_KO_ONE_OFF = re.compile(r"이번(?!\s*주부터)|오늘|내일|지금 바로|일단|당분간|이따가")
_KO_CHATTER = re.compile(r"^(?:감사합니다|고맙습니다|고마워요|좋아요|좋네요|알겠습니다|네|수고하셨습니다|안녕하세요)")


def korean_reason(text: str) -> str | None:
    """``speculation``, ``one_off``, ``chatter`` or ``obvious`` for a Korean sentence with no rule word, else None.

    >>> korean_reason("이번 PR에서는 테스트 이름만 바꿔 주세요.")
    'one_off'
    """
    s = text.strip()
    if not _HANGUL.search(s) or _KO_RULE.search(s):
        return None
    if _KO_SPECULATION.search(s):
        return "speculation"
    if _KO_ONE_OFF.search(s):
        return "one_off"
    if _KO_CHATTER.search(s) and len(s) <= 40:
        return "chatter"
    if _KO_GLANCE.search(s) and not _KO_REASON.search(s) and not _KO_IMPERATIVE.search(s):
        return "obvious"
    return None
