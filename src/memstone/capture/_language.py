"""Language-aware reading of one user sentence: English, German and Chinese cues (issue 16).

Capture used to need an English trigger word ("always", "we use", "from now on") before it kept a statement.
Teams write their rules in their own language and often state a fact plainly ("The docs site is Docusaurus
under docs/, deployed from main by CI"). :func:`read_sentence` reads what a sentence *does* instead:

- what it is not: a question, speculation, an instruction for the current task only (one-off), a task request
  ("Fix …", "帮我修一下…", "Bau mir …"), chatter or a greeting;
- its modality, per language: must/never (``constraint``), we-do/everyone/passive-generic (``convention``),
  I-prefer (``preference``), we-decided (``decision``);
- whether it reports a change of state without a correction marker ("we moved … to k3d", "inzwischen",
  "改用") and what it says was replaced ("off kind", "statt Ansible", "从 GitLab 迁到");
- whether it reports a failed or reverted attempt (a ``lesson``);
- its *evidence* of a durable project fact: code spans, paths, commands, versions, tool-like names
  (CamelCase, ALLCAPS, dotted or hyphenated), a "we/our" subject. A plain declarative sentence with evidence
  is a project fact even without a marker.

Everything here is regular expressions and word lists over :mod:`memstone.capture._text` output: no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..domain.analyzer import is_cjk

Lang = Literal["en", "de", "zh"]

__all__ = [
    "FROM_NOW_ON",
    "LIFECYCLE_ML",
    "SYSTEM_ML",
    "WORKFLOW_GATE",
    "Lang",
    "Reading",
    "language",
    "lifecycle_stage_ml",
    "read_sentence",
]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DE_WORDS = _words(
    "der die das den dem des und ist sind nicht wir mit für auf ein eine einen einem zu von bei als im "
    "auch nur wird werden wurde immer nie niemals jeder jede jedes alle aber oder wenn dass weil sonst "
    "kein keine keinen sich es ich du bitte mehr noch schon läuft laufen über unter nach vor ohne statt "
    "inzwischen mittlerweile gibt hier heute jetzt dürfen darf muss müssen soll sollen wer will etwas zum zur "
    "durch vom niemand "
)
_EN_WORDS = _words(
    "the a an and is are not we with for on to of at as in also only will be was were always never every "
    "all but or if that because otherwise no it i you please more still our they this these those "
)


def language(text: str) -> Lang:
    """``zh`` when CJK characters make up a fifth of the letters, ``de`` when German function words outnumber
    English ones (and there are at least two), else ``en``."""
    letters = [ch for ch in text if ch.isalpha()]
    if letters and sum(1 for ch in letters if is_cjk(ch)) * 5 >= len(letters):
        return "zh"
    words = re.findall(r"[a-zäöüß]+", text.lower())
    de = sum(1 for w in words if w in _DE_WORDS)
    en = sum(1 for w in words if w in _EN_WORDS)
    if any(ch in text for ch in "äöüßÄÖÜ"):
        de += 1
    return "de" if de >= 2 and de > en else "en"


# ------------------------------------------------------------------------------------------------ per language
_QUESTION = {
    "en": _rx(r"\?\s*$"),
    "de": _rx(r"\?\s*$|^(?:kannst|könntest|würdest|weißt|hast|gibt es|wie|was|warum|wo|wann|welche[rsnm]?)\b.*\?"),
    "zh": re.compile(r"[?？]\s*$|吗[。.]?$|呢[。.]?$|^(?:为什么|怎么|是不是|有没有|哪)"),
}
_SPECULATION = {
    "en": _rx(
        r"\b(?:maybe|perhaps|possibly|probably|might|i think|i guess|i suspect|i wonder|not sure|someday|eventually"
        r"|could try|worth (?:looking|trying))\b"
    ),
    "de": _rx(
        r"\b(?:vielleicht|eventuell|wahrscheinlich|möglicherweise|vermutlich|irgendwann|ich glaube|ich denke"
        r"|ich vermute|ich schätze|bin mir (?:aber )?nicht sicher|könnte|könnten|lohnt sich)\b"
    ),
    "zh": re.compile(
        r"也许|或许|可能|大概|我觉得|我怀疑|我猜|不确定|说不好|回头再说|以后再说|以后可能|考虑一下|不一定"
    ),
}
_ONE_OFF = {
    "en": _rx(
        r"\b(?:for this (?:task|pr|change|release|ticket|one)|in this (?:pr|change|branch|commit)|this time"
        r"|right now|for now|today|tonight|tomorrow|this afternoon|this morning|at the moment|just this once"
        r"|once (?:ci|it) is green)\b"
    ),
    "de": _rx(
        r"\b(?:heute|morgen|jetzt (?:erst|mal|gleich|sofort)|erst (?:ein)?mal|fürs erste|vorerst|diesmal"
        r"|dieses mal|gerade|in diesem (?:pr|pull request|commit|branch)|für diese[ns]? (?:aufgabe|ticket|pr|release)"
        r"|nur für (?:die|den|das|diese[ns]?) \w+liste)\b"
    ),
    "zh": re.compile(
        r"这次|这一次|今天|明天|下班前|现在马上|马上|立刻|暂时|先不|先只|赶时间|这个\s*PR|这个任务|这个需求|本次"
    ),
}
_TASK = {
    "en": _rx(
        r"^(?:(?:please|now|also|ok(?:ay)?|and|then),?\s+)*(?:add|fix|implement|build|create|write|make(?! sure)"
        r"|refactor|update|bump|rename|change|look(?: at| into)?|investigate|debug|rerun|re-run|merge|apply|review"
        r"|help|show|explain|tell|give|find|set up|install|move|delete|remove|clean(?: up)?|generate|convert|port"
        r"|draft|prepare|open|close|rebase|squash|split|extract|replace|upgrade|downgrade|revert|rewrite|retry"
        r"|ship|send|post|file|scaffold|wire|hook up|go ahead|let'?s)\b"
    ),
    "de": _rx(
        r"^(?:bitte\s+)?(?:bau|mach|schau|füg|schreib|änder|erstell|prüf|teste|behebe|fix|implementier|richte"
        r"|lösch|entfern|zeig|erklär|hilf|kannst|könntest|würdest|merge|such|pass|aktualisier|benenn|räum)\w*\b"
    ),
    "zh": re.compile(r"^(?:请|麻烦)?(?:帮我|帮忙|你帮|你先|给我|把|请你|麻烦你)|(?:修|改|加|看|查|写|做|调|弄|跑)一下"),
}
# Clauses that make an imperative a standing rule ("Lass vor jedem „fertig“ … laufen", "Run X before every commit").
_GENERIC = {
    "en": _rx(r"\b(?:always|never|every|each|whenever|any|all|before (?:you|every|each|saying|calling)|by default)\b"),
    "de": _rx(
        r"\b(?:immer|nie|niemals|stets|jede[rsnm]?|alle[rsnm]?|grundsätzlich|standardmäßig|bevor|vor jede[rsnm]?)\b"
    ),
    "zh": re.compile(r"每次|每个|所有|一律|总是|永远|一直|都要|都用|之前"),
}
_CONSTRAINT = {
    "en": _rx(
        r"\b(?:always|never|must|mustn'?t|cannot|can'?t|not allowed|forbidden|required|has to|have to|may never"
        r"|make sure|ensure|no one|nobody|only)\b|\bdon'?t\b|\bdo not\b"
    ),
    "de": _rx(
        r"\b(?:muss|müssen|musst|darf|dürfen|darfst|nie|niemals|immer|stets|ausschließlich|nur|verboten"
        r"|nicht erlaubt|erforderlich|niemand|keine?[nmrs]?)\b"
    ),
    "zh": re.compile(
        r"必须|一定要|务必|不要|不能|不允许|不许|禁止|严禁|不得|别|千万|绝不|永远不|只能|只允许|不可以|要先|需要"
    ),
}
_CONVENTION = {
    "en": _rx(
        r"\b(?:we|our|everyone|everything|all|every|each|by default|as a rule|convention|standard)\b"
        r"|\b(?:is|are|get|gets)\s+\w+ed\b"
    ),
    "de": _rx(
        r"\b(?:wir|unser[emnrs]?|jede[rsnm]?|alle[rsnm]?|grundsätzlich|standardmäßig)\b"
        r"|\b(?:wird|werden)\b.*\bge\w+(?:t|en)\b"
    ),
    "zh": re.compile(
        r"我们|统一|都用|都走|都存|都放|默认|每次|每个|所有|全部|遵循|规范|约定|一律|用\S{1,12}管理|放在|由\S{1,20}生成"
        r"|(?:用|走)的(?:都)?是"
    ),
}
_PREFERENCE = {
    "en": _rx(r"\bi (?:personally )?(?:prefer|like|love|hate|dislike)\b"),
    "de": _rx(r"\bich (?:bevorzuge|mag|finde|hätte lieber)\b|\bmir ist \w+ lieber\b|\blieber\b"),
    "zh": re.compile(r"我(?:个人)?(?:更)?(?:喜欢|倾向|偏好|习惯)"),
}
_DECISION = {
    "en": _rx(r"\bwe (?:decided|chose|agreed|settled on|approved)\b"),
    "de": _rx(r"\bwir haben (?:uns )?(?:entschieden|beschlossen|geeinigt)\b|\bentschieden\b"),
    "zh": re.compile(r"决定|定下来|商量好"),
}
_CORRECTION_LEAD = {
    "en": _rx(r"^(?:no|nope|actually|wrong|that'?s (?:wrong|not right))\b"),
    "de": _rx(
        r"^(?:nein|falsch|stimmt nicht|das stimmt (?:so )?nicht(?: mehr)?|eigentlich|korrektur|nicht \w+\s*[:-])\b"
    ),
    "zh": re.compile(r"^(?:不对|不是的|错了|说错了|其实|更正|纠正一下)"),
}
# A change of state stated without a correction marker ("We moved the e2e suite off kind to k3d").
_CHANGE = {
    "en": _rx(
        r"\b(?:now|no longer|anymore|any more|these days)\b|\bwe(?:'ve| have)? (?:\w+ )?(?:moved|switched|migrated"
        r"|changed|replaced|dropped|left|stopped using)\b|\b(?:moved|switched|migrated) (?:\w+ ){0,4}(?:off|from|to)\b"
        r"|\bis gone\b|\b(?:was|were) (?:bumped|changed|replaced|moved)\b"
    ),
    "de": _rx(
        r"\b(?:inzwischen|mittlerweile|nicht mehr|neuerdings|ab sofort|seit (?:dem|der|letzte[mnr]?)"
        r"|umgestiegen|gewechselt|umgezogen|ersetzt|geändert|jetzt|nun)\b"
    ),
    "zh": re.compile(
        r"改用|改成|改为|换成|迁到|迁移到|不再|已经\S{0,12}(?:换|迁|改|升级|上线)|现在(?:改|换|用)|从\S{1,20}(?:换|迁|改)"
    ),
}
_REPLACED = {
    "en": _rx(
        r"\b(?:off|instead of|rather than|away from|left|dropped|not)\s+(?P<x>[\w.\-/`']+(?:\s+[\w.\-`']+)?)"
        r"|\bfrom\s+(?P<y>[\w.\-/`']+)\s+to\b|\b(?P<z>[\w.\-/`']+) is gone\b"
        r"|\b(?:replaced|swapped(?: out)?|ditched|retired)\s+(?:the\s+)?(?P<w>[\w.\-/`']+)\s+(?:with|by|for)\b"
    ),
    "de": _rx(
        r"\bnicht mehr\s+(?:(?:mit|über|in|im|per|auf|nach)\s+)?(?P<w>[\wäöüß.\-/`]+)"
        r"|\b(?:statt|anstatt|nicht|kein(?:e|en)?|von)\s+(?P<x>[\wäöüß.\-/`]+)"
        r"|(?P<y>[\wäöüß.\-/`]+)\s+(?:benutzen|verwenden|nutzen)\s+wir\s+nicht\s+mehr"
        r"|(?P<z>[\wäöüß.\-/`]+)\s+(?:(?:ist|sind)\s+(?:jetzt\s+)?(?:raus|weg|abgeschafft|entfernt)"
        r"|haben\s+wir\s+(?:\w+\s+){0,3}(?:entfernt|abgeschafft|rausgeworfen|abgelöst|ersetzt))\b"
    ),
    "zh": re.compile(
        r"从\s*(?P<x>[^\s，。,]{1,20}?)\s*(?:迁|换|改)|不再(?:用|使用)\s*(?P<y>[^\s，。,]{1,12})|不是\s*(?P<z>[^\s，。,]{1,12})"
    ),
}
# A failed or reverted attempt: "tried X, it broke Y, reverted, nothing committed".
_ATTEMPT = {
    "en": _rx(r"\b(?:tried|attempted|experimented with|tested switching|gave \w+ a try)\b"),
    "de": _rx(r"\b(?:versucht|probiert|ausprobiert|getestet)\b"),
    "zh": re.compile(r"试过|试了|试着|尝试|试用"),
}
_FAILED = {
    "en": _rx(
        r"\b(?:broke|broken|failed|fails|crashed|did ?n[o']t work|timed out|regressed|came out wrong|wanted to recreate"
        r"|rate limited|reverted|rolled back|backed out|undid|switched back|not (?:merged|committed|applied)"
        r"|nothing (?:was )?(?:committed|merged|applied))\b"
    ),
    "de": _rx(
        r"(?:abgestürzt|kaputt|fehlgeschlagen|funktioniert nicht|fehler|zurückgerollt|rückgängig|zurückgesetzt"
        r"|nicht (?:committet|eingecheckt|gemergt))"
    ),
    "zh": re.compile(r"失败|报错|不行|崩|挂了|出错|无法|回滚|回退|还原|撤销|没提交|没有提交|编译不过"),
}
_CHATTER = {
    "en": frozenset(),
    "de": _words(
        "danke dir super passt ok okay moin hallo hi top prima gut alles klar tschüss bis morgen schön "
        "perfekt genau ja nein servus vielen dank das wars war es für heute "
    ),
    "zh": frozenset(),
}
_ZH_CHATTER = re.compile(
    r"^(?:好的|好嘞|好|谢谢|多谢|感谢|可以|收到|辛苦了|辛苦|嗯|行|没问题|你好|嗨|棒|不错|明白|了解|再见|拜拜|今天就到这里"
    r"|[，,。.!！~～\s]|\W)+$"
)
_GREETING = _rx(r"^(?:hi|hey|hello|morning|good morning|moin|hallo|servus|你好|嗨|早上好|大家好)\b[\s,!！，.]")

# Evidence of a concrete project fact: code, paths, commands, versions, tool-like names, a "we/our" subject.
_EVIDENCE = re.compile(
    r"`[^`]+`|(?:^|[\s(])[\w.\-]*/[\w.\-/]*|\b[\w\-]+\.(?:ya?ml|toml|json|py|ts|js|kt|kts|rs|go|exs?|tf|xml|md|ini|cfg)\b"
    r"|\b[A-Za-z]+\d[\w.\-]*\b|\b\d+(?:\.\d+)+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b|\b[A-Z]{2,}\b"
    r"|\b\w+[_\-]\w*|(?<=[a-z,;:] )[A-Z][a-z]{2,}\b|\b(?:we|our|us|wir|unser[emnrs]?)\b|我们"
    r"|\b\d+\s*(?:seconds?|minutes?|hours?|days?|ms|s|mb|gb"
    r"|sekunden|minuten|tage|天|秒|分钟|小时|次)\b"
)
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+#\-]*")


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """What one sentence does, per :func:`read_sentence`."""

    lang: Lang
    question: bool
    speculation: bool
    one_off: bool
    chatter: bool
    task_request: bool
    generic: bool
    modality: str | None  # constraint | convention | preference | decision | None
    correction_lead: bool
    change: bool
    lesson: bool
    evidence: int
    replaced: tuple[str, ...]


def read_sentence(sentence: str, lang: Lang | None = None) -> Reading:
    """Read one sentence.

    >>> r = read_sentence("我们用 uv 管理依赖，不要用 pip install 直接装包。")
    >>> r.lang, r.modality, r.task_request
    ('zh', 'constraint', False)
    """
    s = sentence.strip()
    lang = lang or language(s)
    words = re.findall(r"[\wäöüß]+", s.lower())
    if lang == "zh":
        chatter = bool(_ZH_CHATTER.match(s)) or not any(ch.isalnum() for ch in s)
    else:
        vocab = _CHATTER["de"]  # short German chatter often has no German function word ("super, danke")
        chatter = not any(ch.isalnum() for ch in s) or (
            bool(vocab) and len(words) <= 6 and all(w in vocab for w in words)
        )
    if _CONSTRAINT[lang].search(s):
        modality: str | None = "constraint"
    elif _PREFERENCE[lang].search(s):
        modality = "preference"
    elif _DECISION[lang].search(s):
        modality = "decision"
    elif _CONVENTION[lang].search(s):
        modality = "convention"
    else:
        modality = None
    if _PREFERENCE[lang].search(s):
        modality = "preference"
    replaced: list[str] = []
    for m in _REPLACED[lang].finditer(s):
        term = next((g for g in m.groups() if g), "").strip(" `'\".,-")
        if term and term.lower() not in ("the", "a", "an", "der", "die", "das", "den", "dem", "mehr", "nur"):
            replaced.append(term)
    evidence = len(_EVIDENCE.findall(s))
    if lang == "zh":
        evidence += len(_LATIN_WORD.findall(s)) + (1 if len(s) >= 12 else 0)
    return Reading(
        lang=lang,
        question=bool(_QUESTION[lang].search(s)),
        speculation=bool(_SPECULATION[lang].search(s)),
        one_off=bool(_ONE_OFF[lang].search(s)),
        chatter=chatter or bool(_GREETING.match(s + " ") and len(words) <= 4),
        task_request=bool(_TASK[lang].search(s)) and not _GENERIC[lang].search(s),
        generic=bool(_GENERIC[lang].search(s)),
        modality=modality,
        correction_lead=bool(_CORRECTION_LEAD[lang].search(s)),
        change=bool(_CHANGE[lang].search(s)),
        lesson=bool(_ATTEMPT[lang].search(s)) and bool(_FAILED[lang].search(s)),
        evidence=evidence,
        replaced=tuple(dict.fromkeys(replaced)),
    )


# ------------------------------------------------------------------------------------------------ whole statements
FROM_NOW_ON = _rx(r"\bfrom now on\b|\bgoing forward\b|\bab jetzt\b|\bvon nun an\b")
# The project lifecycle in German and Chinese (the English one is _patterns.LIFECYCLE).
LIFECYCLE_ML = re.compile(
    r"(?i)\b(?:ist|sind)\s+(?:\w+\s+){0,3}(?:produktiv|in produktion|live|im einsatz|in der beta|in entwicklung"
    r"|noch nicht veröffentlicht)\b|\b(?:echte|aktive|zahlende)\s+(?:nutzer|kunden)\b"
    r"|已经上线|已上线|生产环境|正式环境|内测|公测|开发阶段|还没(?:有)?发布|未发布|真实用户|线上用户"
)
_STAGES_ML = (
    (
        "production",
        re.compile(
            r"(?i)produktiv|in produktion|live|im einsatz|echte|zahlende"
            r"|已经上线|已上线|生产环境|正式环境|真实用户|线上用户"
        ),
    ),
    ("beta", re.compile(r"(?i)beta|内测|公测")),
    ("development", re.compile(r"(?i)in entwicklung|noch nicht veröffentlicht|开发阶段|还没(?:有)?发布|未发布")),
)


def lifecycle_stage_ml(text: str) -> str | None:
    """The lifecycle stage a German or Chinese lifecycle statement names (production, beta, development)."""
    if not LIFECYCLE_ML.search(text):
        return None
    return next((stage for stage, pattern in _STAGES_ML if pattern.search(text)), None)


SYSTEM_ML = re.compile(
    r"(?i)^\s*(?:du bist (?:ein|eine)\b[^.!?\n]{0,60}\b(?:assistent|agent|entwickler|ingenieur|ki|experte)"
    r"|你是(?:一个|一位|一名)?[^。！？\n]{0,30}(?:助手|工程师|开发者|专家|程序员|ai|AI))"
)
# Workflow moments every session meets: when work is done, what runs before commit/push/merge/release/deploy,
# what never lands on main or in the repository. Used by statements.is_mandatory.
WORKFLOW_GATE = re.compile(
    r"(?i)\bbefore (?:you |we )?(?:say|saying|call|calling|tell|telling|report|claim|mark|declare)\w*\b"
    r"|\b(?:before|until)\b[^.;]{0,40}\b(?:done|finished|complete[d]?|ready)\b"
    r"|\bbefore (?:every |each |any |you |a |the )?(?:commit|push|merg|pr\b|pull request|releas|deploy|apply|tag)"
    r"|\b(?:nothing|no task|a task) is (?:done|finished|complete)\b|\b(?:done|finished) until\b"
    r"|\bcall (?:anything|something|it) (?:done|finished)\b"
    r"|\b(?:push|commit|merge)\w* (?:directly |straight )?(?:to|on|into) (?:main|master|prod)\b|\bforce[- ]push"
    r"|\bcommit\w* (?:the |a |any |your )?(?:secrets?|\.env|credentials|keys|tokens)\b"
    r"|\b(?:apply|deploy)\w* (?:to |on )?prod\b"
    r"|\bbevor du (?:sagst|meldest)|\bvor jede[mn]? (?:commit|push|merge|„?fertig)|\berst wenn\b|\berledigt ist\b"
    r"|\bfertig ist\b|\bvor dem (?:commit|push|merge)"
    r"|完成之前|说完成|才算完成|才算|算完成|完成任务前|提交之前|提交前|合并之前|合并前|推送前|发布前|上线前"
)
