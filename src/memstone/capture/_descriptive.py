"""Bare descriptions of the repository and time-bound requests, by sentence structure (issue 16, capjunk6).

Three shapes that a reader sees in the repository in a minute, or that only hold for now, read by what is left of
a sentence once its grammar is taken out, in every capture language:

- **an equation of a part with a name**: a part of any software project (backend, database, app, the tests, a
  file) as the subject, a copula or a verb of making/using ("is", "est développée en", "está hecha con", "是 … 写
  的", "は … で作られています", "로 작성되어 있습니다") and then only names (capitalised words, versions, dotted
  names) and glue words: "Die Datenbank ist SQL Server 2022.", "后端是 Go 写的，框架用 Gin。", "pom.xml では Java 17 が
  指定されています。";
- **a bare count**: a verb of having ("we have", "abbiamo", "ha", "有", "全部で … です") right before a number, then a
  short noun phrase and at most a place: "Nous avons 14 modèles ActiveRecord.", "Il catalogo ha circa 2.400
  prodotti.", "テーブルは全部で 18 個です。";
- **a time-bound request** (one_off): a deictic of time (today, tonight, tomorrow's demo, 今晚, 오늘) in a sentence
  that asks for something now, unless it says "from today on" (a change, which lasts).

Anything else in the sentence (a second predicate, a place beside the name, a reason) keeps it: the caller also
keeps every sentence with a modality of its language. Closed word classes only (part nouns every project has,
copulas, particles, number words); no project's words.
"""

from __future__ import annotations

import re

from ._patterns import word_set

__all__ = ["is_bare_count", "is_bare_equation", "is_time_bound_request"]

# Parts every software project has; they name what is described, not a project's own vocabulary.
_PART = (
    r"project|repo|repository|codebase|app|apps|application|backend|back-end|frontend|front-end|front|api|server"
    r"|database|db|ui|website|site|web app|admin|cli|worker|service|tests|test suite|ci|build|solution"
    r"|progetto|applicazione|sito|servizio|gestionale|projet|dépôt|appli|base|base de données|serveur"
    r"|proyecto|repositorio|aplicación|sitio|servidor|base de datos|servicio|projeto|repositório|aplicativo"
    r"|aplicação|banco|banco de dados|serviço|projekt|anwendung|datenbank|dienst|oberfläche"
)
_DET = r"(?:the|this|our|il|lo|la|l'|le|les|el|los|las|o|os|a|as|das|die|der|i|gli|notre|nostro|nuestro|nosso|unser)"
_FILE = r"`?(?:[\w.\-]+/)*[\w\-]+\.[A-Za-z][\w]{0,9}`?"
_EQUATION_VERB = (  # the verbs of making first: "est développée en Ruby on Rails" is not "est" + a place
    r"(?:(?:is|are) (?:written|built|made|developed) (?:in|with|on)|è (?:fatt[oa]|scritt[oa]|sviluppat[oa]) (?:in|con)"
    r"|(?:est|sont) (?:fait|écrit|développé)e?s? (?:en|avec)|(?:es|está|son|están) (?:hech|escrit|desarrollad)[oa]s?"
    r" (?:en|con)|(?:é|são|está) (?:feit|escrit|desenvolvid)[oa]s? (?:em|com)"
    r"|(?:ist|sind) (?:mit|in) \S+ (?:gebaut|geschrieben|entwickelt)"
    r"|is|are|uses|use|targets|è|sono|usa|utilizza|est|sont|utilise|es|son|utiliza|é|são|ist|sind|nutzt"
    r"|verwendet)"
)
_EQUATION = re.compile(
    rf"(?i)^(?:{_DET}\s+|l')?(?:\w+\s+)?(?:{_PART}|{_FILE})(?:\s+[a-zà-ÿ]+)?\s+(?P<verb>{_EQUATION_VERB})\s+(?P<rest>.+)$"
)
# Words that may stand beside the names ("… en Ruby on Rails 7 avec Hotwire", "une API minimale en ASP.NET Core").
_GLUE = word_set(
    "with and as the a an for its on version build tool framework language runtime come con e il lo la di in "
    "comme avec et le les de du en como y el los las del com e o os da do em als und mit der die das den auf "
    "un una uno une ein eine um uma para per pour für api"
)
_COPULA = word_set("is are è sono est sont es son é são ist sind")
_HOSTED = re.compile(r"(?i)\b(?:on|auf|sur|su|sobre|bei|at|hosted|gehostet)\b")
_NAME_OR_NUMBER = re.compile(r"^(?:[A-Z.]|\S*\d)")
_CJK_SUBJECT = re.compile(
    r"^(?:这个|我们的|本)?(?:后端|前端|服务端|客户端|后台|管理后台|数据库|项目|仓库|代码|测试|接口|小程序|App|APP)"
    r"|^(?:バックエンド|フロントエンド|フロント|管理画面|データベース|DB|アプリ|サーバー|プロジェクト|リポジトリ|テスト|CI)"
    r"|^(?:백엔드|프론트엔드|프론트|데이터베이스|DB|앱|서버|프로젝트|저장소|테스트)"
    rf"|^{_FILE}"
)
# What may remain beside the names in a CJK or Korean equation: the subject nouns, particles and the predicates of
# being, making and using.
_CJK_GLUE = re.compile(
    r"后端|前端|服务端|客户端|管理后台|后台|数据库|项目|仓库|代码|测试|接口|小程序|框架|这个|我们的|本|里|用的是|使用|采用|基于"
    r"|写的|开发的|做的|实现的|编写|开发|是|用|的|和|与|版本"
    r"|バックエンド|フロントエンド|フロント|管理画面|データベース|アプリ|サーバー|プロジェクト|リポジトリ|テスト"
    r"|で作られています|で書かれています|で書かれている|を使っています|を使用しています|を採用しています|が指定されています"
    r"|でできています|です|では|には|は|で|を|が|と|の"
    r"|백엔드|프론트엔드|프론트|데이터베이스|앱|서버|프로젝트|저장소|테스트"
    r"|(?:으로|로) (?:작성되어|만들어져|개발되어) 있습니다|(?:으로|로) 작성됐습니다|(?:으로|로) 만들었습니다"
    r"|입니다|이에요|예요|을 사용합니다|를 사용합니다|을 씁니다|를 씁니다|은|는|도|와|과"
    r"|[，,、。.\s]"
)

