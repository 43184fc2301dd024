"""The per-language cue tables :mod:`memstone.capture._language` reads sentences with (issue 16).

One entry per language and function: the words a native speaker uses to ask, to guess, to give an instruction
for the current task only, to make a rule (must/never, we-do, I-prefer, we-decided), to correct, to report a
change of state and what it replaced, to tell of a failed or reverted attempt, to chat or greet; and the
function words that tell the Latin-script languages apart. English, German, Chinese, Spanish, French, Portuguese,
Italian and Japanese. Regular expressions and word lists only: no model.
"""

from __future__ import annotations

import re
from typing import Literal

from ._patterns import rx, word_set

Lang = Literal["en", "de", "zh", "es", "fr", "pt", "it", "ja"]

__all__ = [
    "ATTEMPT",
    "BOUNDED_NOW",
    "CHANGE",
    "CHATTER_WORDS",
    "CONSTRAINT",
    "CONVENTION",
    "CORRECTION_LEAD",
    "DECISION",
    "FAILED",
    "FUNCTION_WORDS",
    "GENERIC",
    "GREETING",
    "JA_CHATTER",
    "ONE_OFF",
    "PREFERENCE",
    "QUESTION",
    "REPLACED",
    "SESSION_OPENER",
    "SESSION_PLAN",
    "SESSION_START",
    "SPECULATION",
    "TASK",
    "UNITS_WE",
    "ZH_CHATTER",
    "Cue",
    "Lang",
]


# A cue is a pattern and its flags, compiled when first read (``memstone.capture._language.cue``): a hook process
# meets one or two languages, and compiling every table of all eight would cost it tens of milliseconds.
Cue = tuple[str, int]


def _i(pattern: str) -> Cue:
    return pattern, re.I


def _c(pattern: str) -> Cue:
    return pattern, 0


# ------------------------------------------------------------------------------------------------ detection
# Function words per Latin-script language; a word several languages share counts for each of them.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": word_set(
        "the a an and is are not we with for on to of at as in also only will be was were always never every "
        "all but or if that because otherwise no it i you please more still our they this these those"
    ),
    "de": word_set(
        "der die das den dem des und ist sind nicht wir mit für auf ein eine einen einem zu von bei als im "
        "auch nur wird werden wurde immer nie niemals jeder jede jedes alle aber oder wenn dass weil sonst "
        "kein keine keinen sich es ich du bitte mehr noch schon läuft laufen über unter nach vor ohne statt "
        "inzwischen mittlerweile gibt hier heute jetzt dürfen darf muss müssen soll sollen wer will etwas zum zur "
        "durch vom niemand"
    ),
    "es": word_set(
        "el la los las un una unos unas y que de del al en con por para es son está están se lo le les su sus "
        "pero como más muy también ya hay este esta estos estas eso esto nunca siempre todo todos todas cada "
        "usamos ahora después sin sobre entre porque cuando donde desde hasta hace debe deben nosotros nuestro "
        "nuestra nuestros nuestras favor gracias ni nada ningún ninguna hoy mañana van va no me mi te estoy estamos "
        "somos tengo tenemos hay vez tal algo otro otra mismo aquí así bien mejor"
    ),
    "pt": word_set(
        "o os a as um uma uns umas e que de do da dos das ao aos no na nos nas em com por para pelo pela é são "
        "está estão não se seu sua seus suas mas como mais muito também já há este esta isso isto nunca sempre "
        "todos todas cada usamos agora depois sem sobre entre porque quando onde desde até pode deve devem nós "
        "nosso nossa nossos nossas você obrigado obrigada ficam fica foi foram num numa nenhum nenhuma me meu minha "
        "tenho temos estou estamos aqui assim bem melhor vez algo outro outra mesmo"
    ),
    "it": word_set(
        "il lo la i gli le un una uno e che di del della dei degli delle al allo alla ai agli alle in con per "
        "da dal dalla è sono non si ci ma come più molto anche già essere questo questa questi queste quello "
        "sempre mai tutto tutti tutte ogni abbiamo usiamo adesso ora dopo senza su tra fra perché quando dove "
        "fino deve devono noi nostro nostra nostri nostre grazie niente nessun nessuna l dell nell all sull mi ho ha "
        "hanno sto qui così bene meglio volta qualcosa altro altra stesso"
    ),
    "fr": word_set(
        "le la les un une des et ou que qui de du au aux en dans avec par pour sur est sont pas ne n se ce cet "
        "cette ces il elle on nous vous ils mais comme plus très aussi déjà être jamais toujours tout tous "
        "toutes chaque avons maintenant après sans entre parce quand où depuis faire peux doit doivent notre nos "
        "merci voici voilà l d qu j c aucun aucune je me mon ma ai ont suis sommes ici ainsi bien mieux fois quelque "
        "autre même"
    ),
}

# ------------------------------------------------------------------------------------------------ per language
_T = r"[\w.\-/`']+"  # one term a change replaced (a tool, a path, a name)
_ART = r"(?:(?:el|la|los|las|le|les|o|a|os|as|il|lo|gli|i|do|da|del|du)\s+|l'|d')?"

