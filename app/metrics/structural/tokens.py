"""Word tokenisation shared by scenes, sentence splitting and word alignment.

Scenes store token indices, so the source must be cut into words the same way when a scene
is drawn in the editor, proposed by a parser, and scored: one regex, kept here.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# A word keeps inner hyphens and apostrophes ("well-known", "don't"); numbers keep inner
# separators ("19:09", "1,000.5"); anything else that is not a space is one token.
_TOKEN = re.compile(
    r"\d+(?:[.,:/]\d+)*"
    r"|\w+(?:[-'’]\w+)*"
    r"|[^\w\s]",
    re.UNICODE,
)

# Function words: they align everywhere, so they do not decide which output sentence a
# scene went to (they may still be the centre of a participant, e.g. a pronoun).
_STOPWORD_LIST = """
    a an the and or but nor so yet for of to in on at by with from into onto upon over under
    about above below after before between through during without within against among
    as than then that this these those there here which who whom whose what when where why how
    is are was were be been being am do does did done doing have has had having
    will would shall should can could may might must ought
    it its it's he him his she her hers they them their theirs we us our ours you your yours
    i me my mine not no if while because although though since until unless also too very
    just only even such both either neither each every all any some other another own same
    up down out off again further once more most much many few less least
    's ' " ’
"""
STOPWORDS = frozenset(_STOPWORD_LIST.split())


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """Word tokens with character offsets (offsets let views highlight the source text)."""
    return [Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def words(text: str) -> list[str]:
    return [t.text for t in tokenize(text)]


@lru_cache(maxsize=65536)
def is_punct(token: str) -> bool:
    return bool(token) and all(unicodedata.category(ch).startswith(("P", "S")) for ch in token)


@lru_cache(maxsize=65536)
def is_content(token: str) -> bool:
    return not is_punct(token) and token.lower() not in STOPWORDS


@lru_cache(maxsize=65536)
def normalise(token: str) -> str:
    """The form exact matching compares: case-folded, curly apostrophes made straight."""
    return token.casefold().replace("’", "'")
