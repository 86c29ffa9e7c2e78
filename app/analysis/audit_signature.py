"""The permutation signature of an audit group: which mapping of pairs explains its labels.

When labels miss their own pair's mean, a bug often gave each pair the mean of another pair
of the same file in a systematic way. Candidate mappings are tried: the k-th pair in file
order (first or last appearance) receives the mean of the k-th pair in another order (sorted
by output, by source, by source then output; or file order shifted by a few rows). The one
that explains most labels is reported when it beats the identity.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from meaningbench.analysis.pair_text import normalise

SHIFTS = (1, 2, 3)


def _orders(pairs: pd.DataFrame) -> dict[str, np.ndarray]:
    """Candidate orders of one file's pairs (positions into `pairs`)."""
    src = [normalise(s) for s in pairs["source"]]
    out_ = [normalise(o) for o in pairs["output"]]
    n = len(pairs)
    return {
        "file order (first appearance)": np.argsort(pairs["first"].to_numpy(), kind="stable"),
        "file order (last appearance)": np.argsort(pairs["last"].to_numpy(), kind="stable"),
        "sorted by output text": np.array(sorted(range(n), key=lambda i: out_[i]), dtype=int),
        "sorted by source text": np.array(sorted(range(n), key=lambda i: src[i]), dtype=int),
        "sorted by source, then output": np.array(
            sorted(range(n), key=lambda i: (src[i], out_[i])), dtype=int
        ),
    }


def _candidate_maps(pairs: pd.DataFrame) -> list[tuple[str, np.ndarray]]:
    """(description, target) where target[p] is the pair whose mean pair p would receive."""
    orders = _orders(pairs)
    n = len(pairs)
    maps: list[tuple[str, np.ndarray]] = []
    for a_name in ("file order (first appearance)", "file order (last appearance)"):
        a = orders[a_name]
        for b_name, b in orders.items():
            if b_name.startswith("file order"):
                continue
            target = np.empty(n, dtype=int)
            target[a] = b
            maps.append(
                (f"the k-th pair in {a_name} got the mean of the k-th pair {b_name}", target)
            )
        for shift in SHIFTS:
            for sign in (1, -1):
                target = np.full(n, -1, dtype=int)
                k = sign * shift
                lo, hi = max(0, -k), min(n, n - k)
                if hi <= lo:  # a file shorter than the shift
                    continue
                target[a[lo:hi]] = a[lo + k : hi + k]
                maps.append((f"labels shifted by {k:+d} rows in {a_name}", target))
    return maps


def signature(
    group: pd.DataFrame, file_pairs: pd.DataFrame, tol: float
) -> tuple[np.ndarray, str | None, float | None, float | None, np.ndarray]:
    """Per label: off its own mean but on another pair's; the best mapping, its share, the
    identity's share, and per label the mean the mapping gives it."""
    means = file_pairs["raw_mean"].to_numpy(dtype=np.float64)
    pos = {k: i for i, k in enumerate(file_pairs["key"])}
    own = np.array([pos[k] for k in group["key"]], dtype=int)
    labels = group["label"].to_numpy(dtype=np.float64)
    sorted_means = np.sort(means)
    lo = np.searchsorted(sorted_means, labels - tol - 1e-9, side="left")
    hi = np.searchsorted(sorted_means, labels + tol + 1e-9, side="right")
    near = hi - lo  # pairs of this file whose mean equals the label
    own_equal = np.abs(labels - means[own]) <= tol + 1e-9
    other = ~own_equal & (near > 0)
    identity = float(own_equal.mean()) if own.size else None
    best: tuple[str | None, float, np.ndarray] = (None, -1.0, np.full(own.size, np.nan))
    for candidate, target in _candidate_maps(file_pairs):
        t = target[own]
        given = np.where(t >= 0, means[np.maximum(t, 0)], np.nan)
        hit = float(np.mean(np.abs(labels - given) <= tol + 1e-9))
        if hit > best[1]:
            best = (candidate, hit, given)
    name, share, mapped = best
    if name is None or identity is None or share <= identity:
        return other, None, None, identity, np.full(own.size, np.nan)
    return other, name, share, identity, mapped
