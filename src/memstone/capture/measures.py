"""Values typed by what they measure, the same in every language (issue 16, capcorr5).

An unmarked correction often gives nothing but a new value in another language than its entry: "原始读数 60 天后就
降采样" for "Readings older than 90 days are downsampled", "Production releases moved to Thursday nights" for
"本番への反映は毎週火曜日の夜だけです", "We compile with 0.8.26 now" for "Solidity is pinned to 0.8.24". The words
differ, but the *kind* of value is the same: a number of days, a weekday, a version of one release line.
:func:`measures` reads those kinds from a text, each with its values:

- ``unit:<canonical unit>``: a number and its unit, the unit folded to one name across the languages capture
  reads (``60 天`` / ``90 days`` -> ``unit:day``; ``25 °C`` / ``80 graden`` -> ``unit:degree``), thousands
  separators dropped (``6,000 円`` -> ``6000``);
- ``clock``: a time of day (``07:00``); ``zone``: a time zone by its IANA name (``Asia/Tokyo``);
- ``weekday``: a day of the week, by its number (``Thursday`` / ``火曜日`` / ``周二`` / ``segunda-feira``);
- ``line:<major>`` (``line:0.<minor>`` below 1.0): a dotted version, the release line it belongs to
  (``0.8.24`` / ``0.8.26`` -> ``line:0.8``; ``3.11`` / ``3.12`` -> ``line:3``) when it has three parts or a name
  written before it in its clause;
- ``setting:<key>`` (capcorr9): a setting written as code, ``KEY=value`` or ``key: value`` with a key no prose
  word is (upper case, or joined by ``_`` or ``.``: ``CELERY_WORKER_CONCURRENCY=4``, ``pool.max_size=20``);
- ``port`` (capcorr9): a network port, by the word every language writes beside it (``port 8040``, ``puerto
  3000``, ``ポート 8080``, ``8080 端口``) or after a host and a colon (``localhost:5432``, ``:8080``).

Only units are folded whose words are general (time, money, temperature, length, weight, percent); any other
unit is none of these kinds. :func:`other_value` says that a candidate gives another value of a kind both texts
give; :func:`~memstone.capture.targets.set_anew` picks the entry it changes.
"""

from __future__ import annotations

import re

__all__ = ["measures", "other_value", "schedule_words", "unmeasured"]