# A name in Latin script (a version and a dotted name included) inside CJK or Hangul text.
_LATIN_TOKEN = re.compile(r"`[^`]*`|[A-Za-z0-9][A-Za-z0-9_.+#/\-]*(?: [A-Z0-9][A-Za-z0-9_.+#\-]*)*")
_HANGUL_OR_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")


def is_bare_equation(text: str) -> bool:
    """Whether ``text`` only equates a part of the project with names (what it is made with).

    >>> is_bare_equation("Die Datenbank ist SQL Server 2022."), is_bare_equation("后端是 Go 写的，框架用 Gin。")
    (True, True)
    >>> is_bare_equation("The docs site is Docusaurus under docs/, deployed from main by CI.")
    False
    """
    s = text.strip()
    if _HANGUL_OR_CJK.search(s):
        if not _CJK_SUBJECT.search(s):
            return False
        names = _LATIN_TOKEN.findall(s)
        if not names:
            return False
        rest = _CJK_GLUE.sub("", _LATIN_TOKEN.sub("", s))
        return rest == ""
    m = _EQUATION.match(s.rstrip(" .!"))
    if m is None:
        return False
    rest = re.sub(r"(?i)\b(?:l|d|un|dell|nell|all)'", "", m.group("rest"))
    words = re.findall(r"[^\s,;:()]+", rest)
    if m.group("verb").lower() in _COPULA and _HOSTED.search(rest):
        return False  # "ist PostgreSQL 15 auf RDS": where it runs is not in the repository
    named = [w for w in words if _NAME_OR_NUMBER.match(w)]
    common = [w for w in words if not _NAME_OR_NUMBER.match(w) and w.lower().strip(".") not in _GLUE]
    return bool(named) and len(common) <= 1


