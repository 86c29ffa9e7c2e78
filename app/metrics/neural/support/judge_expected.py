"""The expected score of a judge's answer (G-Eval style) from its token probabilities.

At the token where the answer's score begins, the model gives a probability to every next
token. Two tokenisations are handled:

- `whole`: every valid score is one token ("1".."5" in most vocabularies; "0".."100" in some).
  P(N) is that token's probability.
- `digits`: every digit is its own token and a score is written digit by digit (SmolLM2,
  Llama 2). P(N) is the product of its digits' probabilities, each given the digits before,
  times the probability that the number stops there. **The stop rule:** a number that no
  further digit can turn into another valid score is complete (on 0–100, "57" and "100"); for
  one that can grow ("5", "10"), the probability of stopping is 1 − the probability of the
  digits that would make it another valid score. So on 0–100 the model is asked for the next
  digit after the prefixes "", "1".."9" and "10", and nothing else.

E = Σ N·P(N) / Σ P(N) over the valid scores, and Σ P(N) is kept as `score_mass` (how much of the
model's probability went to a valid score at all). Any other tokenisation gets no expected
value: the parsed number is the score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


def score_strings(low: int, high: int) -> list[str]:
    return [str(n) for n in range(low, high + 1)]


def growing_prefixes(low: int, high: int) -> list[str]:
    """Every prefix (the empty one included) that some valid score extends by at least one
    digit: where the digit rule needs the model's next-digit probabilities."""
    valid = score_strings(low, high)
    out = {s[:i] for s in valid for i in range(len(s))}
    return sorted(out, key=lambda p: (len(p), p))


def leaves(prefixes: Sequence[str]) -> list[str]:
    """The prefixes not contained in a longer one: forwarding each leaf once gives the
    next-token probabilities after all of its own prefixes too."""
    return [p for p in prefixes if not any(q != p and q.startswith(p) for q in prefixes)]


@dataclass(frozen=True)
class Expected:
    value: float  # on the template's scale
    mass: float  # Σ P(N) over the valid scores
    likeliest: int = 0  # the valid score with the largest P(N)


def from_digit_tree(
    next_digit: Mapping[str, Mapping[str, float]], low: int, high: int
) -> Expected | None:
    """The expected score under the digit rule; `next_digit[prefix][d]` = P(next is d | prefix)
    for every prefix of `growing_prefixes`."""
    valid = set(score_strings(low, high))
    weights: dict[int, float] = {}
    for s in valid:
        p = 1.0
        for i, digit in enumerate(s):
            p *= next_digit[s[:i]].get(digit, 0.0)
        growing = [d for d in "0123456789" if s + d in valid]
        if growing:
            p *= max(0.0, 1.0 - sum(next_digit[s].get(d, 0.0) for d in growing))
        weights[int(s)] = p
    return _expected(weights)


def from_whole_tokens(probs: Mapping[str, float], low: int, high: int) -> Expected | None:
    """The expected score when each valid score is one token; `probs[s]` = P(token s)."""
    return _expected({int(s): probs.get(s, 0.0) for s in score_strings(low, high)})


def _expected(weights: Mapping[int, float]) -> Expected | None:
    mass = sum(weights.values())
    # NaN fails both tests: a model or server that gives it gets no expected score, and
    # nothing that is not a finite number reaches the stored details.
    if not 0.0 < mass < math.inf:
        return None
    value = sum(n * w for n, w in weights.items()) / mass
    likeliest = max(weights, key=lambda n: weights[n])
    return Expected(value, mass, likeliest) if math.isfinite(value) else None
