"""Language-aware reading of one user sentence: English, German, Chinese, Spanish, French, Portuguese, Italian and
Japanese cues (issue 16).

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

The cue tables per language are in :mod:`memstone.capture._cues`. Everything is regular expressions and word
lists over :mod:`memstone.capture._text` output: no model.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..domain.analyzer import is_cjk
from ._cues import (
    ATTEMPT,
    BOUNDED_NOW,
    CHANGE,
    CHATTER_WORDS,
    CONSTRAINT,
    CONVENTION,
    CORRECTION_LEAD,
    DECISION,
    FAILED,
    FUNCTION_WORDS,
    GENERIC,
    GREETING,
    JA_CHATTER,
    ONE_OFF,
    PREFERENCE,
    QUESTION,
    REPLACED,
    SESSION_OPENER,
    SESSION_PLAN,
    SESSION_START,
    SPECULATION,
    TASK,
    UNITS_WE,
    ZH_CHATTER,
    Cue,
    Lang,
)
from ._patterns import rx

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


@functools.cache
def _compiled(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def _cue(table: dict[Lang, Cue], lang: Lang) -> re.Pattern[str]:
    """The pattern of ``table`` for ``lang``, compiled on first use."""
    return _compiled(*table[lang])


_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9d]")
_LATIN_TOKEN = re.compile(r"(?<![\w])[a-zßà-öø-ÿœ]+(?![\w])")  # whole words: not the letters of a hex key
# Letters and elisions that tell the Latin-script languages apart where their function words are shared.
_MARKS: tuple[tuple[Lang, re.Pattern[str]], ...] = (
    ("de", re.compile(r"[äöüß]", re.I)),
    ("es", re.compile(r"[ñ¿¡]|\b\w+ción\b", re.I)),
    ("pt", re.compile(r"[ãõ]|\b\w+ção\b|\b\w+ções\b", re.I)),
    ("fr", re.compile(r"[èêëîœù]|\b(?:qu|j|n|c|s)'", re.I)),
    ("it", re.compile(r"[ìò]|\bè\b|\b\w+zione\b|\b(?:dell|nell|all|sull|un)'", re.I)),
)
_LATIN_LANGS: tuple[Lang, ...] = ("de", "es", "fr", "pt", "it")
_LATIN_READ: tuple[Lang, ...] = ("en", *_LATIN_LANGS)


def language(text: str) -> Lang:
    """``ja`` when CJK characters make up a fifth of the letters and kana is among them, ``zh`` when they do
    without kana; else the Latin-script language (``de``, ``es``, ``fr``, ``pt``, ``it``) whose function words
    and marks (umlauts, ``ñ``, ``ã``, elisions) outnumber English function words (at least two), else ``en``.

    >>> [language(s) for s in ("我们用 uv。", "テストは必ず通すこと。", "Los tests se ejecutan con Vitest.")]
    ['zh', 'ja', 'es']
    """
    letters = [ch for ch in text if ch.isalpha()]
    if letters and sum(1 for ch in letters if is_cjk(ch)) * 5 >= len(letters):
        return "ja" if _KANA.search(text) else "zh"
    words = _LATIN_TOKEN.findall(text.lower())
    en = sum(1 for w in words if w in FUNCTION_WORDS["en"])
    scores = {lang: sum(1 for w in words if w in FUNCTION_WORDS[lang]) for lang in _LATIN_LANGS}
    for lang, mark in _MARKS:
        if mark.search(text):
            scores[lang] += 1
    best = max(_LATIN_LANGS, key=lambda lang: scores[lang])  # first of equals: German, then Spanish, French, …
    return best if scores[best] >= 2 and scores[best] > en else "en"


# Evidence of a concrete project fact: code, paths, commands, versions, tool-like names, a "we/our" subject.
_EVIDENCE = re.compile(
    r"`[^`]+`|(?:^|[\s(])[\w.\-]*/[\w.\-/]*|\b[\w\-]+\.(?:ya?ml|toml|json|py|ts|js|kt|kts|rs|go|exs?|tf|xml|md|ini|cfg)\b"
    r"|\b[A-Za-z]+\d[\w.\-]*\b|\b\d+(?:\.\d+)+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b|\b[A-Z]{2,}\b"
    r"|\b\w+[_\-]\w*|(?<=[a-z,;:] )[A-Z][a-z]{2,}\b|\b(?:we|our|us|wir|unser[emnrs]?)\b|我们"
    r"|\b\d{1,2}:\d{2}\b|\b\d+\s*(?:seconds?|minutes?|hours?|days?|ms|s|mb|gb"
    r"|sekunden|minuten|tage|天|秒|分钟|小时|次)\b"
)
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+#\-]*")
# Words a replaced term is never: articles and particles the tables' term groups can catch.
_NOT_TERMS = frozenset(
    ("the", "a", "an", "der", "die", "das", "den", "dem", "mehr", "nur", "el", "la", "los", "las", "le", "les", "o",
     "os", "as", "il", "lo", "gli", "i", "un", "una", "une", "um", "uma", "de", "du", "do", "da")
)  # fmt: skip


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
        chatter = bool(ZH_CHATTER.match(s)) or not any(ch.isalnum() for ch in s)
    elif lang == "ja":
        chatter = bool(JA_CHATTER.match(s)) or not any(ch.isalnum() for ch in s)
    else:  # short chatter often has no function word of its language ("super, danke", "merci, parfait")
        chatter = not any(ch.isalnum() for ch in s) or (len(words) <= 6 and all(w in CHATTER_WORDS for w in words))
    greeting = bool(GREETING.match(s + " "))
    chatter = chatter or (greeting and (len(words) <= 4 or bool(SESSION_OPENER.search(s))))
    chatter = chatter or bool(SESSION_START.match(s))
    if _cue(CONSTRAINT, lang).search(s):
        modality: str | None = "constraint"
    elif _cue(DECISION, lang).search(s):
        modality = "decision"
    elif _cue(CONVENTION, lang).search(s):
        modality = "convention"
    else:
        modality = None
    if _cue(PREFERENCE, lang).search(s):
        modality = "preference"
    replaced: list[str] = []
    for m in _cue(REPLACED, lang).finditer(s):
        term = next((g for g in m.groups() if g), "").strip(" `'\".,-")
        if term and term.lower() not in _NOT_TERMS:
            replaced.append(term)
    evidence = len(_EVIDENCE.findall(s))
    if lang in ("zh", "ja"):  # no spaces: count the Latin words (tools, commands) and a sentence of some length
        evidence += len(_LATIN_WORD.findall(s)) + (1 if len(s) >= 12 else 0)
    if lang in UNITS_WE:
        evidence += len(_cue(UNITS_WE, lang).findall(s))
    generic = bool(_cue(GENERIC, lang).search(s))
    # What a sentence is not (a question, a guess, a one-off) is read with the cues of every Latin-script language:
    # a short line often has too few function words for language() to name it ("A lo mejor migramos a Astro").
    near = _LATIN_READ if lang in _LATIN_READ else (lang,)
    question = s.endswith(("?", "？")) or s.startswith("¿")
    if not question and any(_cue(QUESTION, other).search(s) for other in near):
        question = modality not in ("constraint", "decision")  # "Quando o CI falha, nunca …" is a rule
    plan = (bool(SESSION_PLAN.search(s)) or bool(BOUNDED_NOW.search(s))) and not generic
    return Reading(
        lang=lang,
        question=question,
        speculation=any(_cue(SPECULATION, other).search(s) for other in near),
        one_off=plan or any(_cue(ONE_OFF, other).search(s) for other in near),
        chatter=chatter,
        task_request=bool(_cue(TASK, lang).search(s)) and not generic and modality != "preference",
        generic=generic,
        modality=modality,
        correction_lead=bool(_cue(CORRECTION_LEAD, lang).search(s)),
        change=bool(_cue(CHANGE, lang).search(s)),
        lesson=bool(_cue(ATTEMPT, lang).search(s)) and bool(_cue(FAILED, lang).search(s)),
        evidence=evidence,
        replaced=tuple(dict.fromkeys(replaced)),
    )


# ------------------------------------------------------------------------------------------------ whole statements
FROM_NOW_ON = rx(
    r"\bfrom now on\b|\bgoing forward\b|\bab jetzt\b|\bvon nun an\b|\ba partir de ahora\b|\bde ahora en adelante\b"
    r"|\bà partir de maintenant\b|\bdésormais\b|\bdorénavant\b|\ba partir de agora\b|\bdaqui em diante\b"
    r"|\bd'ora in (?:poi|avanti)\b|\bda (?:ora|adesso) in poi\b|今後|これからは|以降は"
)
# The project lifecycle in the other languages (the English one is _patterns.LIFECYCLE).
LIFECYCLE_ML = re.compile(
    r"(?i)\b(?:ist|sind)\s+(?:\w+\s+){0,3}(?:produktiv|in produktion|live|im einsatz|in der beta|in entwicklung"
    r"|noch nicht veröffentlicht)\b|\b(?:echte|aktive|zahlende)\s+(?:nutzer|kunden)\b"
    r"|已经上线|已上线|生产环境|正式环境|内测|公测|开发阶段|还没(?:有)?发布|未发布|真实用户|线上用户"
    r"|\b(?:está|están|estamos|sigue|seguimos|estão|é|è|sono|siamo|est|sont)\s+(?:\w+\s+){0,2}?"
    r"(?:en|em|in)\s+(?:producción|produção|produzione|production|beta|bêta|desarrollo|desenvolvimento|sviluppo"
    r"|développement)\b|\b(?:usuarios|usuários|utilizadores|utilisateurs|utenti|clientes|clients|clienti)\s+"
    r"(?:reales|reais|réels|reali|de pago|pagantes|payants|paganti)\b"
    r"|本番(?:運用|稼働)|運用中|稼働中|ベータ(?:版|中|テスト)|開発中|未リリース|リリース前|まだリリースしていな"
    r"|実際の?(?:ユーザー|利用者)|実ユーザー|実際に使って"
)
# Explicit stage words first, then "real users" (a beta with real users is a beta).
_STAGES_ML: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "development",
        re.compile(
            r"(?i)\b(?:no|não)\s+(?:está|estão|estamos)\s+(?:\w+\s+)?(?:en|em)\s+(?:producción|produção)"
            r"|\bn'(?:est|sommes) pas (?:encore )?en production|\bnon (?:è|siamo) (?:ancora )?in produzione"
        ),
    ),
    (
        "production",
        re.compile(
            r"(?i)produktiv|in produktion|live|im einsatz|已经上线|已上线|生产环境|正式环境"
            r"|producción|produção|produzione|production|本番(?:運用|稼働)|運用中|稼働中"
        ),
    ),
    ("beta", re.compile(r"(?i)beta|bêta|内测|公测|ベータ")),
    (
        "development",
        re.compile(
            r"(?i)in entwicklung|noch nicht veröffentlicht|开发阶段|还没(?:有)?发布|未发布|desarrollo|desenvolvimento"
            r"|sviluppo|développement|開発中|未リリース|リリース前|まだリリースしていな"
        ),
    ),
    (
        "production",
        re.compile(r"(?i)echte|zahlende|真实用户|线上用户|reales|reais|réels|reali|payants|実ユーザー|実際"),
    ),
)

_ROLE = (
    r"du bist (?:ein|eine)\b[^.!?\n]{0,60}\b(?:assistent|agent|entwickler|ingenieur|ki|experte)"
    r"|你是(?:一个|一位|一名)?[^。！？\n]{0,30}(?:助手|工程师|开发者|专家|程序员|ai|AI)"
    r"|(?:eres|sé|actúa como)\s+(?:un|una)\b[^.!?\n]{0,60}\b(?:asistente|agente|desarrollador|ingeniero|experto"
    r"|programador|ia)"
    r"|(?:tu es|vous êtes|agis comme)\s+(?:un|une)\b[^.!?\n]{0,60}\b(?:assistant|agent|développeur|ingénieur"
    r"|expert|ia)"
    r"|(?:você é|tu és|és|aja como)\s+(?:um|uma)\b[^.!?\n]{0,60}\b(?:assistente|agente|desenvolvedor|programador"
    r"|engenheiro|especialista|ia)"
    r"|(?:sei|agisci come)\s+(?:un|una|uno)\b[^.!?\n]{0,60}\b(?:assistente|agente|sviluppatore|ingegnere|esperto"
    r"|programmatore|ia)"
    r"|あなたは[^。！？\n]{0,40}(?:アシスタント|エンジニア|開発者|専門家|プログラマー?|AI)"
)
# Prompt boilerplate: "be concise" together with "follow the repository's conventions", in any language.
_CONCISE = (
    r"be concise|keep (?:your )?answers (?:short|brief)|answer (?:briefly|concisely)|fasse dich kurz"
    r"|antworte (?:kurz|knapp)|简洁|简短|sé conciso|responde (?:de forma |de manera )?(?:concisa|breve)"
    r"|sois concis|réponds (?:de façon |de manière )?(?:concise|brève)|seja conciso|sê conciso"
    r"|responde (?:de forma )?concisa|sii conciso|rispondi (?:in modo )?(?:conciso|breve)|簡潔に|手短に"
)
_FOLLOW = (
    r"(?:repository|repo|project|coding) (?:conventions|guidelines)|konventionen des (?:repos|repositorys|projekts)"
    r"|仓库的规范|项目的规范|convenciones del (?:repositorio|repo|proyecto)|conventions du (?:dépôt|projet|repo)"
    r"|convenções do (?:repositório|repo|projeto)|convenzioni del (?:repository|repo|progetto)"
    r"|リポジトリの(?:規約|ルール)|プロジェクトの(?:規約|ルール)"
)
SYSTEM_ML = re.compile(rf"(?is)^\s*(?:{_ROLE})|^(?=.*(?:{_CONCISE}))(?=.*(?:{_FOLLOW}))")
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
    r"|\bantes de (?:cada |hacer |fazer |un |um |el |o )?(?:commit|push|merge|pr\b|despleg|despliegue|deploy|publicar)"
    r"|\bavant (?:chaque |le |un |de )?(?:commit|push|merge|pr\b|déploi|déployer|livr)"
    r"|\bprima di (?:ogni |fare |un |il )?(?:commit|push|merge|pr\b|deploy|rilasci)"
    r"|\bn'est terminée? que|\bterminad[oa] hasta\b|\b(?:só|apenas) (?:está|fica) (?:pront|concluíd|terminad)"
    r"|(?:コミット|プッシュ|マージ|デプロイ|リリース)(?:の)?前に|(?:完了|終わった)と(?:言う|報告する)前に"
)


def lifecycle_stage_ml(text: str) -> str | None:
    """The lifecycle stage a lifecycle statement in another language than English names (production, beta,
    development)."""
    if not LIFECYCLE_ML.search(text):
        return None
    return next((stage for stage, pattern in _STAGES_ML if pattern.search(text)), None)