_NUMBER = (
    r"\d[\d.,\u00a0\u202f ]*\d|\d|two|three|four|five|six|seven|eight|nine|ten|twelve|due|tre|quattro|cinque|sei"
    r"|dieci|dodici|deux|trois|quatre|cinq|dix|douze|dos|tres|cuatro|cinco|seis|diez|doce|dois|duas|três"
    r"|zwei|drei|vier|fünf|sechs|zehn|zwölf"
)
_HAVE = (
    r"we have|we've got|there are|abbiamo|ci sono|nous avons|on a|il y a|tenemos|hay|temos|há|existem"
    r"|wir haben|es gibt|has|have|ha|hanno|a|ont|tiene|tienen|tem|têm|hat|haben|contains|contiene|contient|enthält"
)
_APPROX = (
    r"(?:about|around|roughly|some|circa|quasi|environ|près de|unos|unas|cerca de|alrededor de|etwa|rund|ungefähr)"
)
_BARE_COUNT = re.compile(
    rf"(?i)^(?:(?:{_DET}\s+)?[^\s,;:]+(?:\s+[^\s,;:]+)?\s+)?(?:{_HAVE})\s+(?:{_APPROX}\s+)?(?:{_NUMBER})"
    r"(?:\s+[^\s,;:]+){1,3}"
    r"(?:\s+(?:in|on|at|nel|nella|nei|dans|en|sur|na|no|im|in der|auf)\s+(?:\S+\s+){0,2}\S+)?[.!]?$"
    r"|^[^，。,]{1,12}?(?:は|には)?(?:全部で|合計で?|ぜんぶで)?\s*\d[\d,]*\s*(?:個|件|本|つ|枚|人|台)(?:です|あります)。?$"
    r"|^[^，。,]{1,12}?(?:里|中)?(?:一共|总共|共)?有\s*\d[\d,]*\s*(?:个|张|套|份|条|家)\S{0,4}[。.]?$"
)


def is_bare_count(text: str) -> bool:
    """Whether ``text`` only counts parts or records of the project.

    >>> is_bare_count("Nous avons 14 modèles ActiveRecord.")
    True
    >>> is_bare_count("テーブルは全部で 18 個です。")
    True
    >>> is_bare_count("We have 3 environments, and only prod sends e-mail.")
    False
    """
    return bool(_BARE_COUNT.search(text.strip()))


# A deictic of time: the request holds for now ("tonight", "tomorrow's demo", "今晚", "오늘은").
_NOW = re.compile(
    r"(?i)\b(?:today|tonight|tomorrow(?:'s)?|this (?:morning|afternoon|evening)|oggi|stasera|stanotte|domani"
    r"|stamattina|aujourd'hui|ce soir|demain|ce matin|hoy|esta noche|esta tarde|hoje|esta noite|amanhã|heute"
    r"|heute abend|diesen abend)\b"
    r"|今天|今晚|今晚上|明天|今天下午|今天上午|今日|今夜|今晩|明日|오늘|내일|오늘 밤"
)
# "From today on" starts something that lasts: a change, not a one-off.
_FROM_NOW = re.compile(
    r"(?i)\b(?:from|since|starting|as of|a partire da|da|à partir d'|à partir de|dès|desde|a partir de|ab|seit)\s+"
    r"(?:today|tomorrow|oggi|domani|aujourd'hui|demain|hoy|mañana|hoje|amanhã|heute|morgen)"
    r"|(?:今天|明天)(?:起|开始)|从(?:今天|明天)|(?:今日|明日)から|오늘부터|내일부터"
)


def is_time_bound_request(text: str) -> bool:
    """Whether ``text`` is bound to a deictic time (today, tonight, tomorrow) and does not start something lasting.

    >>> is_time_bound_request("오늘은 이 버그만 고쳐 주세요.")
    True
    >>> is_time_bound_request("From today on, every PR needs two reviews.")
    False
    """
    return bool(_NOW.search(text)) and not _FROM_NOW.search(text)
