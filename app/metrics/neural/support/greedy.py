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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from meaningbench.metrics.neural.support.cache import Embedding, is_array


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


# Pairs are matched many at a time, padded to the longest of their group: one batched product
# instead of a dozen small tensor operations per pair, whose overhead dominated. A group's
# padded vectors and its similarities each hold at most this many floats (16 MB).
MATCH_GROUP_ELEMENTS = 4 * 2**20


def greedy_match(
    cand: Embedding,
    ref: Embedding,
    cand_w: list[float],
    ref_w: list[float],
) -> Match:
    return greedy_match_many([(cand, ref, cand_w, ref_w)])[0]


def greedy_match_many(
    pairs: Sequence[tuple[Embedding, Embedding, list[float], list[float]]],
) -> list[Match]:
    """`greedy_match` of each (candidate, reference, candidate weights, reference weights)."""
    out: list[Match | None] = [None] * len(pairs)
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0].ids), len(pairs[i][1].ids)))
    if not pairs:
        return []
    dim = int(pairs[0][0].vectors.shape[-1])
    group: list[int] = []
    longest_c = longest_r = 0
    for i in order:
        lc, lr = max(longest_c, len(pairs[i][0].ids)), max(longest_r, len(pairs[i][1].ids))
        n = len(group) + 1
        if group and n * max(lc * lr, (lc + lr) * dim) > MATCH_GROUP_ELEMENTS:
            for k, m in zip(group, _match_group([pairs[j] for j in group]), strict=True):
                out[k] = m
            group, lc, lr = [], len(pairs[i][0].ids), len(pairs[i][1].ids)
        group.append(i)
        longest_c, longest_r = lc, lr
    if group:
        for k, m in zip(group, _match_group([pairs[j] for j in group]), strict=True):
            out[k] = m
    return out  # type: ignore[return-value]


def _match_group(
    pairs: Sequence[tuple[Embedding, Embedding, list[float], list[float]]],
) -> list[Match]:
    if is_array(pairs[0][0].vectors):
        return _matches(pairs, *_maxima_numpy(pairs))
    return _matches(pairs, *_maxima_torch(pairs))


# Per pair of a group: its P, its R, and per candidate / reference token the best match's
# similarity and index on the other side (padded to the group's longest).
Maxima = tuple[
    list[float], list[float], list[list[float]], list[list[int]], list[list[float]], list[list[int]]
]


def _maxima_numpy(
    pairs: Sequence[tuple[Embedding, Embedding, list[float], list[float]]],
) -> Maxima:
    """`_maxima_torch` in numpy, for vectors computed without torch (the same float32
    products and sums, in another order: they agree to about 1e-7)."""
    import numpy as np

    n = len(pairs)
    lc = max(len(c.ids) for c, _, _, _ in pairs)
    lr = max(len(r.ids) for _, r, _, _ in pairs)
    dim = pairs[0][0].vectors.shape[-1]
    cands = np.zeros((n, lc, dim), dtype=np.float32)
    refs = np.zeros((n, lr, dim), dtype=np.float32)
    cw = np.zeros((n, lc), dtype=np.float32)
    rw = np.zeros((n, lr), dtype=np.float32)
    c_pad = np.ones((n, lc), dtype=bool)
    r_pad = np.ones((n, lr), dtype=bool)
    for k, (c, r, c_w, r_w) in enumerate(pairs):
        cands[k, : len(c.ids)] = c.vectors
        refs[k, : len(r.ids)] = r.vectors
        cw[k, : len(c.ids)] = c_w
        rw[k, : len(r.ids)] = r_w
        c_pad[k, : len(c.ids)] = False
        r_pad[k, : len(r.ids)] = False
    sim = np.matmul(cands, refs.transpose(0, 2, 1))
    sim[np.broadcast_to(r_pad[:, None, :], sim.shape)] = -np.inf
    sim[np.broadcast_to(c_pad[:, :, None], sim.shape)] = -np.inf
    c_best, r_best = sim.argmax(axis=2), sim.argmax(axis=1)
    c_sim = np.maximum(np.take_along_axis(sim, c_best[:, :, None], axis=2)[:, :, 0], 0.0)
    r_sim = np.maximum(np.take_along_axis(sim, r_best[:, None, :], axis=1)[:, 0, :], 0.0)
    p_all = ((c_sim * cw).sum(axis=1) / cw.sum(axis=1)).tolist()
    r_all = ((r_sim * rw).sum(axis=1) / rw.sum(axis=1)).tolist()
    return p_all, r_all, c_sim.tolist(), c_best.tolist(), r_sim.tolist(), r_best.tolist()