_UNITS: dict[str, tuple[str, ...]] = {
    "second": ("s", "sec", "secs", "second", "seconds", "segundo", "segundos", "seconde", "secondes", "secondo",
               "secondi", "sekunde", "sekunden", "seconden", "秒", "秒钟", "초"),
    "minute": ("min", "mins", "minute", "minutes", "minuto", "minutos", "minuti", "minuten", "分钟", "分", "分間",
               "분"),
    "hour": ("h", "hr", "hrs", "hour", "hours", "hora", "horas", "heure", "heures", "ora", "ore", "stunde", "stunden",
             "uur", "小时", "个小时", "時間", "시간"),
    "day": ("day", "days", "día", "días", "dia", "dias", "jour", "jours", "giorno", "giorni", "tag", "tage", "tagen",
            "dag", "dagen", "天", "日", "일"),
    "week": ("week", "weeks", "semana", "semanas", "semaine", "semaines", "settimana", "settimane", "woche",
             "wochen", "weken", "周", "週", "週間", "주"),
    "month": ("month", "months", "mes", "meses", "mois", "mese", "mesi", "monat", "monate", "monaten", "maand",
              "maanden", "个月", "月", "か月", "ヶ月", "カ月", "개월"),
    "year": ("year", "years", "año", "años", "ano", "anos", "an", "ans", "année", "années", "anno", "anni", "jahr",
             "jahre", "jahren", "jaar", "jaren", "年"),
    "eur": ("€", "eur", "euro", "euros", "欧元", "ユーロ", "유로"),
    "usd": ("$", "usd", "dollar", "dollars", "dólar", "dólares", "美元", "ドル", "달러"),
    "yen": ("円", "yen", "日元"),
    "yuan": ("元", "块", "yuan", "rmb", "cny"),
    "percent": ("%", "percent", "prozent", "procent"),
    "degree": ("°c", "°", "degree", "degrees", "grado", "grados", "degré", "degrés", "gradi", "grad", "graden", "度",
               "℃"),
    "mm": ("mm", "millimetre", "millimetres", "millimeter", "millimeters", "milímetro", "milímetros", "millimètre",
           "millimètres", "millimetri", "毫米"),
    "cm": ("cm", "centimetre", "centimetres", "centimeter", "centimeters", "centímetro", "centímetros",
           "centimètre", "centimètres", "centimetri", "厘米", "公分"),
    "m": ("m", "metre", "metres", "meter", "meters", "metro", "metros", "mètre", "mètres", "metri", "米"),
    "km": ("km", "kilometre", "kilometres", "kilometer", "kilometers", "kilómetro", "kilómetros", "公里"),
    "kg": ("kg", "kilo", "kilos", "kilogram", "kilograms", "kilogramo", "kilogramos", "kilogramme", "chili",
           "kilogramm", "公斤", "千克"),
    "mb": ("mb", "megabyte", "megabytes", "mib"),
    "gb": ("gb", "gigabyte", "gigabytes", "gib"),
}  # fmt: skip
_UNIT_OF = {w: name for name, words in _UNITS.items() for w in words}
_NUMBER = r"(?<![\w.,:#/-])(\d{1,3}(?:,\d{3})+|\d+(?:[.,]\d+)?)"
_LATIN_UNIT = re.compile(_NUMBER + r"\s*(°c|°|℃|%|€|\$|[^\W\d_]+)", re.I)
_CJK_UNITS = "个小时|个月|秒钟|分钟|小时|時間|分間|週間|か月|ヶ月|カ月|개월|시간|[秒分時天日週周月年元块円度米일주초분]"
_CJK_UNIT = re.compile(_NUMBER + r"\s*(" + _CJK_UNITS + ")")
_CLOCK = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")  # a time of day, as subjects.py reads it
# A time zone by its IANA name ("Asia/Tokyo", "America/Sao_Paulo"): the zone a project's times are read in.
_REGIONS = "Africa|America|Asia|Atlantic|Australia|Europe|Indian|Pacific"
_ZONE = re.compile(r"(?<![\w/])((?:" + _REGIONS + r")/[A-Z][A-Za-z_]+)(?![\w/])")
# A port: the word for it (in the languages capture reads) right before or after the number, or ``host:NNNN``.
_PORT_WORDS = r"ports?|portu|porcie|poort|puertos?|portas?|portes?|porte|porta|porto|ポート(?:番号)?|端口(?:号)?|포트"
_PORT = re.compile(
    r"(?:(?<![\w-])(?:" + _PORT_WORDS + r")\s*(?:番号|号)?\s*[:=]?\s*(\d{2,5})(?!\d|[.,]\d)"
    r"|(?<![\w.,])(\d{2,5})\s*(?:番|号)?\s*(?:" + _PORT_WORDS + r")(?![A-Za-z])"
    r"|(?:localhost|127\.0\.0\.1|0\.0\.0\.0|(?<![\w.])[a-z][\w-]*\.[a-z][\w.-]*|(?<![\w:/])):(\d{2,5})(?![\d:]))",
    re.I,
)
_SETTING = re.compile(
    r"(?<![\w.$/-])(?:([A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+)\s*(?:=|:\s)|([A-Z][A-Z0-9]{2,})\s*=)"
    r"\s*[\"']?([\w.:/@-]*\w)"
)
_LINE_NO = re.compile(
    r"\.(?:py|[jt]sx?|go|rs|java|kts?|rb|c|h|cc|cpp|cs|php|swift|dart|exs?|scala|sql|vue|ya?ml|toml|json|md|txt):", re.I
)
_MONEY_FIRST = re.compile(r"(?<![\w])([€$])\s?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)")

