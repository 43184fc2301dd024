"""Four junk shapes read by what a sentence predicates, in every capture language (issue 16, capobv).

The held-out writers' junk was not the dev shape ("X is in path/"), so these rules read the *predicate* of a
sentence, not its words about a project:

- **obvious** (Graphit: do not store what anyone reads from the repository at a glance): a sentence whose
  predicate is *existence* of a repository artifact ("there's a Dockerfile", "c'è un Dockerfile", "有一个
  Makefile"), *attribution to a file* ("the README says …", "nel file application.properties la porta è 8080",
  "README 里写着 …"), *what the project is made with* ("the project is written in Java with Quarkus", "il progetto
  usa Maven", "テストは RSpec で書かれています") or a *count or enumeration of its parts* ("we have 212 unit
  tests", "il database ha sei tabelle: …", "数据库一共有十二张表"). The caller only asks when the sentence has no
  modality of its language (must/never/always, a decision, a preference); here a *reason* ("because", "perché",
  "因为", "ので") also keeps it, since a fact with a reason is not visible at a glance;
- **one_off**: a deictic determiner on a unit of work ("for this PR", "per questa modifica", "pour cette
  correction", "这个改动", "この修正") or "just this once" in any language, unless the sentence is generic
  ("every PR …");
- **chatter**: the speaker's own whereabouts or activity this minute, or a request to wait ("我先去吃个饭",
  "今デプロイ中です、少々お待ちください", "hang on, I'm checking the logs");
- **system_restatement**: the sentence addresses the agent about its own conversational behaviour in general
  (answering, asking for clarification, following the user's instructions, not inventing things) and names
  nothing of the project: at least two such terms and no code span, path or file name.

Closed word classes only (copulas, existence verbs, verbs of saying, part nouns, number words); no project's words.
"""

from __future__ import annotations

import re

from ._descriptive import is_bare_count, is_bare_equation, is_time_bound_request
from ._general import is_general_knowledge, korean_reason
from ._language import read_sentence
from ._obvious import _FILE_NAME, is_location
from ._patterns import CJK, CONSTRAINT, word_set

__all__ = ["glance_reason"]

