"""Tokenizers shared by the lexical metrics, memoized.

A source sentence is usually scored against several systems' outputs, and the same text is
seen by several metrics of the battery, so tokenizing once per process pays: tokenizing is
most of what SARI costs.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal, get_args

# sacrebleu's tokenizer names; SARI normalizes with these as HF evaluate and EASSE do.
SacrebleuTokenizer = Literal["13a", "intl", "none"]
SACREBLEU_TOKENIZERS: tuple[str, ...] = get_args(SacrebleuTokenizer)
_CACHE = 2**17

# The regex of NLTK's `wordpunct_tokenize`: runs of word characters, runs of other non-space
# characters. No trained model (punkt) is needed, which matters offline.
_WORDPUNCT = re.compile(r"\w+|[^\w\s]+")


@lru_cache(maxsize=8)
def _sacrebleu_tokenizer(name: str):  # type: ignore[no-untyped-def]
    from sacrebleu.metrics.bleu import _get_tokenizer

    if name not in SACREBLEU_TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {SACREBLEU_TOKENIZERS}")
    return _get_tokenizer(name)()


@lru_cache(maxsize=_CACHE)
def normalize(text: str, lowercase: bool = True, tokenize: str = "13a") -> str:
    """Lowercase (optionally) then tokenize with sacrebleu, tokens joined by single spaces.

    This is `normalize` of HF evaluate's SARI and of EASSE (`easse.utils.preprocessing`).
    """
    if lowercase:
        text = text.lower()
    return str(_sacrebleu_tokenizer(tokenize)(text))


@lru_cache(maxsize=_CACHE)
def wordpunct_tokens(text: str) -> tuple[str, ...]:
    return tuple(_WORDPUNCT.findall(text))