_WEEKDAYS: tuple[tuple[str, ...], ...] = (
    ("monday", "lunes", "lundi", "lunedì", "lunedi", "montag", "maandag", "segunda-feira", "segundas-feiras",
     "月曜", "周一", "星期一", "週一", "礼拜一", "월요일"),
    ("tuesday", "martes", "mardi", "martedì", "martedi", "dienstag", "dinsdag", "terça-feira", "terças-feiras",
     "火曜", "周二", "星期二", "週二", "礼拜二", "화요일"),
    ("wednesday", "miércoles", "miercoles", "mercredi", "mercoledì", "mercoledi", "mittwoch", "woensdag",
     "quarta-feira", "quartas-feiras", "水曜", "周三", "星期三", "週三", "礼拜三", "수요일"),
    ("thursday", "jueves", "jeudi", "giovedì", "giovedi", "donnerstag", "donderdag", "quinta-feira",
     "quintas-feiras", "木曜", "周四", "星期四", "週四", "礼拜四", "목요일"),
    ("friday", "viernes", "vendredi", "venerdì", "venerdi", "freitag", "vrijdag", "sexta-feira", "sextas-feiras",
     "金曜", "周五", "星期五", "週五", "礼拜五", "금요일"),
    ("saturday", "sábado", "sabado", "samedi", "sabato", "samstag", "zaterdag", "sábados", "土曜", "周六", "星期六",
     "週六", "礼拜六", "토요일"),
    ("sunday", "domingo", "dimanche", "domenica", "sonntag", "zondag", "domingos", "日曜", "周日", "星期日", "星期天",
     "週日", "礼拜天", "일요일"),
)  # fmt: skip
_LATIN_DAY = re.compile(
    r"(?<![\w-])("
    + "|".join(sorted((re.escape(w) for d in _WEEKDAYS for w in d if w[0] < "\u3000"), key=len, reverse=True))
    + r")s?(?![\w-])",
    re.I,
)
_DAY_OF = {w.casefold(): i for i, d in enumerate(_WEEKDAYS) for w in d}
# A CJK weekday not followed by a counter ("每周一次" is "once a week", not Monday).
_CJK_DAYS = tuple(
    (re.compile(re.escape(w) + "(?![次个遍])"), i) for i, d in enumerate(_WEEKDAYS) for w in d if w[0] >= "\u3000"
)

_DOTTED = re.compile(r"(?<![\w.])v?(\d+)\.(\d+)(?:\.(\d+))?(?!\w|\.\w)")
_NAMED_BEFORE = re.compile(r"(?<!\w)[A-Z]")  # a name (capitalized) before the number in its clause
_CLAUSE_BREAK = re.compile(r"[,;:()，。；：（）!?！？]")

# What a schedule is about, in the languages capture reads: a weekday or a time of day moved for one of these is
# the same schedule set anew ("Production releases moved to Thursday nights" / "本番への反映は毎週火曜日の夜").
_SCHEDULE_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("deploy", ("deploy", "release", "ship", "go live", "rollout", "roll out", "despliegue", "desplegamos",
                "desplegar", "lanzamiento", "déploie", "déploy", "mise en prod", "mises en prod", "rilasc", "deploy",
                "implanta", "lançamento", "veröffentlich", "ausroll", "auslieferung", "uitrol", "部署", "上线", "发布",
                "发版", "リリース", "デプロイ", "反映", "배포", "릴리스")),
    ("backup", ("backup", "back up", "sauvegarde", "copia de seguridad", "respaldo", "sicherung", "备份",
                "バックアップ", "백업")),
)  # fmt: skip


def _number(raw: str) -> str:
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", raw):
        return raw.replace(",", "")
    return raw.replace(",", ".")


