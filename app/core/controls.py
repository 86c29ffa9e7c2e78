"""Control texts: identical, unrelated (word soup or a sampled real sentence) and degraded.

The same constructions serve the sanity checks of the metric battery (MeaningBERT §3.3) and
the hidden control items of an annotation queue (Appraise's DA method), so that a metric and
a rater are tested on the same kind of pair.

Everything here is deterministic given the `random.Random` passed in, so a study's seed
reproduces its control items.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

# Words for vocabularies and length matching; punctuation is a separate token for overlap.
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
# Degraded items follow Appraise, which counts and replaces whitespace-separated tokens.
_WS_TOKEN = re.compile(r"\S+")

# Overlap bar for "unrelated" real sentences (metrics.md): every ROUGE F below 0.20, BLEU below 20.
MAX_ROUGE = 0.20
MAX_BLEU = 20.0


def tokenize(text: str) -> list[str]:
    """Word and punctuation tokens, the project's neutral tokenizer for controls."""
    return _TOKEN.findall(text)


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def make_identical(source: str) -> str:
    """The identity control: the output is the source, verbatim."""
    return source


def build_vocabulary(texts: Iterable[str]) -> list[str]:
    """Distinct lower-cased alphabetic words of `texts`, sorted so a seed reproduces a soup."""
    vocab: set[str] = set()
    for text in texts:
        vocab.update(w.lower() for w in words(text))
    return sorted(vocab)