def _maxima_torch(
    pairs: Sequence[tuple[Embedding, Embedding, list[float], list[float]]],
) -> Maxima:
    import torch

    n = len(pairs)
    lc = max(len(c.ids) for c, _, _, _ in pairs)
    lr = max(len(r.ids) for _, r, _, _ in pairs)
    dim = pairs[0][0].vectors.shape[-1]
    cands = torch.zeros((n, lc, dim), dtype=torch.float32)
    refs = torch.zeros((n, lr, dim), dtype=torch.float32)
    cw = torch.zeros((n, lc), dtype=torch.float32)
    rw = torch.zeros((n, lr), dtype=torch.float32)
    c_pad = torch.ones((n, lc), dtype=torch.bool)
    r_pad = torch.ones((n, lr), dtype=torch.bool)
    for k, (c, r, c_w, r_w) in enumerate(pairs):
        cands[k, : len(c.ids)] = c.vectors
        refs[k, : len(r.ids)] = r.vectors
        cw[k, : len(c.ids)] = torch.tensor(c_w, dtype=torch.float32)
        rw[k, : len(r.ids)] = torch.tensor(r_w, dtype=torch.float32)
        c_pad[k, : len(c.ids)] = False
        r_pad[k, : len(r.ids)] = False
    sim = torch.bmm(cands, refs.transpose(1, 2))
    # Padding never wins a max: a padded column or row is -inf before the maxima.
    sim.masked_fill_(r_pad[:, None, :], -math.inf)
    sim.masked_fill_(c_pad[:, :, None], -math.inf)
    c_sim, c_best = sim.max(dim=2)
    r_sim, r_best = sim.max(dim=1)
    # bert-score pads each batch with zero similarities, and a zero wins the max when all of a
    # token's similarities are negative (rare: a few layers, a few tokens). Clamping at 0 gives
    # its scores for every sentence but the longest of its batch of 64 (which it leaves
    # unclamped), so the two agree on real data; the paper's max is unclamped. Padded
    # positions become 0 here and weigh 0.
    c_sim = c_sim.clamp_min(0.0)
    r_sim = r_sim.clamp_min(0.0)
    p_all = ((c_sim * cw).sum(dim=1) / cw.sum(dim=1)).tolist()
    r_all = ((r_sim * rw).sum(dim=1) / rw.sum(dim=1)).tolist()
    return p_all, r_all, c_sim.tolist(), c_best.tolist(), r_sim.tolist(), r_best.tolist()


def _matches(
    pairs: Sequence[tuple[Embedding, Embedding, list[float], list[float]]],
    p_all: list[float],
    r_all: list[float],
    c_sims: list[list[float]],
    c_bests: list[list[int]],
    r_sims: list[list[float]],
    r_bests: list[list[int]],
) -> list[Match]:
    out = []
    for k, (c, r, _, _) in enumerate(pairs):
        nc, nr = len(c.ids), len(r.ids)
        p, rec = float(p_all[k]), float(r_all[k])
        if nc == 2 or nr == 2:
            p = rec = 0.0  # bert-score: an empty sentence (special tokens only) scores 0
        f = 2 * p * rec / (p + rec) if (p + rec) != 0 and not math.isnan(p + rec) else 0.0
        if math.isnan(f):
            f = 0.0
        out.append(
            Match(
                p,
                rec,
                f,
                c_bests[k][:nc],
                c_sims[k][:nc],
                r_bests[k][:nr],
                r_sims[k][:nr],
            )
        )
    return out


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