def measures(text: str) -> dict[str, frozenset[str]]:
    """The values of ``text`` by the kind they measure (module doc).

    >>> sorted(measures("原始读数 60 天后就降采样").items())
    [('unit:day', frozenset({'60'}))]
    >>> sorted(measures("Refunds above 1,000 euros need approval; deploys on Tuesdays.").items())
    [('unit:eur', frozenset({'1000'})), ('weekday', frozenset({'1'}))]
    >>> measures("We compile with 0.8.26 now.")
    {'line:0.8': frozenset({'0.8.26'})}
    >>> measures("Set `CELERY_WORKER_CONCURRENCY=8` on the workers.")
    {'setting:celery_worker_concurrency': frozenset({'8'})}
    >>> measures("El servidor escucha en el puerto 3100; Postgres en db.internal:5432.")
    {'port': frozenset({'3100', '5432'})}
    """
    found: dict[str, set[str]] = {}
    low = text.casefold()
    for m in _LATIN_UNIT.finditer(low):
        unit = _UNIT_OF.get(m.group(2))
        if unit is not None:
            found.setdefault("unit:" + unit, set()).add(_number(m.group(1)))
    for m in _CJK_UNIT.finditer(text):
        unit = _UNIT_OF.get(m.group(2))
        if unit is not None:
            found.setdefault("unit:" + unit, set()).add(_number(m.group(1)))
    for m in _MONEY_FIRST.finditer(text):
        found.setdefault("unit:" + _UNIT_OF[m.group(1)], set()).add(_number(m.group(2)))
    for h, mi in _CLOCK.findall(text):
        found.setdefault("clock", set()).add(f"{int(h):02d}:{mi}")
    ports = {
        p
        for m in _PORT.finditer(text)
        for p in m.groups()
        if p and 0 < int(p) < 65536 and not _LINE_NO.search(m.group())
    }
    if ports:
        found["port"] = ports
    for dotted, upper, value in _SETTING.findall(text):
        key = dotted or upper
        if not _LINE_NO.search(key + ":"):  # worker.py:12 is a line of a file
            found.setdefault("setting:" + key.lower(), set()).add(value.lower())
    for zone in _ZONE.findall(text):
        found.setdefault("zone", set()).add(zone)
    for m in _LATIN_DAY.finditer(text):
        found.setdefault("weekday", set()).add(str(_DAY_OF[m.group(1).casefold()]))
    for pattern, i in _CJK_DAYS:
        if pattern.search(text):
            found.setdefault("weekday", set()).add(str(i))
    for m in _DOTTED.finditer(text):
        major, minor, patch = m.groups()
        clause = _CLAUSE_BREAK.split(text[max(0, m.start() - 40) : m.start()])[-1]
        after = text[m.end() : m.end() + 4].lstrip().casefold()
        if patch is None and (not _NAMED_BEFORE.search(clause) or _starts_unit(after)):
            continue
        line = f"line:0.{minor}" if major == "0" else f"line:{major}"
        found.setdefault(line, set()).add(m.group(0).lstrip("v"))
    return {k: frozenset(v) for k, v in found.items()}


def unmeasured(text: str) -> str:
    """``text`` without its numbers and their units (and its ports): what is left says what the values are about
    (a unit word shared by two rules, "… after 15 minutes" / "… after 60 minutes", is no shared subject)."""
    out = _LATIN_UNIT.sub(lambda m: " " if m.group(2).casefold() in _UNIT_OF else m.group(), text)
    return _PORT.sub(" ", _CJK_UNIT.sub(" ", out))


def _starts_unit(after: str) -> bool:
    word = re.match(r"[^\W\d_]+|[%°€$℃]", after)
    return word is not None and word.group() in _UNIT_OF


def other_value(mine: dict[str, frozenset[str]], theirs: dict[str, frozenset[str]]) -> bool:
    """Whether a candidate (its :func:`measures`) gives another value of a kind the entry gives too, and none of
    the entry's values of that kind: a change of that value, not a second one beside it."""
    return any(k in theirs and not mine[k] & theirs[k] for k in mine)


def schedule_words(text: str) -> frozenset[str]:
    """What a schedule in ``text`` is about (``deploy``, ``backup``), whatever the language."""
    low = text.casefold()
    return frozenset(name for name, words in _SCHEDULE_WORDS if any(w in low for w in words))
