"""The statement patterns shared by the adapters and admission (English; Analyzer-independent regexes), and the
script classes the readers test text for."""

from __future__ import annotations

import re


def rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of a word-list literal, as a set."""
    return frozenset(text.split())


# Kana or a CJK ideograph (Chinese or Japanese text), and a Han ideograph alone.
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
HAN = re.compile(r"[\u4e00-\u9fff]")

# Whole-message: text that restates an agent's system prompt or injected boilerplate.
SYSTEM = rx(
    r"^\s*(?:you are|you're)\s+(?:(?:a|an|the)\b[^.!?\n]{0,60}?\b(?:assistant|agent|engineer|developer|programmer"
    r"|model|expert|ai)\b|claude|codex|gemini|copilot|cursor|chatgpt|gpt)"
    r"|<\s*/?\s*system(?:[-_ ]reminder)?\s*>|\bsystem prompt\b|\bthese instructions\b|\bas an ai\b"
    r"|\bas a (?:large )?language model\b|\byou have access to (?:the following )?tools\b|\bwhen asked for your name\b"
    r"|\byou are running in a sandbox\b|\bhelpful(?:,)? (?:and )?harmless\b|\bknowledge cutoff\b"
    r"|\bthink step by step\b|\bexplain your reasoning\b"
    r"|^\s*important:\s*you\b"
)
CHATTER_WORDS = frozenset(
    [
        "ok",
        "okay",
        "k",
        "kk",
        "thanks",
        "thank",
        "you",
        "a",
        "lot",
        "so",
        "much",
        "thx",
        "ty",
        "cool",
        "nice",
        "great",
        "lol",
        "haha",
        "hmm",
        "hmmm",
        "sure",
        "yes",
        "yep",
        "yeah",
        "no",
        "nope",
        "hi",
        "hello",
        "hey",
        "good",
        "job",
        "work",
        "awesome",
        "perfect",
        "sounds",
        "looks",
        "that",
        "this",
        "it",
        "lgtm",
        "ship",
        "let's",
        "lets",
        "do",
        "go",
        "ahead",
        "got",
        "done",
        "wow",
        "fine",
        "excellent",
        "amazing",
        "love",
        "and",
        "looks",
        "good",
        "right",
        "alright",
        "all",
    ]
)
QUESTION_START = rx(
    r"^(?:what|why|how|where|when|which|who|whose|can you|could you|would you|will you|should we|should i|do we"
    r"|does|did|is there|are there|is it|are we|have we|any idea)\b"
)
SPECULATION = rx(
    r"\b(?:maybe|perhaps|possibly|probably|i think|i guess|i'm guessing|im guessing|i am guessing|i wonder"
    r"|i suspect|not sure|i'm not sure|unsure|we might|we could|might need|might want|could try|at some point"
    r"|someday|some day|one day|what do you think|would it make sense|not certain|i believe|i assume|eventually)\b"
)
ONE_OFF = rx(
    r"\b(?:for (?:this|the current|the)\s+(?:task|ticket|check|build|release|bug|demo|pr|change|commit|session"
    r"|issue|story|file|run|one|time being|moment|fix|test|step|sprint|migration|feature|branch)"
    r"|in this (?:pr|branch|commit|change|session|task|ticket|file|diff|function|test)"
    r"|just for|only for this|this time|right now|for now|today|tonight|tomorrow|at the moment|temporarily"
    r"|for the time being|never ?mind|while you'?re at it|next sprint|this one|the last change|(?:that|this) last"
    r"|revert (?:that|this|it|the last)|(?:only|just) touch|we'?ll [^.;]*\blater\b|until (?:we|i|the)\b"
    r"|(?:just )?this once|just once|one time only|for (?:the|my|our) (?:demo|meeting|presentation|call|review))"
)
LIFECYCLE = rx(
    r"\b(?:is|are|'s|'re)\s+(?:still\s+|now\s+|currently\s+)?(?:in\s+)?(?:active\s+|early\s+|public\s+|private\s+"
    r"|closed\s+|open\s+)?(?P<stage>development|production|beta|alpha|maintenance(?: mode)?|pre-?release|preview"
    r"|prototype|mvp)\b"
    r"|\bruns?\s+in\s+(?P<stage2>production)\b"
    r"|\b(?:has|have)\s+(?:real|paying|production|actual|live)\s+(?:users|customers|data|trip data|traffic)\b"
    r"|\bnobody uses\b|\bno (?:production )?(?:users|consumers|customers)\b|\bpublished on\b|\bis live\b"
    r"|\bnot (?:yet )?released\b"
)
CORRECTION_LEAD = rx(
    r"^(?:(?:no|nope)\b[\s,.!:;-]+|actually\b[\s,:-]*|(?:that'?s|that is|this is|it'?s|it is)\s+(?:wrong|not right"
    r"|not correct|incorrect|not true|not how)\b[\s,.!:;-]*|(?:wrong|incorrect)\b[\s,.!:;-]+|(?:you'?re|you are)\s+"
    r"wrong\b[\s,.!:;-]*)"
)
# A correction that says the state changed is durable even without a contrast ("Actually it retries 5 times now").
STATE_CHANGE = rx(
    r"\bnow\b|\bno longer\b|\banymore\b|\bany more\b|\bthese days\b|\bwe (?:changed|switched|moved|migrated)\b"
)
# A correction phrased as an instruction ("use X instead of Y") is a rule to follow, not just a fact.
IMPERATIVE_START = rx(
    r"^(?:please\s+)?(?:use|keep|avoid|prefer|put|place|run|call|write|return|name|pin|follow|stick to|default to)\b"
)
STOP_DOING = rx(r"^(?:please\s+)?stop\s+\w+ing\b")
CONTRAST = rx(r"\binstead\b|\brather than\b|,\s*not\s+|\bnot\s+(?:as|at|from|in|by|on|to|with)\b|\s-\s*not\b")
RATIONALE = rx(r"\bbecause\b|\bsince\b|,\s*so\s+|\bso that\b|\s-\s+(?:we|the|it|they|users|our)\b|\botherwise\b")
REPLACED = rx(
    r"(?:instead of|rather than)\s+(?P<a>[^,.;!?]+)|(?:,|\s-)\s*not\s+(?:as\s+|by\s+|from\s+|at\s+|in\s+|to\s+)?"
    r"(?P<b>[^,.;!?]+)"
)

# Durable signals, with the kind they suggest (first match wins inside one group; groups are ordered by kind).
DECISION = rx(
    r"\b(?:we decided|we've decided|we have decided|decision:|we chose|we've chosen|we have chosen|we'?re going with"
    r"|we are going with|we settled on|we agreed|we'?ve agreed)\b"
)
PREFERENCE = rx(r"^(?:please\s+)?prefer\b|\b(?:i|we)\s+(?:personally\s+|generally\s+|really\s+)?prefer\b")
PREFERENCE_SOFT = rx(r"\b(?:i|we)\s+(?:personally\s+)?(?:like|love|want|hate|dislike|'d like|would like)\b")
CONSTRAINT = rx(
    r"\b(?:always|never)\b|(?:^|[;:,]\s*|\s-\s*|\bplease\s+)(?:don'?t|do not|dont|doesn'?t|never)\s+\w+"
    r"|\b(?:must|mustn'?t|shall not|may not|cannot|can'?t be|is not allowed|are not allowed|not allowed"
    r"|is forbidden|are forbidden|is required|are required|required to|need to|needs to|has to|have to)\b"
    r"|(?:^|[;:,]\s*|\s-\s*|\bplease,?\s+)no\s+[@\w`]|\bonly\b"
)
CONVENTION = rx(
    r"\b(?:should|shouldn'?t|should not)\b|\b(?:every|everywhere|whenever|each time|every time|by default"
    r"|in general|as a rule|anything else|any other|everyone|nobody|no one)\b"
    r"|\b(?:from now on|going forward|in the future|moving forward|henceforth|from here on)\b"
    r"|\bwe\s+(?:only\s+)?(?:use|build|write|deploy|ship|release|host|keep|follow|store|target|pin|test|lint"
    r"|format|require|avoid|run|generate|version|name|tag|squash|rebase|merge)\b|\bwe(?:'re| are) using\b"
    r"|\bwe(?:'ve| have)? switched\b|\bwe now use\b|\bwe no longer\b|\bno longer (?:use|used|supported|allowed)\b"
    r"|\bwe(?:'re| are) (?:moving|migrating) (?:off|away from|to)\b"
    r"|\bwe(?:'ve| have)? (?:moved|migrated) (?:off|away|to)\b"
    r"|\b(?:is|are) (?:now )?deprecated\b"
    r"|\bbefore (?:every |each |you )?(?:commit(?:ting)?|push(?:ing)?|merg(?:e|ing)|releas(?:e|ing)|deploy(?:ing)?)\b"
    r"|^(?:please\s+)?(?:use|keep|avoid|pin|follow|stick to|default to|favou?r|name|put|place|prefix|suffix)\b"
    r"(?!\s+(?:this|that|these|those|it|them)\b)"
    r"|\b(?:is|are|get|gets)\s+(?:named|stored|prefixed|suffixed|written|formatted|generated|kept|managed|built"
    r"|made|cut|deployed|released|published|versioned|pinned|cached|partitioned|hashed|encrypted|signed|validated"
    r"|redeployed|backported|squashed|rebased|reviewed|enforced|case-insensitive|case-sensitive|immutable"
    r"|append-only)\b"
    r"|\bfollows?\s+(?:the\s+)?(?:pattern|convention|format|scheme|style)\b|\b(?:uses|go through|goes through)\s+\S"
    r"|\b(?:runs?|built|builds?|checks?|tested)\s+(?:\w+\s+){0,2}with\s+`"
)
FACT = rx(
    r"^remember\b|\bremember (?:that|this)\b|\bdon'?t forget\b|\bkeep in mind\b|\bnote that\b|\bfyi\b"
    r"|\bwe (?:only )?support\b|\bour\s+[\w-]+(?:\s+[\w-]+)?\s+(?:is|are)\b|\bis the (?:last|first|only)\b"
)
USER_SCOPE = rx(
    r"\b(?:in|across|for)\s+(?:all|every|each|any)\s+(?:of\s+)?(?:my|our)?\s*(?:[\w-]+\s+)?(?:projects?|repos"
    r"|repositories|repository|codebases?)\b|\bi personally\b|\beverywhere i work\b|\bacross (?:my )?projects\b"
)
LEADS = rx(
    r"^(?:(?:please\s+)?remember(?: that)?[\s,:;-]+|don'?t forget(?: that)?[\s,:;-]+|keep in mind(?: that)?[\s,:-]+"
    r"|note that\s+|fyi[\s,:-]+|as i said[\s,:-]+|again[\s,:-]+|also[\s,:-]+|yes[\s,:-]+|ok(?:ay)?[\s,:-]+"
    r"|so[\s,:-]+|and[\s,:-]+|please[\s,]+(?=\w))"
)
DEICTIC_START = rx(r"^(?:it|this|that|these|those|they|them|he|she|here|there)\b(?!\s+(?:is|are)\s+(?:the|a|an)\b)")


def is_chatter(text: str) -> bool:
    """English chatter ("ok", "thanks a lot"). A text with letters outside a-z (Chinese, umlauts) is never
    English chatter: :func:`memstone.capture._language.read_sentence` judges it (it used to pass as chatter
    because it had no English word at all)."""
    words = re.findall(r"[a-z']+", text.lower())
    if any(ch.isalpha() and not ("a" <= ch.lower() <= "z") for ch in text):
        return False
    return len(words) <= 6 and all(w in CHATTER_WORDS for w in words)


def lifecycle_stage(s: str) -> str | None:
    m = LIFECYCLE.search(s)
    if m is None:
        return None
    stage = m.group("stage") or m.group("stage2")
    return stage.lower().split()[0] if stage else None
