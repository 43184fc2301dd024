"""Facts cheap to recover from the code, read by sentence structure in any language (issue 16, item 2).

Admission's English and German word rules ("is defined in src/…", "There are 14 modules …") missed the same
statements in French, Spanish, Portuguese, Italian, Japanese and Chinese ("El fichero main.ts está en src/.",
"main.go 在 cmd/server 目录下。", "middleware.ts はプロジェクトのルートにあります。"). Two shapes, by structure:

- **a location**: a file name or path, a locative predicate (a copula or "lives/sits/se trouve/fica/在/にある"
  followed by a place preposition or particle) and almost nothing else: once the paths, the function words of
  every language and the place nouns ("root", "racine", "目录", "ルート") are taken out, at most
  :data:`LOCATION_MAX_WORDS` words are left (the name of the thing that is there);
- **an inventory**: a file, a path or a place noun as the subject, a verb of containing ("lists", "contient",
  "tiene", "tem", "有", "があります") and an enumeration of at least three items.

Neither fires on a sentence with a modality cue of its language (a rule, a convention): that is the caller's
check. Closed word classes (copulas, prepositions, place nouns, containment verbs) only: no project's words.
"""

from __future__ import annotations

import re

from ..domain.analyzer import STOPWORDS
from ._cues import FUNCTION_WORDS
from ._patterns import CJK, HAN, word_set

__all__ = ["LOCATION_MAX_WORDS", "is_inventory", "is_location"]


# Fitted on half A of the dev projects (1 to 3 keep every rule of A; 3 rejects the most location lines), checked
# on half B, and the other way round (same value): bench/bench_capture.py --data <half> --heldout ''.
LOCATION_MAX_WORDS = 3

_PATHLIKE = re.compile(
    r"`[^`]*`|(?:[\w.\-]+/)+[\w.\-]*|/[\w.\-/]+|\b[\w\-]+(?:\.[A-Za-z][\w]{0,9})+\b|\b[A-Z]\w*file\b"
    r"|\b(?:CMakeLists|Makefile|Dockerfile|Gemfile|Procfile|Podfile|Justfile|Rakefile|Jenkinsfile)\b"
)
_FILE_NAME = re.compile(
    r"(?:[\w.\-]+/)+[\w.\-]*|\b[\w\-]+\.(?:py|pyi|ts|tsx|js|jsx|mjs|cjs|vue|svelte|go|rs|java|kt|kts|swift|rb|php"
    r"|cs|fs|c|h|cc|cpp|hpp|m|mm|dart|ex|exs|erl|hs|scala|clj|lua|sql|md|rst|txt|json|ya?ml|toml|ini|cfg|conf"
    r"|xml|gradle|lock|env|sh|ps1|tf|hcl|proto|graphql|html|css|scss|csproj|sln|plist|properties)\b"
    r"|\b[A-Z]\w*file\b|\bCMakeLists\.txt\b"
)
# Between the copula and the preposition: placement participles, articles and adverbs only ("R está fijado en 4.3.3"
# pins a version; it says no place).
_BETWEEN = (
    r"located|defined|declared|implemented|kept|stored|placed|found|situated|all|also|still|now|directly|right|just"
    r"|ubicad[oa]s?|definid[oa]s?|guardad[oa]s?|localizad[oa]s?|situad[oa]s?|todos|todas|también|ya|aún"
    r"|situé(?:e|s|es)?|défini(?:e|s|es)?|rangé(?:e|s|es)?|placé(?:e|s|es)?|stocké(?:e|s|es)?|tous|toutes|aussi|déjà"
    r"|definit[oaie]|salvat[oaie]|collocat[oaie]|tutti|tutte|anche|già|também|ainda|já"
    r"|abgelegt|definiert|gespeichert|alle|auch|noch|schon|directement|direttamente|directamente|diretamente"
)
# A locative predicate: a copula or a verb of being somewhere, then (within two words) a place preposition.
_LOCATIVE = re.compile(
    r"(?i)\b(?:is|are|'s|lives?|sits?|resides?|stays?|ist|sind|liegt|liegen|steht|stehen|befindet|befinden"
    r"|está|están|esta|estan|queda|quedan|vive|viven|se encuentra|se encuentran|est|sont|se trouve|se trouvent"
    r"|réside|vit|é|são|fica|ficam|vive|vivem|encontra-se|se encontra|está|estão|è|sono|sta|stanno|si trova"
    rf"|si trovano|risiede)\s+(?:(?:{_BETWEEN})\s+){{0,2}}(?:in|inside|under|at|im|in der|unter|unterhalb|en|dentro"
    r"|bajo|dans|à|au|sous|em|no|na|nos|nas|sob|nel|nella|nei|nelle|sotto|dentro|a)\b"
    # "The token contract is src/PointsToken.sol.": the predicate is the path itself
    r"|\b(?:is|are|ist|sind|es|son|est|sont|é|são|è|sono)\s+`?(?:[\w.\-]+/)*[\w\-]+\.[A-Za-z]\w{0,9}`?\s*[.。]?$"
    r"|在|位于|放在|に(?:あります|ある|置いて|置かれて|入って|います|いる)|の(?:中|下|直下|配下)に"
    r"|に\S{0,6}(?:て|で)(?:あります|ある)"  # resultative "に書いてあります": it has been put there
)
# Nouns that name a place in a repository; they say where, not what.
_PLACE_NOUNS = word_set(
    "root top folder folders directory directories dir repo repository project module package source tree "
    "wurzel ordner verzeichnis projekt repository hauptverzeichnis quellcode "
    "raíz carpeta directorio repositorio proyecto módulo paquete raiz pasta diretório diretorio repositório "
    "projeto módulo pacote racine dossier répertoire dépôt projet paquet radice cartella progetto pacchetto "
    "file fichier fichero archivo arquivo ficheiro datei files"
)
_CJK_PLACE = re.compile(
    r"根目录|目录|文件夹|仓库|项目|工程|下面|底下|里面|里|下|中|内|位于|在|。|，|、"
    r"|ルート|ディレクトリ|フォルダ|リポジトリ|プロジェクト|直下|配下|中|下|に|は|の|が|あります|ある|います|置いて|。|、|\s"
)
_KATAKANA_RUN = re.compile(r"[\u30a0-\u30ffー]{2,}")
_ALL_FUNCTION_WORDS = frozenset().union(*FUNCTION_WORDS.values())
_COPULAS = word_set(
    "is are lives live sits sit resides stays liegt liegen steht stehen befindet befinden está están esta "
    "queda quedan vive viven encuentra encuentran trouve trouvent réside vit são fica ficam vivem encontra "
    "estão sono sta stanno trova trovano risiede located found kept stored"
)
_WORD = re.compile(r"[^\W\d_][\w'\-]*")
_VERSION = re.compile(r"\b\d+(?:\.\d+)+\b")


