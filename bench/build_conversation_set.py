"""Build ``bench/data/conversation.jsonl``: turn-level questions over MemoryCode's multi-session dialogues.

    .venv/bin/python bench/build_conversation_set.py [--dialogues 211-360:6] [--per-dialogue 44]

Deterministic (no model, no randomness beyond SHA-256 of ids). One Memory per dialogue, one entry per turn
("Speaker: words", as the dialogue writes it), one ``remember`` per session, so a session is a Revision and the
sessions are in time order. Questions are generated from each session's own annotation (``type``/``topic``),
worded as a person would ask them, never copied from a turn:

- ``temporal``: "When did Emma first ask Oliver to end variable names with '_m'?" (an instruction's add or
  update session), "When did Emma and Oliver talk about contract renewal negotiations?" (a filler session).
- ``single``: "What did Emma tell Oliver about contract renewal negotiations?"; "Which tool did Emma want
  Oliver to use for video calls?".
- ``multi``: "What naming rules did Emma give Oliver for function argument names over time?" (the stating turn
  of every session that adds or updates the rule).
- ``two-turn``: "How did Oliver answer when Emma asked him to end variable names with '_m'?" (the mentor's
  turn and the reply after it).

The file holds the questions and gold turn ids only; the turns are read from MemoryCode in place (never
copied) by :func:`conversation`. Gold turns are found by the instruction's distinguishing value (the words that
differ between its versions,
e.g. ``'_m'``, ``Zoom``), or for fillers by the overlap of content words with the topic. The split is by
dialogue: ``split(d)`` is the same function ``bench_retrieval.py`` uses for every MemoryCode family.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEMORYCODE = Path(os.environ.get("MEMORYCODE_DIR", "/work/shared/data/memorycode"))
OUT = HERE / "data" / "conversation.jsonl"
STOP = set(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "for",
        "in",
        "on",
        "with",
        "at",
        "by",
        "from",
        "as",
        "is",
        "are",
        "be",
        "this",
        "that",
        "their",
        "our",
        "your",
        "its",
        "into",
        "about",
        "through",
        "between",
        "across",
        "upcoming",
        "different",
        "including",
        "better",
        "effective",
    ]
)


def split(dialogue: int) -> str:
    """dev or heldout, by dialogue id (the same for every MemoryCode family)."""
    return "dev" if hashlib.sha256(f"split:{dialogue}".encode()).digest()[0] % 2 == 0 else "heldout"


def _h(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:4], "big")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_']+", text.lower())


def distinguishing(variant: str, variants: list[str]) -> str:
    """The words of one version that the other versions lack (the value the rule sets)."""
    quoted = re.findall(r"'([^']+)'", variant)
    if quoted:
        return quoted[0]
    if len(variants) > 1:
        others = set(w for v in variants if v != variant for w in v.split())
        own = [w for w in variant.split() if w not in others]
        if own:
            return " ".join(own)
    return ""


def rule_phrase(variant: str) -> str:
    """'always end variable names with '_m'' -> 'end variable names with '_m''."""
    v = variant.strip().rstrip(".")
    for lead in ("always ", "never "):
        if v.lower().startswith(lead) and lead == "always ":
            return v[len(lead) :]
    return v


def value_turns(turns: list[str], value: str) -> list[int]:
    if not value:
        return []
    pat = re.compile(r"(?<![A-Za-z0-9])" + re.escape(value.lower()) + r"(?![A-Za-z0-9])")
    return [i for i, t in enumerate(turns) if pat.search(t.lower())]


def topic_turns(turns: list[str], topic: str, k: int = 2) -> list[int]:
    keys = {w for w in _words(topic) if w not in STOP and len(w) > 2}
    scored = []
    for i, t in enumerate(turns):
        ws = set(_words(t))
        overlap = len(keys & ws)
        if overlap:
            scored.append((-overlap, i))
    scored.sort()
    need = max(1, min(2, len(keys) // 3))
    return sorted(i for o, i in scored[:k] if -o >= need)


def session_turns(text: str) -> list[str]:
    """A session's turns ("Speaker: words"), as entries: split at blank lines, cut to memstone's entry limit."""
    return [t.strip()[:7000] for t in text.split("\n\n") if t.strip()]


def conversation(dialogue: int) -> list[list[tuple[str, str]]]:
    """Sessions of one dialogue as (turn id, text) lists: what the benchmark writes, one remember per session."""
    data = json.loads((MEMORYCODE / "dataset" / f"dialogue_{dialogue}.json").read_text())
    conv = f"c{dialogue:03d}"
    return [
        [(f"{conv}-s{s:03d}-t{i:03d}", t) for i, t in enumerate(session_turns(session["text"]))]
        for s, session in enumerate(data["sessions"])
    ]


def lower_first(s: str) -> str:
    return s[:1].lower() + s[1:] if s else s


def build(dialogues: list[int], per_dialogue: int) -> list[dict[str, object]]:
    topics = json.loads((MEMORYCODE / "topics.json").read_text())
    instr = {t["id"]: t for t in topics["instructions"]}
    finstr = {t["id"]: t for t in topics["fillers_instruction"]}
    rows: list[dict[str, object]] = []
    for d in dialogues:
        data = json.loads((MEMORYCODE / "dataset" / f"dialogue_{d}.json").read_text())
        mentor, mentee = data["context"]["mentor"], data["context"]["mentee"]
        conv = f"c{d:03d}"
        queries: list[dict[str, object]] = []
        stating: dict[int, list[str]] = {}  # instruction id -> stating turn of each session
        for s, session in enumerate(data["sessions"]):
            turns = session_turns(session["text"])
            ids = [f"{conv}-s{s:03d}-t{i:03d}" for i in range(len(turns))]
            types = session["type"] if isinstance(session["type"], list) else ast.literal_eval(session["type"])
            tops = session["topic"] if isinstance(session["topic"], list) else ast.literal_eval(session["topic"])
            ins = [x for x in data["instructions"][s] if x != -1]
            fil = data["fillers"][s]  # one filler (or filler-instruction) id per session, -1 for none
            ins_iter = iter(ins)
            for ty, topic in zip(types, tops, strict=True):
                qid = f"{conv}-s{s:03d}-{len(queries):03d}"
                if ty in ("instruction-add", "instruction-update"):
                    tid, _version = next(ins_iter)
                    variants = instr[tid]["text"]
                    value = distinguishing(topic, variants)
                    hits = value_turns(turns, value)
                    if not hits:
                        continue
                    rule = rule_phrase(topic)
                    stating.setdefault(tid, []).append(ids[hits[0]])
                    first = "first ask" if ty == "instruction-add" else "change the rule and ask"
                    queries.append(
                        {
                            "kind": "temporal",
                            "text": f"When did {mentor} {first} {mentee} to {rule}?",
                            "gold": [ids[i] for i in hits[:2]],
                        }
                    )
                    if hits[0] + 1 < len(turns):
                        queries.append(
                            {
                                "kind": "two-turn",
                                "text": f"How did {mentee} answer when {mentor} said to {rule}?",
                                "gold": [ids[hits[0]], ids[hits[0] + 1]],
                            }
                        )
                elif ty in ("filler-instruction-add", "filler-instruction-update"):
                    variants = finstr[fil]["text"] if fil in finstr else [topic]
                    value = distinguishing(topic, variants)
                    hits = value_turns(turns, value)
                    if not hits:
                        continue
                    common = [w for w in topic.split() if w not in value.split()]
                    ask = " ".join(common)
                    queries.append(
                        {
                            "kind": "single",
                            "text": f"What did {mentor} want {mentee} to {ask}?"
                            if _h(qid) % 2
                            else f"Which choice did {mentor} recommend to {mentee} to {ask}?",
                            "gold": [ids[i] for i in hits[:2]],
                        }
                    )
                    queries.append(
                        {
                            "kind": "temporal",
                            "text": f"When did {mentor} tell {mentee} to {lower_first(topic)}?",
                            "gold": [ids[i] for i in hits[:2]],
                        }
                    )
                elif ty in ("filler-add", "filler-update"):
                    hits = topic_turns(turns, topic)
                    if not hits:
                        continue
                    t = lower_first(topic)
                    if _h(qid, "f") % 2:
                        text = f"When did {mentor} and {mentee} talk about {t}?"
                        kind = "temporal"
                    else:
                        text = f"What did {mentor} tell {mentee} about {t}?"
                        kind = "single"
                    queries.append({"kind": kind, "text": text, "gold": [ids[i] for i in hits]})
        for tid, golds in stating.items():
            if len(golds) >= 2:
                obj = instr[tid]["regex"][0][0]
                queries.append(
                    {
                        "kind": "multi",
                        "text": f"What rules did {mentor} give {mentee} for {obj} names over the sessions?"
                        if "name" in instr[tid]["text"][0]
                        else f"How did {mentor}'s advice to {mentee} about {obj}s change over time?",
                        "gold": golds[:4],
                    }
                )
        # A deterministic sample per dialogue keeps the set to a size every mode can run in minutes.
        queries.sort(key=lambda q: _h(conv, q["text"]))
        for n, q in enumerate(queries[:per_dialogue]):
            rows.append({"type": "query", "conv": conv, "id": f"{conv}-q{n:03d}", "split": split(d), **q})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dialogues", default="211-360:6")
    ap.add_argument("--per-dialogue", type=int, default=44)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    span, _, step = args.dialogues.partition(":")
    lo, _, hi = span.partition("-")
    dialogues = list(range(int(lo), int(hi or lo) + 1, int(step or 1)))
    rows = build(dialogues, args.per_dialogue)
    Path(args.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    qs = rows
    kinds: dict[str, int] = {}
    for q in qs:
        kinds[str(q["kind"])] = kinds.get(str(q["kind"]), 0) + 1
    print(
        f"{args.out}: {len(dialogues)} dialogues, {len(qs)} queries {kinds}, "
        f"held-out {sum(q['split'] == 'heldout' for q in qs)}"
    )


if __name__ == "__main__":
    main()
