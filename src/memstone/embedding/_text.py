"""Character-based splitting of long texts at paragraph, sentence or word boundaries."""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections.abc import Callable

from ..domain.errors import InvalidInput
from ..ports import EmbeddingResult, InferenceUsage

Encoder = Callable[[tuple[str, ...]], tuple[list[tuple[float, ...]], int]]  # a batch -> (its vectors, its tokens)

# Candidate cut points, best first; a cut goes right after the match.
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SENTENCE = re.compile("[.!?;\u2026](?=\\s)|[\u3002\uff01\uff1f\uff1b]")  # ideographic full stop, full-width ! ? ;
_LINE = re.compile(r"\n")
_SPACE = re.compile(r"\s")
_CLAUSE = re.compile("[,:](?=\\s)|[\uff0c\u3001\uff1a]")  # plus full-width comma, ideographic comma, full-width colon
_BOUNDARIES = (_PARAGRAPH, _SENTENCE, _LINE, _CLAUSE, _SPACE)


def _best_cut(text: str, start: int, limit: int, min_len: int) -> int:
    """An index in ``(start, limit]`` to cut at: the last good boundary in the window's second part."""
    lo = start + min_len
    for pattern in _BOUNDARIES:
        last = -1
        for m in pattern.finditer(text, lo, limit):
            last = m.end()
        if last > start:
            return last
    cut = limit
    # Never separate a base character from its combining marks.
    while cut > start + 1 and unicodedata.combining(text[cut]):
        cut -= 1
    return cut


def split_by_chars(text: str, max_chars: int) -> tuple[str, ...]:
    """Split ``text`` into pieces of at most ``max_chars`` characters, without overlap.

    A text that fits comes back unchanged as one piece. Otherwise each cut goes at the last paragraph break,
    else sentence end (``. ! ? ;`` followed by a space, or their CJK full-width forms), else line break, clause mark or
    whitespace in the second half of the window, and only as a last resort mid-word. Pieces are stripped of
    surrounding whitespace; whitespace-only pieces are dropped. Nothing of the text's content is lost.
    """
    if max_chars < 1:
        raise InvalidInput(f"max_chars must be at least 1, got {max_chars}")
    if len(text) <= max_chars:
        return (text,)
    pieces: list[str] = []
    n = len(text)
    start = 0
    while start < n and text[start].isspace():
        start += 1
    while n - start > max_chars:
        cut = _best_cut(text, start, start + max_chars, max(1, max_chars // 2))
        piece = text[start:cut].strip()
        if piece:
            pieces.append(piece)
        start = cut
        while start < n and text[start].isspace():
            start += 1
    tail = text[start:].strip()
    if tail:
        pieces.append(tail)
    return tuple(pieces) if pieces else (text[:max_chars],)


def check_texts(texts: object) -> None:
    """Refuse anything but a tuple of str as the input of ``embed``."""
    if not isinstance(texts, tuple):
        raise InvalidInput(f"texts must be a tuple of str, got {type(texts).__name__}")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidInput(f"texts[{i}] is {type(text).__name__}, not str")


async def embed_in_batches(texts: tuple[str, ...], batch_size: int, encode: Encoder) -> EmbeddingResult:
    """Check ``texts`` and embed them ``batch_size`` at a time: each batch is one ``encode`` call, on a worker
    thread. ``usage`` sums the batches' tokens and counts the calls."""
    check_texts(texts)
    vectors: list[tuple[float, ...]] = []
    tokens = 0
    calls = 0
    for start in range(0, len(texts), batch_size):
        batch_vectors, batch_tokens = await asyncio.to_thread(encode, texts[start : start + batch_size])
        vectors.extend(batch_vectors)
        tokens += batch_tokens
        calls += 1
    return EmbeddingResult(vectors=tuple(vectors), usage=InferenceUsage(calls=calls, input_tokens=tokens))