# Words for a word soup when a study's own vocabulary has none outside a source (a study of
# one source sentence): common English words of every part of speech, none of them rare.
FALLBACK_VOCABULARY: tuple[str, ...] = tuple(
    """
    apple river window garden music silver market winter doctor pencil village mountain
    yellow quiet rapid gentle ancient narrow bright heavy empty famous hidden careful
    carry listen borrow follow answer remember travel measure whisper gather arrive
    bottle ladder blanket island harbor engine candle letter mirror pocket ticket wheel
    slowly rarely almost together outside yesterday perhaps somewhere beneath during
    cloud forest planet kitchen library season bridge castle desert meadow orchard
    painter sailor farmer teacher student neighbor stranger baker tailor hunter
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


def make_word_soup(source: str, vocabulary: Sequence[str], rng: random.Random) -> str:
    """Random words from `vocabulary` that do not occur in `source`, as many as it has words.

    Words are drawn without replacement when the vocabulary allows it, so the soup does not
    repeat one word. Raises ValueError when no vocabulary word lies outside the source.
    """
    own = {w.lower() for w in words(source)}
    pool = sorted({w for w in vocabulary if w and w.lower() not in own})
    if not pool:
        raise ValueError("the vocabulary has no word outside the source")
    n = max(1, len(words(source)))
    chosen = rng.sample(pool, n) if len(pool) >= n else [rng.choice(pool) for _ in range(n)]
    return " ".join(chosen)


@lru_cache(maxsize=1)
def _rouge_scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


@lru_cache(maxsize=1)
def _bleu() -> Any:
    from sacrebleu.metrics import BLEU

    # sacrebleu's sentence BLEU defaults: 13a tokenizer, exp smoothing, effective order.
    return BLEU(effective_order=True)


def overlap(a: str, b: str) -> dict[str, float]:
    """Lexical overlap of two texts: ROUGE-1/2/L F (Porter stemmer) and sentence BLEU.

    ROUGE F is symmetric; BLEU is not, so the larger of the two directions is reported — a
    pair under the bar is under it whichever text is called the reference.
    """
    rouge = _rouge_scorer().score(a, b)
    bleu = _bleu()
    bleu_ab = bleu.sentence_score(a, [b]).score
    bleu_ba = bleu.sentence_score(b, [a]).score
    return {
        "rouge1": float(rouge["rouge1"].fmeasure),
        "rouge2": float(rouge["rouge2"].fmeasure),
        "rougeL": float(rouge["rougeL"].fmeasure),
        "bleu": float(max(bleu_ab, bleu_ba)),
    }


def under_overlap_bar(
    a: str, b: str, *, max_rouge: float = MAX_ROUGE, max_bleu: float = MAX_BLEU
) -> bool:
    o = overlap(a, b)
    return (
        o["rouge1"] < max_rouge
        and o["rouge2"] < max_rouge
        and o["rougeL"] < max_rouge
        and o["bleu"] < max_bleu
    )


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def sample_unrelated(
    source: str,
    candidates: Sequence[str],
    rng: random.Random,
    *,
    max_rouge: float = MAX_ROUGE,
    max_bleu: float = MAX_BLEU,
    tries: int = 50,
) -> str | None:
    """A real sentence from `candidates` whose overlap with `source` is under the bar.

    Candidates are tried in a random order, at most `tries` of them (each costs a ROUGE and
    two BLEU computations); None when none passes, and the caller falls back to a word soup.
    """
    if not candidates:
        return None
    own = _norm(source)
    order = list(range(len(candidates)))
    rng.shuffle(order)
    checked = 0
    for index in order:
        if checked >= tries:
            break
        candidate = candidates[index]
        if not candidate or not candidate.strip() or _norm(candidate) == own:
            continue
        checked += 1
        if under_overlap_bar(source, candidate, max_rouge=max_rouge, max_bleu=max_bleu):
            return candidate
    return None


def degraded_phrase_length(n_tokens: int) -> int:
    """Appraise's "bad reference" phrase length for an output of `n_tokens` tokens."""
    if n_tokens <= 5:
        length = 2
    elif n_tokens <= 8:
        length = 3
    elif n_tokens <= 15:
        length = 4
    elif n_tokens <= 20:
        length = 5
    else:
        length = 6
    return min(length, n_tokens)


def _phrase_start(n_tokens: int, length: int, rng: random.Random) -> int:
    # Keep the first and the last token when the output is long enough: a phrase replaced at
    # the very edge is easier to spot than one in the middle, and Appraise avoids the edges.
    if n_tokens - length - 1 >= 1:
        return rng.randint(1, n_tokens - length - 1)
    return rng.randint(0, n_tokens - length)


def make_degraded(
    output: str, donors: Sequence[str], rng: random.Random
) -> tuple[str, dict[str, int | str]]:
    """Appraise's "bad reference": a phrase of `output` replaced by a same-length donor phrase.

    Tokens are whitespace-separated, as in Appraise; the text around the phrase is kept
    byte for byte. The donor is a random `donors` text with enough tokens that differs from
    the output (when none has enough, the donors' tokens are pooled in order). Returns the
    degraded text and details: `start` and `length` (token positions in the output),
    `replaced` (the original phrase), `donor_index` (-1 for the pool), `donor_start`,
    `donor_span` (the inserted phrase). Raises ValueError for an empty output or too few
    donor tokens.
    """
    spans = [m.span() for m in _WS_TOKEN.finditer(output)]
    if not spans:
        raise ValueError("cannot degrade an empty output")
    n = len(spans)
    length = degraded_phrase_length(n)
    start = _phrase_start(n, length, rng)
    replaced = output[spans[start][0] : spans[start + length - 1][1]]

    own = _norm(output)
    order = list(range(len(donors)))
    rng.shuffle(order)
    donor_index, donor_tokens = -1, []
    for index in order:
        tokens = donors[index].split()
        if len(tokens) >= length and _norm(donors[index]) != own:
            donor_index, donor_tokens = index, tokens
            break
    if donor_index < 0:
        donor_tokens = [t for d in donors if _norm(d) != own for t in d.split()]
        if len(donor_tokens) < length:
            raise ValueError(f"the donors have fewer than {length} tokens to insert")
    donor_start = _phrase_start(len(donor_tokens), length, rng)
    donor_span = " ".join(donor_tokens[donor_start : donor_start + length])

    text = output[: spans[start][0]] + donor_span + output[spans[start + length - 1][1] :]
    details: dict[str, int | str] = {
        "start": start,
        "length": length,
        "replaced": replaced,
        "donor_index": donor_index,
        "donor_start": donor_start,
        "donor_span": donor_span,
    }
    return text, details