# A reason makes a fact more than what the repository shows ("8443 because the firewall blocks the rest").
_REASON = re.compile(
    r"(?i)\b(?:because|since|so that|otherwise|due to|perché|poiché|siccome|altrimenti|parce que|car|sinon|puisque"
    r"|porque|ya que|si no|de lo contrario|pois|senão|caso contrário|weil|da sonst|sonst|damit|denn)\b"
    r"|因为|由于|否则|所以|为了|以免|ので|ため|から[、。]|ないと"
)
_ARTIFACT = (
    r"(?:dockerfile|makefile|justfile|procfile|gemfile|jenkinsfile|readme|changelog|docker-compose|workflows?"
    r"|pipeline|folders?|director(?:y|ies)|dossiers?|répertoires?|cartell[ae]|carpetas?|pastas?|ordner|verzeichnis"
    r"|config(?:uration)? files?|目录|文件夹|文件|ディレクトリ|フォルダ|ファイル)"
)
_EXISTS = re.compile(
    r"(?i)\b(?:there(?:'s| is| are)|we (?:have|got)|c'è|ci sono|il y a|hay|há|existe|es gibt|gibt es)"
    r"\s+(?:\w+\s+){0,2}?"
    rf"`?(?:{_ARTIFACT}|[\w\-]+\.(?:ya?ml|json|toml|xml|ini|cfg|conf|md|kts|gradle|lock|txt)\b|[\w.\-]+/)"
    rf"|(?:里|中|下|内)?有(?:一个|一份|个|一些|两个|三个)?\s*(?:{_ARTIFACT}|[A-Za-z][\w.\-]*)"
    r"|(?:(?<=[A-Za-z0-9_.\-])|ディレクトリ|フォルダ|ファイル)\s*(?:が|も)(?:あります|ある|存在します)"
    # what a folder holds, or that the project holds a folder ("A pasta infra/ tem os arquivos do Terraform")
    r"|(?<![\w.\-/`])`?[\w.\-]+/[\w./\-]*`?\s+(?:has|holds|contains|tem|contém|contient|contiene|tiene|ha"
    rf"|enthält|hat)\b|\b(?:project|repo|repository|projet|dépôt|proyecto|repositorio|projeto|repositório|progetto"
    rf"|projekt)\s+(?:has|contains|contient|a|tiene|contiene|tem|contém|ha|hat|enthält)\s+(?:\w+\s+)?`?"
    rf"(?:{_ARTIFACT}|[\w\-]+\.[a-z]\w{{0,9}}`)"
)
_SAYS = re.compile(
    r"(?i)\b(?:readme|changelog|contributing|the docs|the wiki|manifest|[\w\-]+\.(?:json|ya?ml|toml|properties|ini"
    r"|cfg|conf|xml|gradle|lock|env|md))\b[^.;。]{0,24}?\b(?:says?|states?|lists?|describes?|mentions?|shows?"
    r"|explains?|tells?|dice|indica|elenca|riporta|spiega|descrive|dit|indique|liste|décrit|explique|sagt|beschreibt|listet|nennt|defines?|declares?|définit|déclare"
    r"|definiert|deklariert|dichiara|definisce|declara|define"
    r"|menciona|explica|diz|descreve|mostra)\b"
    r"|\b(?:according to|stando a|secondo|d'après|selon|según|segundo|laut)\s+(?:the\s+|il\s+|le\s+|el\s+|o\s+)?"
    r"(?:readme|docs?|manifest|[\w\-]+\.\w+)\b"
    # "Nel file application.properties la porta HTTP è 8080.": a setting read off a config file, and nothing else
    r"|^(?:in|nel|nella|dans|en|no|na|im|in der)\s+(?:the\s+|le\s+|el\s+|o\s+|a\s+|der\s+)?(?:file\s+|fichier\s+"
    r"|archivo\s+|fichero\s+|arquivo\s+|datei\s+)?[\w./\-]*[\w\-]\.[A-Za-z]\w{0,9}\b,?\s+[^,;]{0,40}\d[^,;]{0,12}"
    r"[.。]?$"
    r"|(?:README|文档|配置文件?|[A-Za-z0-9_\-]+\.[A-Za-z]\w*)\s*(?:里|中|上)?\s*(?:写着|写了|写的是|说|列出|列了)"
    r"|(?:README|ドキュメント|[A-Za-z0-9_\-]+\.[A-Za-z]\w*)\s*(?:に|には)[^。]{0,30}(?:書いて|書かれて|記載)"
)
_MADE_WITH = re.compile(
    r"(?i)^(?:the |this |our |il |lo |la |l'|le |les |el |los |las |o |os |das |die |der |i |gli )?"
    r"(?:project|repo|repository|codebase|app|application|backend|frontend|tests?|test suite|ci|build|progetto"
    r"|repository|applicazione|projet|dépôt|appli(?:cation)?|proyecto|repositorio|aplicación|pruebas|projeto"
    r"|repositório|aplicação|testes|projekt|repo|anwendung|frontend|backend)\s+"
    r"(?:(?:is|are) (?:written|built|made) (?:in|with|on)|uses|is|are|runs on|está hech[oa] (?:en|con)"
    r"|est fait(?:e)? (?:en|avec)|è fatt[oa] (?:in|con)|é feit[oa] (?:em|com)|ist (?:mit|in) \S+ (?:gebaut|geschrieben)"
    r"|(?:est|sont) écrit(?:e|s|es)? (?:en|avec)|(?:es|son|está|están) escrit[oa]s? (?:en|con)|(?:è|sono) scritt[oaie]"
    r" (?:in|con)|(?:é|são) escrit[oa]s? (?:em|com)|usa|utilizza|gira su|est écrit en|utilise"
    r"|tourne sur|est|está escrito en|usa|utiliza|corre en|es|é escrito em|roda em|é|ist in|nutzt|verwendet|läuft"
    r" auf|ist)\b"
    r"|^(?:この)?(?:リポジトリ|プロジェクト|アプリ|テスト|CI)は.{1,30}(?:で書かれて|を使って|を使用して|で動いて|で作られて)"
    r"|^(?:这个|本)?(?:项目|仓库|代码|测试|CI|前端|后端)(?:是|用的是)?(?:用|使用|基于|跑在)?\s*[A-Za-z][\w.\- ]{0,30}"
    r"(?:写的|编写|开发|构建)?[。.]?$"
)
_NUMBER = (
    r"\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|due|tre|quattro|cinque|sei|sette|otto|nove"
    r"|dieci|dodici|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|douze|dos|tres|cuatro|cinco|seis|siete|ocho"
    r"|nueve|diez|doce|dois|duas|três|quatro|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|zwölf"
)
_PART = (
    r"(?:unit |integration |e2e )?(?:tables?|services?|microservices?|modules?|tests?|endpoints?|routes?|screens?"
    r"|pages?|packages?|apps?|applications?|crates?|files?|migrations?|components?|models?|jobs?|workers?|settings?"
    r"|tabelle|servizi|moduli|test|pagine|pacchetti|applicazioni|tables|modules|applications|écrans|tablas"
    r"|servicios|módulos|pantallas|paquetes|aplicaciones|tabelas|serviços|telas|pacotes|tabellen|dienste|module"
    r"|pakete|seiten)"
)
_COUNT = re.compile(
    rf"(?i)\b(?:there (?:are|is)|we have|we've got|has|have|ha|hanno|contiene|a|ont|contient|tiene|tienen|tem|têm"
    rf"|hat|haben|enthält|ci sono|il y a|hay|há|es gibt)\s+(?:(?:only|just|about|around|exactly|solo|seulement|unos"
    rf"|cerca de|etwa)\s+)?(?:{_NUMBER})\s+(?:\w+\s+)?{_PART}\b"
    rf"|\b(?:there (?:are|is)|we have)\s+(?:about\s+|around\s+)?(?:{_NUMBER})\s+of them\b"
    rf"|\b(?:{_NUMBER})\s+(?:[\w\-]+\s+){{0,2}}[\w\-]+\s*:\s*[^,:]+,[^,:]+(?:,|\band\b|\by\b|\bet\b|\be\b|\bund\b)"
    r"|(?:一共|总共|共|有)\s*(?:有)?\s*[\d一二两三四五六七八九十百]+\s*(?:个|张|套|份|条)"
    r"|(?:分成|分为|包括|包含|由).{0,60}[\d一二两三四五六七八九十]+\s*(?:个|张|套|份|条|层)"
    r"|[\d一二三四五六七八九十]+\s*(?:つ|個|本|枚|件)(?:です|あります|ある)"
)
_ONE_OFF_SCOPE = re.compile(
    r"(?i)\b(?:for|in|on) (?:this|the current) (?:pr|change|fix|ticket|task|commit|branch|patch|diff|bug|issue"
    r"|feature|story|release|demo|spike|hotfix|experiment)\b"
    r"|\b(?:per|in|su|con) quest[oa] (?:modifica|correzione|fix|pr|branch|ticket|task|commit|rilascio|patch|bug|demo"
    r"|attività)\b"
    r"|\b(?:pour|dans|sur) (?:cette|ce) (?:modification|correction|fix|pr|branche|ticket|tâche|commit|version|patch"
    r"|bug|démo)\b"
    r"|\b(?:para|en|con) (?:este|esta) (?:cambio|arreglo|fix|pr|rama|ticket|tarea|commit|parche|bug|demo)\b"
    r"|\b(?:para|em|nest[ea]|com) (?:est[ea]|ess[ea])? ?(?:mudança|alteração|correção|fix|pr|branch|tarefa|commit"
    r"|bug|demo)\b"
    r"|\b(?:für|in|bei) (?:diese[nrms]?) (?:änderung|fix|pr|branch|ticket|aufgabe|commit|patch|bug|demo)\b"
    r"|\b(?:just|only) this once\b|\bjuste (?:pour )?cette fois\b|\bsolo (?:por )?esta vez\b|\bsolo per questa volta\b"
    r"|\bsó desta vez\b|\bnur dieses (?:eine )?mal\b"
    r"|(?:这次|这个|本次)\s*(?:改动|修改|PR|提交|分支|需求|bug|任务|修复)|只这一次"
    r"|この\s*(?:変更|修正|PR|ブランチ|チケット|タスク|コミット)(?:で|では|だけ|に)|今回(?:だけ|は)"
)
_AGENT_TERMS = re.compile(
    r"(?i)\byour (?:answers?|responses?|replies|reasoning|explanations?|output)\b|\byou have access to\b"
    r"|\bmarkdown\b|\b(?:the user'?s?|users' instructions|instructions|clarification|clarify|answer(?:s|ing)?"
    r"|respond|reply|replies|make up|made up|invent|fabricate|hallucinate|honest|uncertainty|step by step"
    r"|l'utente|istruzioni|chiarimenti|rispondere|rispondi|risposta|inventare|inventa|onesto"
    r"|l'utilisateur|consignes|précisions|répondre|réponds|réponse|inventer|invente|fabrique|honnête"
    r"|el usuario|instrucciones|aclaraciones|responder|responde|respuesta|inventar|inventes|honesto"
    r"|o usuário|instruções|esclarecimentos|resposta|invente|honesto"
    r"|der nutzer|den nutzer|anweisungen|rückfragen|antworte|antworten|antwort|erfinde|erfinden|ehrlich)\b"
    r"|用户的?(?:指示|指令|要求)|回答|回复|答复|编造|捏造|澄清|ユーザーの(?:指示|依頼)|回答|答え|でっち上げ|捏造|確認してから"
    # the agent asked to ask first, or to act as someone, in any language (capjunk8)
    r"|\b(?:ask me|act as|behave as|pregúntame|actúa como|demande-moi|agis comme|comporte-toi comme|frag mich"
    r"|verhalte dich wie|chiedimi|comportati come|pergunte-me|me pergunte|aja como|inventarti|inventarte|t'invente)\b"
    r"|先问我|问我|自己猜|瞎猜|私に(?:聞いて|確認して)|답변|대답|질문해|지어내|추측하지"
)
# The speaker's own whereabouts or what they are doing this minute, or a request to wait: status chatter.
_STATUS_NOW = re.compile(
    r"(?i)\b(?:wait a (?:sec|second|moment|minute)|hang on|give me a (?:sec|second|minute|moment)|brb|be right back"
    r"|i'?m (?:still |just |currently )?(?:looking|checking|working|waiting|deploying|running|grabbing|heading)\b"
    r"|un (?:attimo|momento|instant|momentito)|attends|warte kurz|moment bitte|next up is|i'?m (?:now )?on the)\b"
    r"|^(?:quick |short )?(?:progress|update|status)\s*:"
    r"|^我(?:先|现在|正在|在)?(?:去|正在|在看|在跑|在查)|稍等|等一下|等我一下|回来(?:再)?继续"
    r"|(?:少々|しばらく|ちょっと)お待ち|待ってください|今\S{0,12}中です|中なので"
)
_PROJECT_EVIDENCE = re.compile(r"`[^`]*`|(?:[\w.\-]+/)+[\w.\-]*")