def _residual_words(text: str) -> list[str]:
    rest = _PATHLIKE.sub(" ", text)
    words = []
    for w in _WORD.findall(rest):
        low = w.lower().strip("'-")
        low = re.sub(r"^(?:l|d|qu|j|n|c|s|dell|nell|all|sull)'", "", low)
        if len(low) < 2 or low in STOPWORDS or low in _ALL_FUNCTION_WORDS or low in _PLACE_NOUNS:
            continue
        if low in _COPULAS or CJK.search(low):
            continue
        words.append(low)
    return words


def is_location(text: str) -> bool:
    """Whether ``text`` only says where a file or folder is.

    >>> is_location("El fichero main.ts está en src/."), is_location("main.go 在 cmd/server 目录下。")
    (True, True)
    >>> is_location("Migrations live in db/migrations and are applied with `goose up`.")
    False
    """
    if "`" in text or not _FILE_NAME.search(text) or not _LOCATIVE.search(text):
        return False  # a command in backticks says how, not only where
    if _VERSION.search(_PATHLIKE.sub(" ", text)):
        return False  # a version pinned "in" a file is a setting
    if len(_residual_words(text)) > LOCATION_MAX_WORDS:
        return False
    cjk_rest = _CJK_PLACE.sub("", _LOCATIVE.sub("", _PATHLIKE.sub("", text)))
    # a katakana run is one word, two Chinese characters about one; kana endings and particles are none
    words = len(_KATAKANA_RUN.findall(cjk_rest)) + (len(HAN.findall(cjk_rest)) + 1) // 2
    return words <= LOCATION_MAX_WORDS


# A verb of containing, then an enumeration: "The Gemfile lists rails, sidekiq and mjml."
_CONTAINS = re.compile(
    r"(?i)\b(?:lists?|contains?|has|have|holds?|includes?|declares?|enthält|enthalten|hat|haben|listet|umfasst"
    r"|tiene|tienen|contiene|contienen|incluye|incluyen|lista|contient|a|ont|comprend|liste|inclut|tem|têm"
    r"|contém|inclui|ha|hanno|include|elenca|comprende)\b|包含|含有|列出|里有|中有|下有|有|には|が(?:あります|入って)"
)
_ITEM_SEP = re.compile(r"\s*(?:[,，、;]|\band\b|\bund\b|\by\b|\bet\b|\be\b|\bed\b|和|与|及)\s*")
_SUBJECT_PLACE = re.compile(
    r"(?i)^(?:the|our|le|la|les|el|los|las|o|os|a|as|il|lo|gli|der|die|das|\s)*"
    r"(?:[\w\-]+\.\w+|[\w.\-]*/[\w./\-]*|\w*file|app|application|aplicación|aplicação|appli|projet|proyecto"
    r"|projeto|progetto|projekt|repo|repository|dépôt|repositorio|repositório|service|servicio|serviço|module"
    r"|このリポジトリ|このプロジェクト|リポジトリ|プロジェクト|仓库|项目|工程)"
)


def is_inventory(text: str) -> bool:
    """Whether ``text`` lists what a file, folder or the project contains (three or more items).

    >>> is_inventory("The Gemfile lists rails, sidekiq and mjml."), is_inventory("仓库里有 api、web 和 worker 三个包。")
    (True, True)
    >>> is_inventory("The API has rate limits per token.")
    False
    """
    m = _CONTAINS.search(text)
    if m is None:
        return False
    subject = text[: m.start()].strip()
    place = any(w.lower() in _PLACE_NOUNS for w in _WORD.findall(subject)) and len(subject.split()) <= 5
    if not (_SUBJECT_PLACE.search(subject) or place):  # "The tests folder has unit, integration and e2e."
        return False
    tail = text[m.end() :].split(":", 1)[-1]
    items = [p for p in _ITEM_SEP.split(tail.strip(" .。")) if p.strip()]
    return len(items) >= 3
