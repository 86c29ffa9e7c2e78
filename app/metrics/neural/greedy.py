"""BERTScore's greedy matching (Zhang et al. 2020) for one candidate/reference pair.

Every candidate token is matched to its most similar reference token (precision) and every
reference token to its most similar candidate token (recall); the similarities are averaged
with idf weights (or 1, with [CLS]/[SEP] at 0, without idf), F1 is their harmonic mean.
As in bert-score, special tokens take part in the matching as targets, a best-match
similarity below 0 counts as 0, a sentence with no token besides its special tokens scores
0, and an undefined F1 is 0. The best matches are
kept: they are the token alignment the comparison view draws.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from meaningbench.metrics.neural.cache import Embedding


@dataclass(frozen=True)
class IdfWeights:
    """Inverse document frequency over a corpus of M documents: log((M + 1) / (df + 1)).

    A token never seen gets log(M + 1); a token in every document (such as [CLS] and [SEP])
    gets 0. This is bert-score's `get_idf_dict`.
    """

    n_docs: int
    idf: Mapping[int, float]

    def weight(self, token_id: int) -> float:
        value = self.idf.get(token_id)
        return value if value is not None else math.log(self.n_docs + 1)

    @classmethod
    def from_token_ids(cls, docs: Iterable[Iterable[int]]) -> IdfWeights:
        counts: Counter[int] = Counter()
        n = 0
        for ids in docs:
            counts.update(set(ids))
            n += 1
        return cls(n, {i: math.log((n + 1) / (c + 1)) for i, c in counts.items()})


@dataclass(frozen=True)
class Match:
    precision: float
    recall: float
    f1: float
    cand_best: list[int]  # for each candidate token, the index of its best reference token
    cand_sim: list[float]
    ref_best: list[int]  # for each reference token, the index of its best candidate token
    ref_sim: list[float]


def weights(ids: tuple[int, ...], idf: IdfWeights | None, specials: set[int]) -> list[float]:
    if idf is None:
        return [0.0 if i in specials else 1.0 for i in ids]
    return [idf.weight(i) for i in ids]


def greedy_match(
    cand: Embedding,
    ref: Embedding,
    cand_w: list[float],
    ref_w: list[float],
) -> Match:
    import torch

    sim = cand.vectors @ ref.vectors.T
    c_sim, c_best = sim.max(dim=1)
    r_sim, r_best = sim.max(dim=0)
    # bert-score pads each batch with zero similarities, and a zero wins the max when all of a
    # token's similarities are negative (rare: a few layers, a few tokens). Clamping at 0 gives
    # its scores for every sentence but the longest of its batch of 64 (which it leaves
    # unclamped), so the two agree on real data; the paper's max is unclamped.
    c_sim = c_sim.clamp_min(0.0)
    r_sim = r_sim.clamp_min(0.0)
    cw = torch.tensor(cand_w, dtype=torch.float32)
    rw = torch.tensor(ref_w, dtype=torch.float32)
    p = float((c_sim * (cw / cw.sum())).sum())
    r = float((r_sim * (rw / rw.sum())).sum())
    if len(cand.ids) == 2 or len(ref.ids) == 2:
        p = r = 0.0  # bert-score: an empty sentence (special tokens only) scores 0
    f = 2 * p * r / (p + r) if (p + r) != 0 and not math.isnan(p + r) else 0.0
    if math.isnan(f):
        f = 0.0
    return Match(p, r, f, c_best.tolist(), c_sim.tolist(), r_best.tolist(), r_sim.tolist())


def alignment_details(
    cand_tokens: list[str], ref_tokens: list[str], match: Match, digits: int = 5
) -> dict[str, Any]:
    """The compact alignment kept with each score: tokens, best match index and similarity."""
    return {
        "cand": {
            "tokens": cand_tokens,
            "best": match.cand_best,
            "sim": [round(s, digits) for s in match.cand_sim],
        },
        "ref": {
            "tokens": ref_tokens,
            "best": match.ref_best,
            "sim": [round(s, digits) for s in match.ref_sim],
        },
    }