# Words that may follow "is written in / uses" beside the names themselves ("… with Quarkus as the build tool").
_GLUE = word_set(
    "with and as the a an for its version build tool tools framework language runtime come con e il lo la di "
    "comme avec et le les de du como y el los las del com e o os da do als und mit der die das den version "
    "versione versión versão outil strumento herramienta ferramenta werkzeug un una uno une ein eine um uma en "
    "para per pour für"
)


def _made_with(text: str) -> bool:
    m = _MADE_WITH.search(text)
    if m is None:
        return False
    if CJK.search(m.group(0)):
        return True
    rest = _PROJECT_EVIDENCE.sub(" ", text[m.end() :])
    words = re.findall(r"[^\W\d_][\w'\-]*", rest)
    named = any(w[0].isupper() for w in words) or bool(re.search(r"\d", rest))
    common = [w for w in words if w[0].islower() and w.lower() not in _GLUE]
    return named and len(common) <= 1


# What a file or a code symbol of the repository holds, sets or returns, read off it: a file name, `x()`, a
# backticked name or a CamelCase name as the subject (after an optional "the file", "la fonction", "il modello"),
# then a verb of holding, defining, setting or returning in each language ("Il file appsettings.json contiene …",
# "La fonction seuil() renvoie un booléen", "OrderController の store メソッドは 80 行あります", "X.java 里定义了 …").
_ART_NOUN = (
    r"file|fichier|fichero|archivo|arquivo|datei|function|fonction|función|funzione|função|funktion|method|méthode"
    r"|método|metodo|methode|class|classe|clase|klasse|module|modulo|módulo|modul|model|modello|modèle|modelo|modell"
)
_ART_NAME = r"(?:`[^`\s]+`|[\w.\-/]*[\w\-]\.[A-Za-z]\w{0,9}|\w+\(\)|[A-Z][a-z]+[A-Z]\w*)"
_ARTIFACT_SAYS = re.compile(
    rf"^(?i:(?:the|il|lo|la|l'|le|el|o|a|der|die|das)\s*)?(?i:(?:{_ART_NOUN})\s+)?{_ART_NAME}\s+(?:\w+\s+)?"
    r"(?i:contains?|defines?|returns?|sets?|imports?|exports?|declares?|configures?|holds?|has|contiene|define"
    r"|devuelve|retorna|establece|tiene|contient|définit|renvoie|retourne|fixe|a|enthält|definiert|setzt|hat"
    r"|definisce|restituisce|ritorna|imposta|ha|contém|devolve|configura|tem)\b"
    rf"|^{_ART_NAME}\s*(?:の\s*\S+\s*)?(?:は|には|では)\S{{0,30}}(?:を返します|を返す|を定義しています|が入っています"
    r"|行あります|に分かれています)|^" + _ART_NAME + r"\s*(?:里|中|下面)?(?:返回|定义了|里面是|包含)"
)
_COMMAND_SPAN = re.compile(r"`[^`]*\s[^`]*`|`[^`.]*`")


