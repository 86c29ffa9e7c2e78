"""MACE (Hovy et al., 2013): how competent each rater of categorical or ordinal labels is.

Each rater j either knows the item's true label (with probability θ_j, their competence)
and gives it, or does not and draws a label from their own spamming distribution ξ_j.
EM over the items' true labels estimates θ and ξ; θ is the rater-quality weight for
Likert studies. This is the model without the priors of the paper's variational version.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class MaceResult:
    competence: np.ndarray  # θ per rater code
    spam: np.ndarray  # ξ per rater code, over the label codes
    posterior: np.ndarray  # per item, over the label codes


def mace(
    items: np.ndarray,
    raters: np.ndarray,
    labels: np.ndarray,
    n_items: int,
    n_raters: int,
    n_labels: int,
    *,
    iterations: int = 200,
    tol: float = 1e-8,
    seed: int = 0,
) -> MaceResult:
    """EM for MACE on (item code, rater code, label code) triples."""
    items = np.asarray(items, dtype=np.int64)
    raters = np.asarray(raters, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.6, 0.9, n_raters)
    xi = np.full((n_raters, n_labels), 1.0 / n_labels)
    onehot = np.zeros((labels.size, n_labels))
    onehot[np.arange(labels.size), labels] = 1.0
    previous = -np.inf
    post = np.full((n_items, n_labels), 1.0 / n_labels)
    for _ in range(iterations):
        # E step: P(label given | true t) = θ·[given = t] + (1 − θ)·ξ[given].
        spam = (1 - theta[raters]) * xi[raters, labels]
        like = spam[:, None] + theta[raters][:, None] * onehot  # (ratings, true labels)
        log_post = np.zeros((n_items, n_labels))
        np.add.at(log_post, items, np.log(np.maximum(like, 1e-300)))
        top = log_post.max(axis=1, keepdims=True)
        post = np.exp(log_post - top)
        norm = post.sum(axis=1, keepdims=True)
        post /= norm
        loglik = float((np.log(norm) + top).sum())
        # The chance that the rater knew, given the item's true label is t.
        knew_t = theta[raters][:, None] * onehot / like
        p_t = post[items]
        knew = (p_t * knew_t).sum(axis=1)
        # M step.
        count = np.bincount(raters, minlength=n_raters).astype(np.float64)
        theta = np.bincount(raters, weights=knew, minlength=n_raters) / np.maximum(count, 1)
        theta = np.clip(theta, 1e-6, 1 - 1e-6)
        xi = np.zeros((n_raters, n_labels))
        np.add.at(xi, (raters, labels), 1.0 - knew)
        xi = (xi + 1e-6) / (xi + 1e-6).sum(axis=1, keepdims=True)
        if abs(loglik - previous) < tol:
            break
        previous = loglik
    return MaceResult(competence=theta, spam=xi, posterior=post)
