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
    # a noun predicate of the class of the thing (a language, a tool, a format) in Japanese, Korean and Chinese
    r"|(?:言語|ツール|ライブラリ|フレームワーク|形式|フォーマット|プロトコル|仕組み|概念|ミドルウェア)(?:です|だ)[。.]?$"
    r"|(?:언어|도구|라이브러리|프레임워크|형식|포맷|프로토콜|방식|개념)(?:입니다|이에요|예요)[.。]?$"
    r"|(?:의미합니다|뜻합니다)[.。]?$|是\S{0,12}(?:语言|工具|库|框架|格式|协议|机制)[。.]?$"
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
# A generic indefinite subject that is a concept of computing, not a thing of the project's domain ("An oven that
# misses three heartbeats …" is a rule of this project; "Un indice su una colonna velocizza …" is a textbook):
# the closed class of general programming concepts, in each Latin-script capture language (an adjective or a
# compound part may stand before or after the noun: "Une clé primaire", "Ein Docker-Image").
_CONCEPT_EN = (
    r"index|indexes|key|primary key|foreign key|image|container|promise|thread|process|transaction|variable"
    r"|function|class|object|hash|commit|branch|list|array|dictionary|dict|tuple|set|map|query|join|cache|cookie"
    r"|socket|mutex|lock|pointer|closure|callback|interface|enum|struct|lambda|iterator|generator|coroutine"
    r"|deadlock|race condition|view|trigger|stored procedure|constraint|schema|migration|regex|regular expression"
    r"|[\w\-]+-image|[\w\-]+-container"
)
_CONCEPT = (
    r"índice|clave|clave primaria|clave foránea|imagen|contenedor|promesa|hilo|proceso|transacción|función|clase"
    r"|objeto|rama|lista|diccionario|tupla|consulta|caché|puntero|interfaz|vista|disparador|esquema|migración"
    r"|clé|clé primaire|clé étrangère|conteneur|promesse|processus|fonction|objet|branche|liste|dictionnaire"
    r"|requête|jointure|pointeur|vue|déclencheur|schéma|expression régulière"
    r"|indice|chiave|chiave primaria|chiave esterna|immagine|contenitore|funzione|classe|oggetto|lista"
    r"|dizionario|interrogazione|puntatore|vista|schema|transazione|processo"
    r"|chave|chave primária|chave estrangeira|imagem|contêiner|promessa|processo|transação|função|classe|objeto"
    r"|lista|dicionário|consulta|ponteiro|visão|esquema|migração"
    r"|schlüssel|primärschlüssel|fremdschlüssel|container|prozess|transaktion|funktion|klasse|objekt|liste"
    r"|abfrage|zeiger|sicht|schema|migration|[\w\-]+-image|[\w\-]+-container"
)
_GENERIC_CONCEPT = re.compile(
    rf"(?i:^(?:(?:an?)\s+(?:[\w\-]+\s+)?(?:{_CONCEPT_EN})"  # "a" alone: the Portuguese "A chave …" is definite
    rf"|(?:un|une|una|uno|um|uma|ein|eine)\s+(?:[\w\-]+\s+)?(?:{_CONCEPT_EN}|{_CONCEPT}))\b)"
    # an indefinite before an acronym is the kind, not one of ours ("Un JWT está formado por …", "An SSD …")
    r"|^(?:An?|Un|Une|Una|Uno|Um|Uma|Ein|Eine)\s+[A-Z]{2,}s?\b"
    # the class of a technology as the subject: "Le protocole HTTPS chiffre …", "Il garbage collector di Java …"
    r"|(?i:^(?:the|le|la|l'|el|il|lo|o|a|der|die|das)\s*(?:protocol|protocole|protocolo|protocollo|protokoll"
    r"|language|langage|lenguaje|linguaggio|linguagem|sprache|garbage collector|compiler|compilateur|compilador"
    r"|compilatore|interpreter|interpréteur|intérprete|interprete|event loop|boucle d'événements|navigateur"
    r"|browser|navegador|kernel|noyau|système d'exploitation|sistema operativo|sistema operacional|betriebssystem)\b)"
    # a concept of computing as the topic of a CJK or Korean sentence ("도커 컨테이너는 …", "インデックスは …")
    r"|^(?:\S{1,6}\s?)?(?:컨테이너|인덱스|트랜잭션|기본 키|외래 키|변수|함수|클래스|배열|해시|커밋|브랜치"
    r"|프로세스|스레드"
    r"|쿼리|가비지 컬렉터|프로토콜)(?:는|은|란)\s"
    r"|^(?:コンテナ|インデックス|トランザクション|主キー|外部キー|変数|関数|クラス|配列|ハッシュ|コミット|ブランチ|プロセス"
    r"|スレッド|クエリ|ガベージコレクタ|プロトコル)(?:は|とは)"
    r"|^(?:一个)?(?:容器|索引|事务|主键|外键|变量|函数|数组|哈希|进程|线程|垃圾回收器|协议)(?:是|会|可以|能|就是|用来)"
)
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