def _obvious_clause(text: str) -> bool:
    if _SAYS.search(text) or _COUNT.search(text) or (";" not in text and _ARTIFACT_SAYS.search(text)):
        return True
    if _COMMAND_SPAN.search(text):  # a command says how, not only what there is; a bare `file.kts` is a name
        return False
    return bool(_EXISTS.search(text)) or _made_with(text)


# Clauses: at a comma or semicolon, or at "and" before a new subject ("… con Litestar y el frontend está hecho …").
_CLAUSE = re.compile(
    r"[,;，；]\s*|\s+(?:and|y|et|e|und)\s+(?=(?:the|el|la|le|il|lo|los|las|les|o|a|os|as|der|die|das|l')\b)"
)


def _obvious(text: str) -> bool:
    if _REASON.search(text):
        return False
    if _obvious_clause(text):
        return True
    clauses = [c for c in _CLAUSE.split(text.strip(" .。")) if c and c.strip()]
    return len(clauses) >= 2 and all(_obvious_clause(c) or is_location(c) for c in clauses)


def glance_reason(text: str, *, states_rule: bool) -> str | None:
    """The junk reason (``obvious``, ``one_off``, ``system_restatement``, ``chatter``) of one statement, or None.

    ``states_rule``: the sentence carries a modality of its language (the caller's reading); a rule is never
    obvious.

    >>> glance_reason("Il progetto usa Maven come build tool.", states_rule=False)
    'obvious'
    >>> glance_reason("In produzione la porta è 8443 perché il firewall blocca le altre.", states_rule=False)
    >>> glance_reason("Per questa modifica tocca solo il modulo quality.", states_rule=True)
    'one_off'
    """
    if _ONE_OFF_SCOPE.search(text) and not read_sentence(text).generic:
        return "one_off"
    if is_time_bound_request(text):
        rd = read_sentence(text)
        if not (rd.change or rd.correction_lead):
            return "one_off"
    agent = {m.group(0).lower() for m in _AGENT_TERMS.finditer(text)}
    if len(agent) >= 2 and not _PROJECT_EVIDENCE.search(text) and not _FILE_NAME.search(text):
        return "system_restatement"
    if not states_rule and (_obvious(text) or (is_bare_equation(text) and not _REASON.search(text))):
        return "obvious"
    # a count is read as "generic" in Japanese ("全部で"): only a modality of its own language keeps it
    rule = ("constraint", "decision", "preference")
    if is_bare_count(text) and not _REASON.search(text) and read_sentence(text).modality not in rule:
        return "obvious"
    if not states_rule and _STATUS_NOW.search(text) and not _REASON.search(text):
        return "chatter"
    modal = bool(CONSTRAINT.search(text)) or read_sentence(text).modality in rule
    if is_general_knowledge(text, states_rule=states_rule, modal=modal):
        return "obvious"
    return korean_reason(text)
