"""Split a system output into sentences: SAMSA's splitting penalty depends on the count.

pysbd (Python Sentence Boundary Disambiguation, rule-based, the Golden Rules of the Pragmatic
Segmenter) knows abbreviations ("Dr.", "p.m.", "Jan."), initials, numbers and quotes. When it
is not installed a smaller regex splitter with an abbreviation list takes over; it handles
the common cases and says which splitter ran so results can be traced.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_ABBREVIATION_LIST = """
    mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al approx dept est fig inc ltd co corp
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun no nos vol
    gen gov sen rep rev capt col lt sgt u.s u.k a.m p.m ph.d b.a m.a
"""
_ABBREVIATIONS = frozenset(_ABBREVIATION_LIST.split())
# A candidate boundary: sentence-final punctuation, optional closing quotes/brackets, space,
# then something that can open a sentence.
_BOUNDARY = re.compile(r"([.!?…]+[\"'”’)\]]*)\s+(?=[\"'“‘(\[]?[A-Z0-9])")


@lru_cache(maxsize=1)
def _pysbd_segmenter() -> Any | None:
    try:
        import pysbd
    except ImportError:
        return None
    return pysbd.Segmenter(language="en", clean=False, char_span=False)


def splitter_name() -> str:
    if _pysbd_segmenter() is None:
        return "regex"
    import pysbd

    return f"pysbd {getattr(pysbd, '__version__', '')}".strip()


def _regex_split(text: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        before = text[start : m.end(1)]
        last_word = before.rstrip(".!?…\"'”’)]").split()[-1:] or [""]
        word = last_word[0].lower().rstrip(".")
        # "Dr. Smith", "U.S. troops", "J. R. R. Tolkien": no boundary after these.
        if m.group(1).startswith(".") and (word in _ABBREVIATIONS or len(word) == 1):
            continue
        pieces.append(before)
        start = m.end()
    pieces.append(text[start:])
    return pieces


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, stripped, empty ones dropped; a blank text has no sentence."""
    if not text or not text.strip():
        return []
    segmenter = _pysbd_segmenter()
    pieces = segmenter.segment(text) if segmenter is not None else _regex_split(text)
    out = [p.strip() for p in pieces if p and p.strip()]
    # pysbd can leave a lone closing punctuation mark as a "sentence"; glue it back.
    merged: list[str] = []
    for piece in out:
        if merged and not any(ch.isalnum() for ch in piece):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return merged