QUESTION: dict[Lang, Cue] = {
    "en": _i(r"\?\s*$"),
    "de": _i(
        r"\?\s*$|^(?:kannst|könntest|würdest|weißt|hast|gibt es|wie|was|warum|wo|wann|welche[rsnm]?)\b.*(?:\?|[^.!]$)"
    ),
    "zh": _c(r"[?？]\s*$|吗[。.]?$|呢[。.]?$|^(?:为什么|怎么|是不是|有没有|哪)|有没有\S{0,12}$"),
    # An interrogative word (or "do you know where …") opening a sentence without a closing period.
    "es": _i(
        r"\?\s*$|^¿|^(?:dónde|cuándo|cómo|por qué|qué|cuál|cuáles|cuánto|cuántos|quién|(?:tú )?sabes (?:si|dónde|cómo"
        r"|qué|cuál)|me (?:recuerdas|dices))\b.*[^.!]$"
    ),
    "fr": _i(
        r"\?\s*$|^(?:est-ce que|qu'est-ce qu)|^(?:où|quand|comment|pourquoi|quel(?:le)?s?|combien|qui|(?:tu|vous) "
        r"(?:sais|savez|peux|pouvez)|sais-tu|savez-vous|peux-tu|pouvez-vous)\b.*[^.!]$"
    ),
    "pt": _i(
        r"\?\s*$|^será que\b|^(?:onde|quando|como|por ?que|qual|quais|quanto|quantos|quem|o que|(?:você|tu) "
        r"(?:sabe|sabes|pode|podes)|sabe(?:s)? (?:se|onde|como|qual))\b.*[^.!]$"
    ),
    "it": _i(
        r"\?\s*$|^(?:dove|quando|come|perché|quale|quali|quanto|quanti|chi|cosa|che cosa|sai (?:se|dove|come))"
        r"\b.*[^.!]$"
    ),
    "ja": _c(
        r"[?？]\s*$|(?:です|ます|でしょう|ません|ました|だろう|ない)か[。.]?\s*$|っけ[。.]?\s*$|かな[。.]?\s*$"
        r"|(?:なぜ|なんで|どうして|どこ|いつ|どれ|どの|どう|何|なに)[^。]*(?:でしょう|のか|んだろう|の|か)[。.]?\s*$"
    ),
}
SPECULATION: dict[Lang, Cue] = {
    "en": _i(
        r"\b(?:maybe|perhaps|possibly|probably|might|i think|i guess|i suspect|i wonder|not sure|someday|eventually"
        r"|could try|worth (?:looking|trying)|my guess is|i have a feeling|i'?d say|i reckon|my hunch|in my opinion"
        r"|could be|can'?t rule out)\b"
    ),
    "de": _i(
        r"\b(?:vielleicht|eventuell|wahrscheinlich|möglicherweise|vermutlich|irgendwann|ich glaube|ich denke"
        r"|ich vermute|ich schätze|bin mir (?:aber )?nicht sicher|könnte|könnten|lohnt sich|ich habe das gefühl"
        r"|meiner meinung nach|kann sein|ich tippe auf|nicht auszuschließen|sieht so aus, als)\b"
    ),
    "zh": _c(
        r"也许|或许|可能|大概|我觉得|我怀疑|我猜|不确定|说不好|说不定|回头再说|以后再说|以后可能|考虑一下|不一定|要不要"
        r"|会不会|感觉|好像|似乎|估计|不排除"
    ),
    "es": _i(
        r"\b(?:quizás?|tal vez|a lo mejor|probablemente|posiblemente|puede que|podríamos|podría|creo que|me parece que"
        r"|supongo|no (?:lo )?tengo claro|no estoy segur[oa]|no sé si|algún día|convendría|valdría la pena|capaz que"
        r"|no sé[.!]?$|me da que|me temo que|no descarto|sospecho|diría que|tengo la impresión|me huele|igual es"
        r"|seguramente|en mi opinión|pinta a)\b"
    ),
    "fr": _i(
        r"\b(?:peut-être|probablement|sans doute|il se peut|on pourrait|pourrait|pourrions|je pense que|je crois que"
        r"|j'imagine|je suppose|pas sûr|pas certain|un jour|éventuellement|vaudrait la peine|vaille le coup|à voir"
        r"|je me demande|on devrait peut|ça vaudrait|j'ai l'impression|à mon avis|je soupçonne|il me semble"
        r"|on dirait|ça ressemble à|je n'exclus pas|selon moi|j'ai le sentiment|ça sent)\b"
    ),
    "pt": _i(
        r"\b(?:talvez|provavelmente|possivelmente|pode ser que|poderíamos|poderia|acho que|creio que|suponho"
        r"|não tenho (?:a )?certeza|ainda não sei|não sei se|um dia|valha a pena|valeria a pena|quem sabe"
        r"|desconfio|suspeito|parece que|tenho a impressão|na minha opinião|não descarto|me parece)\b"
    ),
    "it": _i(
        r"\b(?:forse|probabilmente|magari|potremmo|potrebbe|penso che|credo che|suppongo|non (?:ne )?sono sicur[oa]"
        r"|non so se|un giorno|prima o poi|varrebbe la pena|chissà|sospetto|secondo me|mi sa che|ho l'impressione"
        r"|mi pare|mi sembra|direi che|può darsi|non escludo|a mio avviso)\b"
    ),
    "ja": _c(
        r"かもしれ|かも[。.]?\s*$|でしょう[。.]?\s*$|(?:分から|わから)ない|(?:分かり|わかり)ません|たぶん|多分|おそらく|恐らく|と思(?:う|います|っています)|気がする|何とも言えな|わからな|分からな"
        r"|検討(?:中|したい|しても)|いずれ|そのうち|将来的に|気がします|っぽい|のではないか|んじゃないか|じゃないかな"
        r"|ではないでしょうか|怪しい"
    ),
}
ONE_OFF: dict[Lang, Cue] = {
    "en": _i(
        r"\b(?:for this (?:task|pr|change|release|ticket|one)|in this (?:pr|change|branch|commit)|this time"
        r"|right now|for now|today|tonight|tomorrow|this afternoon|this morning|at the moment|just this once"
        r"|once (?:ci|it) is green|this (?:week|sprint)|(?:before|after) the (?:meeting|call|demo|standup)"
        r"|and that'?s it)\b"
    ),
    "de": _i(
        r"\b(?:heute|morgen|jetzt (?:erst|mal|gleich|sofort)|erst (?:ein)?mal|fürs erste|vorerst|diesmal"
        r"|dieses mal|gerade|in diesem (?:pr|pull request|commit|branch)|für diese[ns]? (?:aufgabe|ticket|pr|release)"
        r"|nur für (?:die|den|das|diese[ns]?) \w+liste|diese woche|in diesem sprint|(?:vor|nach|für) (?:dem|das|die"
        r"|der) (?:meeting|besprechung|demo|call)|und fertig)\b"
    ),
    "zh": _c(
        r"这次|这一次|这周|本周|这个星期|今天|明天|下班前|现在马上|马上|立刻|暂时|先不|先只|先别|再说[。.!！]?$|赶时间|这个\s*PR|这个任务"
        r"|这个需求|这个\s*bug|本次"
    ),
    "es": _i(
        r"\b(?:por ahora|de momento|por el momento|hoy(?! en día)|(?<!la )(?<!cada )mañana|esta vez|solo esta vez"
        r"|ahora mismo|esta semana"
        r"|en (?:este|esta) (?:pr|commit|rama|ticket|cambio|tarea)|para (?:este|esta) (?:pr|tarea|ticket|rama)"
        r"|(?:antes|después) de la (?:reunión|demo|llamada)|para la (?:reunión|demo|llamada)|y listo|y ya está)\b"
    ),
    "fr": _i(
        r"\b(?:pour l'instant|pour le moment|pour (?:cette|ce) (?:pr|tâche|fois|branche|ticket|commit|release)"
        r"|dans (?:cette|ce) (?:pr|branche|commit)|cette fois|aujourd'hui|demain|tout de suite|ce soir|ce matin"
        r"|cet après-midi|en attendant|cette semaine|ce sprint|(?:avant|après|pour) la (?:réunion|démo)"
        r"|et c'est tout)\b"
    ),
    "pt": _i(
        r"\b(?:por agora|por enquanto|por ora|hoje(?! em dia)|amanhã|desta vez|agora mesmo|esta tarde|esta manhã"
        r"|esta semana|nesta semana|(?:nesta|neste|para esta|para este) (?:pr|tarefa|branch|commit|ticket)"
        r"|(?:antes|depois) da (?:reunião|demo)|para a (?:reunião|demo)|e pronto)\b"
    ),
    "it": _i(
        r"\b(?:per ora|per adesso|per il momento|(?<!d')oggi|domani|questa volta|stavolta|subito|stasera|stamattina"
        r"|questa settimana|(?:in|per) quest[oa] (?:pr|branch|commit|ticket|release)|(?:prima|dopo) della"
        r" (?:riunione|demo)|per la (?:riunione|demo)|e basta)\b"
    ),
    "ja": _c(
        r"今回|今週|(?:今日|明日)(?!から|以降)|今すぐ|とりあえず|ひとまず|いったん|一旦|当面|この\s*(?:PR|プルリク|チケット|タスク)"
    ),
}
TASK: dict[Lang, Cue] = {
    "en": _i(
        r"^(?:(?:please|now|also|ok(?:ay)?|and|then),?\s+)*(?:add|fix|implement|build|create|write|make(?! sure)"
        r"|refactor|update|bump|rename|change|look(?: at| into)?|investigate|debug|rerun|re-run|merge|apply|review"
        r"|help|show|explain|tell|give|find|set up|install|move|delete|remove|clean(?: up)?|generate|convert|port"
        r"|draft|prepare|open|close|rebase|squash|split|extract|replace|upgrade|downgrade|revert|rewrite|retry"
        r"|ship|send|post|file|scaffold|wire|hook up|go ahead|let'?s)\b"
    ),
    "de": _i(
        r"^(?:bitte\s+)?(?:bau|mach|schau|füg|schreib|änder|erstell|prüf|teste|behebe|fix|implementier|richte"
        r"|lösch|entfern|zeig|erklär|hilf|kannst|könntest|würdest|merge|such|pass|aktualisier|benenn|räum)\w*\b"
    ),
    "zh": _c(
        r"^(?:请|麻烦)?(?:帮我|帮忙|你帮|你先|给我|把|请你|麻烦你|你看看|你查查)|(?:修|改|加|看|查|写|做|调|弄|跑)一下"
    ),
    "es": _i(
        r"^(?:por favor,?\s+)?(?:añade|agrega|crea|corrige|arregla|haz|implementa|escribe|cambia|actualiza|revisa"
        r"|mira|busca|elimina|borra|quita|mueve|renombra|prepara|genera|explica|muestra|dime|ayúdame|prueba"
        r"|ejecuta|sube|migra|refactoriza|abre|cierra|comprueba|investiga|puedes|podrías|me ayudas"
        r"|vamos a \w+(?:ar|er|ir)|hagamos|empecemos)\b"
        r"|^(?!(?:está|así|quizá|aquí|allí|ahí|acá|allá|sí|más|también|además|jamás|según|través|café|menú|país)\b)"
        r"[a-zñ]{2,}[áéí](?:\s|,|$)"  # voseo: "Agregá un botón …", "Poné …", "Corré los tests"
    ),
    "fr": _i(
        r"^(?:s'il te plaît,?\s+|merci de\s+)?(?:ajoute|rajoute|crée|corrige|répare|fais|implémente|écris|change"
        r"|modifie|mets|regarde|cherche|supprime|enlève|retire|déplace|renomme|prépare|génère|explique|montre"
        r"|dis-moi|aide-moi|teste|exécute|ouvre|ferme|vérifie|refactorise|migre|ajoutez|créez|corrigez|faites"
        r"|écrivez|modifiez|regardez|vérifiez|tu peux|peux-tu|pourrais-tu|tu pourrais|(?:allons|on va) \w+(?:er|ir|re)"
        r"|commençons)\b"
    ),
    "pt": _i(
        r"^(?:por favor,?\s+)?(?:adiciona|acrescenta|cria|corrige|conserta|faz|implementa|escreve|muda|altera"
        r"|atualiza|revê|vê|olha|procura|apaga|remove|tira|move|renomeia|prepara|gera|explica|mostra|diz-me|ajuda"
        r"|testa|executa|abre|fecha|verifica|investiga|adicione|crie|corrija|faça|implemente|escreva|mude|altere"
        r"|atualize|revise|veja|procure|apague|remova|mova|renomeie|gere|explique|mostre|teste|rode|execute"
        r"|abra|feche|verifique|podes|consegues|você pode|vamos \w+(?:ar|er|ir)|bora)\b"
    ),
    "it": _i(
        r"^(?:per favore,?\s+)?(?:aggiungi|crea|correggi|sistema|fai|implementa|scrivi|cambia|modifica|aggiorna"
        r"|controlla|guarda|cerca|elimina|cancella|rimuovi|togli|sposta|rinomina|prepara|genera|spiega|mostra"
        r"|dimmi|aiutami|testa|esegui|apri|chiudi|verifica|metti|puoi|potresti|facciamo|andiamo a|iniziamo)\b"
    ),
    # A request ("…してください", "…をお願いします"), not a prohibition ("…しないでください") nor a manner
    # ("返答は日本語でお願いします": a standing preference).
    "ja": _c(
        r"(?<!ない)(?:て|で)(?:ください|下さい|くれ|もらえ|いただけ|ほしい|欲しい)|(?<!で)お願い(?:します|できますか)?"
        r"|(?:[っしいきぎえけせべめれねちり]て|んで)[。.!！]?\s*$|ましょう[。.!！]?\s*$"
    ),
}
# An instruction bounded by a near date ("until Friday", "hasta el viernes", "jusqu'à lundi"), or a report of what the
# speaker is doing right now ("Estoy publicando …", "Je suis en train de …"): read in every Latin-script language.
_WEEKDAY = (
    r"monday|tuesday|wednesday|thursday|friday|montag|dienstag|mittwoch|donnerstag|freitag|lunes|martes|miércoles"
    r"|jueves|viernes|lundi|mardi|mercredi|jeudi|vendredi|segunda|terça|quarta|quinta|sexta|lunedì|martedì"
    r"|mercoledì|giovedì|venerdì|next week|la semana que viene|la semaine prochaine|a próxima semana|la prossima"
    r" settimana|nächste woche"
)
BOUNDED_NOW = rx(
    rf"\b(?:until|till|bis|hasta(?: el)?|jusqu'(?:à|au)|até (?:a|o|à)?|fino a)\s+(?:{_WEEKDAY})\b"
    r"|^(?:estoy|estamos) \w+(?:ando|iendo)\b|^(?:estou|estamos) \w+(?:ando|endo|indo)\b"
    r"|^(?:sto|stiamo) \w+(?:ando|endo)\b|^je suis en train de\b|^(?:dame|dadme|dá-me|me dá|dammi|donne-moi)\b"
    r"|\b(?:dame|dá-me|dammi|donne-moi|gib mir) (?:\w+ )?(?:cinco|cinq|cinque|fünf|diez|dix|dieci|zehn|un|una|um)"
    r" (?:minutos?|minutes?|minuti|minuten|momento|momentito|instante|segundo)\b"
    # a status report: the speaker's own action just done, in the first person singular and a perfective tense
    # ("I pushed a fix …", "J'ai poussé le correctif", "Ya subí el arreglo", "我把修复推上去了", "さっき…しました")
    r"|^(?:ok,? |so,? )?i(?:'ve| have)?(?: just| already)? (?!(?:decided|agreed|chose|prefer|used to)\b)"
    r"(?:\w+ed|ran|made|wrote|broke|built|did|got|put|set|sent|found|took|left|saw|tried|fixed|pushed|merged)\b"
    r"|^(?:je viens d|j'ai (?!(?:décidé|choisi)\b)\w+[éiu]s?\b|je vais\b)"
    r"|^(?:ya |acabo de )?(?:he \w+(?:ado|ido)\b|(?!(?:está|así|quizá|aquí|allí|ahí|acá|allá|sí|más|también|además"
    r"|jamás|según|través|café|menú|país)\b)\w{3,}[éí]\b)"
    r"|^(?:já |acabei de |não )?(?:\w+ei|fiz|subi|entendi|corrigi|vi|pus|mandei)\b"
    r"|^ho (?:appena |già )?\w+(?:ato|uto|ito)\b|^ich habe (?:gerade|eben|schon) "
    r"|\b(?:i'?ll be back|back in|je reviens|je repasse|vuelvo en|ahora vuelvo|torno tra|torno subito|volto em"
    r"|já volto|bin gleich zurück|bin gleich wieder)\b|다녀올게요|다녀오겠습니다|갔다 올게요|戻ります|回来再"
    r"|^我(?!们)(?:刚|刚刚|已经)?(?:把|先)?[^，。,]{0,20}了|さっき|先ほど|さきほど"
    # bounded by what the speaker does meanwhile, or by "only now" ("… while I import the catalogue", "Só agora, …")
    r"|\b(?:while i(?:'m| am)?|mientras (?:yo )?(?:estoy|\w+o)|enquanto (?:eu|estou)|pendant que je|le temps que je"
    r"|mentre (?:io )?(?:sto|\w+o)|während ich|só agora|solo ahora|solo per ora|nur jetzt|seulement maintenant)\b"
    r"|我\S{1,10}的时候|している間|하는 동안"
)
# A plan for this session: a sequencing word opening the sentence ("First, let's …", "D'abord …", "まずは…", "先把…").
SESSION_PLAN = rx(
    r"^(?:first(?:,| of all| let'?s| we)|let'?s (?:first|start)|to start(?: with)?,|zuerst|zunächst|als erstes"
    r"|d'abord|tout d'abord|pour commencer|en premier|primero|para empezar|antes que nada|primeiro|pra começar"
    r"|para começar|antes de mais nada|prima(?! d)|per cominciare|innanzitutto)\b"
    r"|^(?:まず(?!い)|最初に)|^先(?:把|来|看|修|处理|弄|搞|搞定)|^首先"
)
# Clauses that make an imperative a standing rule ("Lass vor jedem „fertig“ … laufen", "Run X before every commit").
GENERIC: dict[Lang, Cue] = {
    "en": _i(r"\b(?:always|never|every|each|whenever|any|all|before (?:you|every|each|saying|calling)|by default)\b"),
    "de": _i(
        r"\b(?:immer|nie|niemals|stets|jede[rsnm]?|alle[rsnm]?|grundsätzlich|standardmäßig|bevor|vor jede[rsnm]?)\b"
    ),
    "zh": _c(r"每次|每个|所有|一律|总是|永远|一直|都要|都用|之前"),
    "es": _i(r"\b(?:siempre|nunca|jamás|cada|tod[oa]s|cualquier|por defecto|antes de|ningún|ninguna)\b"),
    "fr": _i(r"\b(?:toujours|jamais|chaque|tous|toutes|n'importe|par défaut|avant (?:chaque|tout|de)|aucun|aucune)\b"),
    "pt": _i(r"\b(?:sempre|nunca|jamais|cada|tod[oa]s|qualquer|por padrão|por defeito|antes de|nenhum|nenhuma)\b"),
    "it": _i(r"\b(?:sempre|mai|ogni|tutti|tutte|qualsiasi|qualunque|di default|prima di|nessun[oa]?)\b"),
    "ja": _c(r"必ず|常に|いつも|毎回|すべて|全て|全部|いかなる|絶対|前に|たびに|ごとに|都度"),
}
CONSTRAINT: dict[Lang, Cue] = {
    "en": _i(
        r"\b(?:always|never|must|mustn'?t|cannot|can'?t|not allowed|forbidden|required|has to|have to|may never"
        r"|make sure|ensure|no one|nobody|only)\b|\bdon'?t\b|\bdo not\b"
    ),
    "de": _i(
        r"\b(?:muss|müssen|musst|darf|dürfen|darfst|nie|niemals|immer|stets|ausschließlich|nur|verboten"
        r"|nicht erlaubt|erforderlich|niemand|keine?[nmrs]?)\b"
    ),
    "zh": _c(r"必须|一定要|务必|不要|不能|不允许|不许|禁止|严禁|不得|别|千万|绝不|永远不|只能|只允许|不可以|要先|需要"),
    # must/never, the impersonal and the imperative negation ("no se toca", "No uses …"), "nothing of / no X"
    "es": _i(
        r"\b(?:nunca|jamás|siempre|debe[ns]?|tienen? que|hay que|prohibido|obligatorio|ningún|ninguna|nada de|sólo"
        r"|solo|únicamente|no se|no (?:puede[ns]?|debe[ns]?)|nada más)\b|^no\s+(?!,)\w|\bni\s+\S+\s+ni\b"
    ),
    "fr": _i(
        r"\b(?:jamais|toujours|doi[st]|doivent|il faut|faut|interdit|obligatoire|seulement|uniquement|aucun|aucune"
        r"|ne pas|on ne|on n'|pas de|pas d'|en aucun cas|rien d'autre)\b|^(?:ne|n')\s*\w+\s+(?:pas|jamais|plus)\b"
        r"|\b(?:ne|n')\s*\w+\s+(?:\w+\s+)?que\b"
    ),
    "pt": _i(
        r"\b(?:nunca|jamais|sempre|deve[m]?|tem que|têm que|tem de|têm de|proibido|obrigatório|só|somente|apenas"
        r"|nenhum|nenhuma|nada de|não se|não (?:pode[m]?|deve[m]?)|mais nada)\b|^não\s+(?!,)\w"
    ),
    "it": _i(
        r"\b(?:mai|sempre|dev[eio]|devono|bisogna|occorre|vietato|obbligatorio|solo|soltanto|esclusivamente"
        r"|nessun[oa]?|niente|non si|non (?:deve|devono|può|possono)|nient'altro|e basta)\b|^non\s+\w"
    ),
    "ja": _c(
        r"ないで(?:ください|下さい)|ないこと|てはいけ|ではいけ|てはならな|ちゃだめ|禁止|厳禁|必ず|絶対|のみ|だけ"
        r"|しか\S{0,6}ない|べき|なければな|ないといけな|こと[。.!！]?\s*$"
    ),
}
CONVENTION: dict[Lang, Cue] = {
    "en": _i(
        r"\b(?:we|our|everyone|everything|all|every|each|by default|as a rule|convention|standard)\b"
        r"|\b(?:is|are|get|gets)\s+\w+ed\b"
    ),
    "de": _i(
        r"\b(?:wir|unser[emnrs]?|jede[rsnm]?|alle[rsnm]?|grundsätzlich|standardmäßig)\b"
        r"|\b(?:wird|werden)\b.*\bge\w+(?:t|en)\b"
    ),
    "zh": _c(
        r"我们|统一|都用|都走|都存|都放|默认|每次|每个|所有|全部|遵循|规范|约定|一律|用\S{1,12}管理|放在|由\S{1,20}生成"
        r"|(?:用|走)的(?:都)?是"
    ),
    # we/our, the first person plural (-amos/-emos/-imos), the impersonal/passive "se …" and "van en …"
    "es": _i(
        r"\b(?:nosotros|nuestr[oa]s?|tod[oa]s|cada|por defecto|convención|estándar|\w+(?:amos|emos|imos)"
        r"|se \w+(?:a|an|e|en)|van? (?:en|con|por))\b"
    ),
    "fr": _i(
        r"\b(?:nous|notre|nos|on|tous|toutes|chaque|par défaut|convention)\b"
        r"|\b(?:est|sont)\s+\w+(?:é|ée|és|ées)\b|\bse \w+(?:e|ent)\b"
    ),
    "pt": _i(
        r"\b(?:nós|noss[oa]s?|a gente|tod[oa]s|cada|por padrão|por defeito|convenção|\w+(?:amos|emos|imos|ámos)"
        r"|(?:é|são) \w+(?:ad|id)[oa]s?|\w+-se|se \w+(?:a|am|e|em)|ficam? em)\b"
    ),
    "it": _i(
        r"\b(?:noi|nostr[oaie]|tutti|tutte|ogni|di default|convenzione|\w+iamo|si \w+(?:a|ano|e|ono)"
        r"|(?:è|sono|viene|vengono) \w+(?:at|it|ut)[oaie])\b"
    ),
    "ja": _c(
        r"私たち|我々|うちでは|統一|基本(?:的に)?|原則|規約|ルール|決まり|慣例|標準|デフォルト|すべて|全て|ごとに|毎回"
    ),
}
PREFERENCE: dict[Lang, Cue] = {
    "en": _i(r"\bi (?:personally )?(?:prefer|like|love|hate|dislike)\b"),
    "de": _i(r"\bich (?:bevorzuge|mag|finde|hätte lieber)\b|\bmir ist \w+ lieber\b|\blieber\b"),
    "zh": _c(r"我(?:个人)?(?:更)?(?:喜欢|倾向|偏好|习惯)"),
    "es": _i(r"\b(?:prefiero|preferiría|me gusta(?:n)?|no me gusta(?:n)?|odio|me quedo con)\b|^a mí\b"),
    "fr": _i(r"\b(?:je préfère|je préférerais|j'aime|je n'aime pas|je déteste|ma préférence)\b"),
    "pt": _i(r"\b(?:prefiro|preferiria|gosto (?:mais )?de|não gosto|odeio)\b"),
    "it": _i(r"\b(?:preferisco|preferirei|mi piace|non mi piace|odio|la mia preferenza)\b"),
    "ja": _c(r"好き|好み|(?:ほう|方)が(?:いい|良い|助かり)|嫌い|苦手|でお願い(?:します|したい)"),
}
DECISION: dict[Lang, Cue] = {
    "en": _i(r"\bwe (?:decided|chose|agreed|settled on|approved)\b"),
    "de": _i(r"\bwir haben (?:uns )?(?:entschieden|beschlossen|geeinigt)\b|\bentschieden\b"),
    "zh": _c(r"决定|定下来|商量好"),
    "es": _i(r"\b(?:decidimos|hemos decidido|acordamos|lo acordamos|hemos acordado|quedamos en|elegimos)\b"),
    "fr": _i(r"\b(?:on a décidé|nous avons décidé|on a choisi|nous avons choisi|on s'est mis d'accord|convenu)\b"),
    "pt": _i(r"\b(?:decidimos|decidimos|combinamos|acordámos|escolhemos|ficou decidido)\b"),
    "it": _i(r"\b(?:abbiamo deciso|abbiamo scelto|abbiamo concordato|ci siamo accordati)\b"),
    "ja": _c(r"決めました|決定し|決まりました|合意し|ことにしました"),
}
CORRECTION_LEAD: dict[Lang, Cue] = {
    "en": _i(r"^(?:no|nope|actually|wrong|that'?s (?:wrong|not right))\b"),
    "de": _i(
        r"^(?:nein|falsch|stimmt nicht|das stimmt (?:so )?nicht(?: mehr)?|eigentlich|korrektur|nicht \w+\s*[:-])\b"
    ),
    "zh": _c(r"^(?:不对|不是的|错了|说错了|其实|更正|纠正一下)"),
    "es": _i(
        r"^(?:no\s*[,:;.!-]|en realidad\b|perdón\b|perdona\b|corrijo\b|corrección\b|me equivoqué\b|mejor dicho\b)"
    ),
    "fr": _i(
        r"^(?:non\s*[,:;.!-]|en fait\b|en réalité\b|correction\b|erratum\b|pardon\b|je me suis trompé|c'est faux)"
    ),
    "pt": _i(r"^(?:não\s*[,:;.!-]|na verdade\b|correção\b|errado\b|enganei-me\b|me enganei\b)"),
    "it": _i(r"^(?:no\s*[,:;.!-]|in realtà\b|anzi\b|correzione\b|sbagliato\b|mi sono sbagliat[oa]\b)"),
    "ja": _c(r"^(?:いや|いいえ|違います|違う|ちがう|訂正|間違い|間違えました|実は|正しくは)"),
}
# A change of state stated without a correction marker ("We moved the e2e suite off kind to k3d").
CHANGE: dict[Lang, Cue] = {
    "en": _i(
        r"\b(?:now|no longer|anymore|any more|these days)\b|\bwe(?:'ve| have)? (?:\w+ )?(?:moved|switched|migrated"
        r"|changed|replaced|dropped|left|stopped using)\b|\b(?:moved|switched|migrated) (?:\w+ ){0,4}(?:off|from|to)\b"
        r"|\bis gone\b|\b(?:was|were) (?:bumped|changed|replaced|moved)\b"
    ),
    "de": _i(
        r"\b(?:inzwischen|mittlerweile|nicht mehr|neuerdings|ab sofort|seit (?:dem|der|letzte[mnr]?)"
        r"|umgestiegen|gewechselt|umgezogen|ersetzt|geändert|jetzt|nun)\b"
    ),
    "zh": _c(
        r"改用|改成|改为|换成|迁到|迁移到|不再|已经\S{0,12}(?:换|迁|改|升级|上线)|现在(?:改|换|用)|从\S{1,20}(?:换|迁|改)"
    ),
    "es": _i(
        r"\b(?:ahora|ya no|desde (?:la semana|el mes|ayer|hace|el lunes|el martes|el miércoles|el jueves|el viernes"
        r"|que)|(?:hemos|ha) (?:migrado|cambiado|pasado|movido|sustituido|reemplazado)|migramos|cambiamos|pasamos a"
        r"|dejamos de|se (?:eliminó|quitó|retiró)|ya no existe)\b"
    ),
    "fr": _i(
        r"\b(?:maintenant|depuis (?:lundi|mardi|mercredi|jeudi|vendredi|hier|la semaine|le mois|peu|que)"
        r"|(?:on a|nous avons) (?:migré|changé|remplacé|basculé|abandonné|arrêté)|(?:a|ont) été (?:retiré|supprimé"
        r"|remplacé|abandonné)e?s?|n'existe plus)\b|\b(?:ne|n')\s*\w+ plus\b"
    ),
    "pt": _i(
        r"\b(?:agora|já não|não \w+ mais|deix[aá]mos de|pass[aá]mos a|desde (?:a semana|o mês|ontem|segunda|que)"
        r"|migr[aá]mos|mud[aá]mos|troc[aá]mos|substituímos|(?:foi|foram) (?:desligad|removid|substituíd|retirad"
        r"|abandonad|apagad)[oa]s?)\b"
    ),
    "it": _i(
        r"\b(?:adesso|(?<!')ora|non \w+ più|non più|da (?:lunedì|ieri|quando|la settimana)|dalla settimana"
        r"|(?:abbiamo|siamo) (?:migrat|cambiat|sostituit|passat|spostat|abbandonat)[oaie]"
        r"|(?:è|sono) stat[oaie] (?:rimoss|sostituit|dismess|spent|eliminat)[oaie]|non esiste più)\b"
    ),
    "ja": _c(
        r"(?:に|へ)(?:移行|変更|切り替え|切替|移し|乗り換え|置き換え|変え)|(?:を|は)?やめ|廃止|使っていません"
        r"|使わなくな|もう\S{0,8}(?:ない|ません)|(?:に|と)しました|になりました|今は|現在は|先週から|昨日から"
    ),
}
REPLACED: dict[Lang, Cue] = {
    "en": _i(
        r"\b(?:off|instead of|rather than|away from|left|dropped|not)\s+(?P<x>[\w.\-/`']+(?:\s+[\w.\-`']+)?)"
        r"|\bfrom\s+(?P<y>[\w.\-/`']+)\s+to\b|\b(?P<z>[\w.\-/`']+) is gone\b"
        r"|\b(?:replaced|swapped(?: out)?|ditched|retired)\s+(?:the\s+)?(?P<w>[\w.\-/`']+)\s+(?:with|by|for)\b"
    ),
    "de": _i(
        r"\bnicht mehr\s+(?:(?:mit|über|in|im|per|auf|nach)\s+)?(?P<w>[\wäöüß.\-/`]+)"
        r"|\b(?:statt|anstatt|nicht|kein(?:e|en)?|von)\s+(?P<x>[\wäöüß.\-/`]+)"
        r"|(?P<y>[\wäöüß.\-/`]+)\s+(?:benutzen|verwenden|nutzen)\s+wir\s+nicht\s+mehr"
        r"|(?P<z>[\wäöüß.\-/`]+)\s+(?:(?:ist|sind)\s+(?:jetzt\s+)?(?:raus|weg|abgeschafft|entfernt)"
        r"|haben\s+wir\s+(?:\w+\s+){0,3}(?:entfernt|abgeschafft|rausgeworfen|abgelöst|ersetzt))\b"
    ),
    "zh": _c(
        r"从\s*(?P<x>[^\s，。,]{1,20}?)\s*(?:迁|换|改)|不再(?:用|使用)\s*(?P<y>[^\s，。,]{1,12})|不是\s*(?P<z>[^\s，。,]{1,12})"
    ),
    "es": _i(
        rf"\b(?:en (?:lugar|vez) de|no con|ni|ya no (?:usamos|se usa))\s+{_ART}(?P<x>{_T})"
        rf"|\b(?:migramos|pasamos|cambiamos|movimos)\s+(?:\S+\s+){{0,4}}?de\s+(?P<y>{_T})\s+a\b"
        rf"|(?P<z>{_T})\s+(?:ya no existe|(?:fue|ha sido) (?:eliminad|retirad|sustituid|reemplazad)[oa])"
        rf"|\bya no (?:va[n]?|corre[n]?|está[n]?)\s+(?:\w+\s+)?(?:por|con|en|al?)\s+{_ART}(?P<w>{_T})"
    ),
    "fr": _i(
        rf"\b(?:au lieu de|à la place de|plutôt que|pas (?:avec|par|sur|en)|plus (?:avec|par|sur))\s+{_ART}(?P<x>{_T})"
        rf"|(?P<w>{_T})\s+(?:a|ont) été (?:retiré|supprimé|abandonné|remplacé|enlevé)e?s?"
        rf"|\b(?:ne |n')\w+ plus\s+{_ART}(?P<y>{_T})"
    ),
    "pt": _i(
        rf"\b(?:em vez de|ao invés de|no lugar de|e não|mas não|já não usamos)\s+{_ART}(?P<x>{_T})"
        rf"|(?P<w>{_T})\s+(?:foi|foram) (?:desligad|removid|substituíd|retirad|abandonad|apagad)[oa]s?"
        rf"|\bdeix[aá]mos de usar\s+{_ART}(?P<y>{_T})"
    ),
    "it": _i(
        rf"\b(?:invece di|al posto di|anziché|non più|e non|non usiamo più)\s+{_ART}(?P<x>{_T})"
        rf"|(?P<w>{_T})\s+(?:è stat[oa]|sono stat[ie]) (?:rimoss|sostituit|dismess|spent|eliminat|abbandonat)[oaie]"
    ),
    "ja": _c(
        r"(?P<x>[A-Za-z0-9][\w.\-/`']*|[\u30a0-\u30ff]{2,})\s*(?:を|は)\s*(?:やめ|廃止|使っていません|使わな|使いません|もう使)"
        r"|(?P<y>[A-Za-z0-9][\w.\-/`']*|[\u30a0-\u30ff]{2,})\s*(?:ではなく|じゃなく)"
        r"|(?P<z>[A-Za-z0-9][\w.\-/`']*|[\u30a0-\u30ff]{2,})\s*から\s*[^。、]{1,30}?(?:に|へ)(?:移行|変更|切り替え|移|変え|乗り換え)"
    ),
}
# A failed or reverted attempt: "tried X, it broke Y, reverted, nothing committed".
ATTEMPT: dict[Lang, Cue] = {
    "en": _i(r"\b(?:tried|attempted|experimented with|tested switching|gave \w+ a try)\b"),
    "de": _i(r"\b(?:versucht|probiert|ausprobiert|getestet)\b"),
    "zh": _c(r"试过|试了|试着|尝试|试用"),
    "es": _i(
        r"\b(?:intenté|intentamos|he intentado|hemos intentado|probé|probamos|he probado|hemos probado|traté de)\b"
    ),
    "fr": _i(r"\b(?:essayé|tenté|testé|voulu passer)\b"),
    "pt": _i(r"\b(?:tentei|tent[aá]mos|experimentei|experiment[aá]mos|testei)\b"),
    "it": _i(r"\b(?:provato|tentato|provai)\b"),
    "ja": _c(r"試し|試み|(?:て|で)み(?:ました|た)|トライ"),
}
FAILED: dict[Lang, Cue] = {
    "en": _i(
        r"\b(?:broke|broken|failed|fails|crashed|did ?n[o']t work|timed out|regressed|came out wrong|wanted to recreate"
        r"|rate limited|reverted|rolled back|backed out|undid|switched back|not (?:merged|committed|applied)"
        r"|nothing (?:was )?(?:committed|merged|applied))\b"
    ),
    "de": _i(
        r"(?:abgestürzt|kaputt|fehlgeschlagen|funktioniert nicht|fehler|zurückgerollt|rückgängig|zurückgesetzt"
        r"|nicht (?:committet|eingecheckt|gemergt))"
    ),
    "zh": _c(r"失败|报错|不行|崩|挂了|出错|无法|回滚|回退|还原|撤销|没提交|没有提交|编译不过"),
    "es": _i(
        r"\b(?:rompió|roto|rota|falló|fallaba|no funcion(?:ó|aba|a)|no compila(?:ba)?|error|revertí|revertido"
        r"|lo revertí|deshice|volví atrás|nada en el commit|sin commit|no hice commit|rollback)\b"
    ),
    "fr": _i(
        r"(?:cassé|cassait|planté|échoué|échoue|ne marche(?:it)? pas|ne fonctionn\w* pas|n'a pas marché|erreur|annulé"
        r"|reverté|revert|restauré|rien n'a été commité|pas commité|retour arrière|rollback)"
    ),
    "pt": _i(
        r"\b(?:quebrou|partiu|falhou|falha|não funciona|não funcionou|erro|reverti|revertido|desfiz|voltei atrás"
        r"|não fiz commit|sem commit|nada (?:foi )?commitado|rollback)\b"
    ),
    "it": _i(
        r"\b(?:rotto|rompeva|fallit[oa]|fallisce|non funziona|non ha funzionato|errore|annullato|revertito|ripristinato"
        r"|tornato indietro|non ho fatto commit|niente commit|rollback)\b"
    ),
    "ja": _c(
        r"失敗|壊れ|動かなく|動きません|エラー|落ち|元に戻|戻しました|ロールバック|取り消|コミット(?:は)?していません|通らなく"
    ),
}
# Short chatter in any Latin-script language: a short line can hold no function word of its own language
# ("super, danke", "merci, parfait"), so these are read whatever language() says.
CHATTER_WORDS = word_set(
    "danke dir super passt ok okay moin hallo hi top prima gut alles klar tschüss bis morgen schön "
    "perfekt genau ja nein servus vielen dank das wars war es für heute "
    "gracias vale perfecto genial hola buenas buenos días adiós hasta luego muchas bien sí claro listo "
    "merci beaucoup parfait super bonjour salut d'accord ok top génial nickel bonne journée à demain au revoir "
    "bon j y vais "
    "obrigado obrigada olá valeu perfeito ótimo beleza tchau até amanhã bom dia muito fixe "
    "grazie mille perfetto ottimo ciao buongiorno benissimo va bene a domani d'accordo "
)
ZH_CHATTER = re.compile(
    r"^(?:好的|好嘞|好|谢谢|多谢|感谢|可以|收到|辛苦了|辛苦|嗯|行|没问题|你好|嗨|棒|不错|明白|了解|再见|拜拜|今天就到这里"
    r"|[，,。.!！~～\s]|\W)+$"
)
JA_CHATTER = re.compile(
    r"^(?:おはよう(?:ございます)?|こんにちは|こんばんは|お疲れ(?:さま|様)(?:です|でした)?|ありがとう(?:ございます|ございました)?"
    r"|助かりました|助かります|よろしく(?:お願いします)?|了解(?:です|しました)?|わかりました|分かりました|承知しました"
    r"|いいですね|完璧(?:です)?|ばっちり(?:です)?|では|じゃあ|それでは|今日はこの辺で|また明日|失礼します"
    r"|[、，,。.!！~～\s]|\W)+$"
)
GREETING = rx(
    r"^(?:hi|hey|hello|morning|good morning|moin|hallo|servus|hola|buenas|buenos días|bonjour|salut|olá|oi|bom dia"
    r"|ciao|buongiorno|你好|嗨|早上好|早安|早|晚上好|下午好|大家好|おはよう(?:ございます)?|こんにちは|こんばんは)\b[\s,!！，.、。]"
)
# A line that opens a session ("Hola, seguimos con la API", "On reprend le site …", "Moin, weiter mit …") says
# nothing to keep: a greeting with a "let's go on" verb, or a sentence that starts with a "let's go on (with)".
SESSION_OPENER = rx(
    r"\b(?:let'?s (?:continue|carry on|get back)|back to|weiter mit|machen weiter|seguimos|continuamos|sigamos"
    r"|on reprend|on continue|continuons|reprenons|vamos continuar|continuiamo|riprendiamo|andiamo avanti)\b|続き|继续"
)
SESSION_START = rx(
    r"^(?:let'?s (?:continue|carry on|get back to|resume)|weiter (?:geht'?s )?mit|machen wir weiter|sigamos con"
    r"|continuemos con|vamos a seguir con|on (?:reprend|continue|poursuit)|continuons|reprenons|vamos continuar"
    r"|vamos retomar|riprendiamo|andiamo avanti con|(?:bueno,?\s+|bon,?\s+|ok,?\s+)?(?:vamos con|passons à|passiamo a"
    r"|let'?s move on to|weiter zu|vamos para))\b"
)

# Evidence per language beyond code, paths and names: a "we/our" subject, amounts of time, a name after an
# accented word.
_NAME_AFTER_ACCENT = r"|(?<=[à-ÿ] )(?-i:[A-Z])\w{2,}"  # "parle à Stripe": a name the ASCII evidence pattern misses
UNITS_WE: dict[Lang, Cue] = {
    "es": _i(r"\b(?:nosotros|nuestr[oa]s?|\d+\s*(?:segundos|minutos|horas|días))\b" + _NAME_AFTER_ACCENT),
    "fr": _i(r"\b(?:nous|notre|nos|on|\d+\s*(?:secondes|minutes|heures|jours))\b" + _NAME_AFTER_ACCENT),
    "pt": _i(r"\b(?:nós|noss[oa]s?|\d+\s*(?:segundos|minutos|horas|dias))\b" + _NAME_AFTER_ACCENT),
    "it": _i(r"\b(?:noi|nostr[oaie]|\d+\s*(?:secondi|minuti|ore|giorni))\b" + _NAME_AFTER_ACCENT),
    "ja": _c(r"私たち|我々|うちの|\d+\s*(?:秒|分|時間|日|件)"),
}