# A technology as the topic of the whole sentence, before its clause: "In Python, …", "En JavaScript, …", "Em
# Node.js, …", "Nel linguaggio Go, …", "In SQL …" (a comma or not), "자바스크립트에서 배열 …", "TypeScript では …",
# "在 Go 里，…". The rest then says what that technology does, which any developer knows, unless an anchor of
# this project follows (checked first). A place of the deployment ("In production, …") is an anchor, not a
# technology; a lowercase name only with a dot ("node.js").
_TOPIC = re.compile(
    r"^(?i:in|en|em|no|na|nel|nella|nello|im|in der|bei|dans|con|with)\s+"
    r"(?i:(?:the|le|la|el|o|a|il|lo|der|die|das)\s+)?"
    r"(?i:(?:language|langage|lenguaje|linguagem|linguaggio|sprache|framework)\s+)?"
    r"(?!(?:CI|CD|QA|UAT|API|UI|DB|Prod|Production|Staging|Dev|Local|Admin)\b)(?:[A-Z][\w.+#\-]*|[a-z]+\.js)(?:\s+[A-Z0-9][\w.+#\-]*)?\s*,"
    r"|^[A-Za-z][\w.+#\-]*\s*(?:では|において|の世界では)[、,\s]"
    r"|^在\s*[A-Za-z][\w.+#\-]*\s*(?:里|中|里面)[，,\s]"
    r"|^(?:[A-Za-z][\w.+#\-]*|[\uac00-\ud7a3]{3,})\s*에서(?:는)?\s"
)
# Asides that name no pin, command or version of this project: "since version 3.7" dates a feature of the
# technology, a keyword in a code span ("`const`") is the language's, and "HTTP 404" is a status code.
_ASIDES = re.compile(
    r"(?i)\b(?:since|from|desde|depuis|seit|dalla|da|a partir da|a partir de)\s+(?:the\s+|la\s+|a\s+)?"
    r"(?:version|versión|versão|versione)\s+\d+(?:\.\d+)*|`[\w.]+`|\bHTTP\s+[1-5]\d\d\b"
)
# What keeps a sentence under a technology topic as this project's choice: a contrast ("state lives in Zustand
# stores, not in context", "en vez de", "而不是") or another product named in it ("… in Zustand stores").
_CHOICE = re.compile(
    r"(?i),\s*(?:not|nicht|non|pas|no|não|jamais|never|nunca|mai)\b|\b(?:instead of|rather than|statt|anstatt"
    r"|en lugar de|en vez de|au lieu de|plutôt que|invece di|anziché|em vez de|ao invés de)\b"
    r"|而不是|不用|ではなく|じゃなく|대신|아니라"
)
_OTHER_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:[A-Z]\w*)?\b")


def is_general_knowledge(text: str, *, states_rule: bool, modal: bool | None = None) -> bool:
    """Whether ``text`` states what any developer knows, with nothing of the project in it.

    ``states_rule``: the caller's reading of a modality, "every" and "by default" included; ``modal``: only a
    must/never, a decision or a preference (``states_rule`` when not given). A textbook statement under a technology
    topic or about a concept of computing says "every" and "by default" as often as a rule does ("In Django, every
    model gets an id by default"), so only ``modal`` keeps those two shapes.

    >>> is_general_knowledge("HTTP 404 means the resource was not found.", states_rule=False)
    True
    >>> is_general_knowledge("Our API answers 410, never 404, for a refunded ticket.", states_rule=True)
    False
    >>> is_general_knowledge("En Python, las listas son mutables.", states_rule=False)
    True
    """
    s = text.strip()
    # After a technology topic, the rest is read alone: the topic's own name ("Node.js") is no file.
    topic = _TOPIC.search(s)
    rest = _ASIDES.sub("", s[topic.end() :]) if topic else s
    if _ANCHOR.search(rest) or _ADDRESS.search(rest) or _REASON.search(rest) or _FILE_NAME.search(rest):
        return False
    if versioned_names(_ASIDES.sub("", rest)) or _QUANTITY.search(rest) or _words(rest) > GENERAL_MAX_WORDS:
        return False
    if not (states_rule if modal is None else modal) and not _CHOICE.search(rest):
        if topic and not _OTHER_NAME.search(rest):
            return True
        if _GENERIC_CONCEPT.search(s):
            return True  # "Une clé primaire identifie …", "Ein Docker-Image besteht aus …": what any such thing is
    if states_rule:
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
    r"|아닐까|까 싶|인지도|듯해요|듯합니다|려나|나 봐요|어쩌면|혹시"
)
_KO_ONE_OFF = re.compile(
    r"이번(?!\s*주부터)|오늘|내일|지금 바로|일단|당분간|이따가|다음 주|[월화수목금토일]요일까지"
    r"|(?:제가|내가)\s.*(?:할게요|하겠습니다)"
)
_KO_CHATTER = re.compile(
    r"^(?:감사합니다|고맙습니다|고마워요|좋아요|좋네요|알겠습니다|네|수고하셨습니다|안녕하세요|음|흠|아|오|와|헐)"
    r"|네요[.!~]*$"
)


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
