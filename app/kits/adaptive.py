"""Which short items a top-up round asks first, from the ratings already collected.

`kit --top-up --adaptive metrics|systems [--items N]`: the items still short of their k
ratings are put in the order of `meaningbench.analysis.selection_adaptive.next_round`
(where the ranking of the metrics, or of the systems, is least settled by the human
scores collected so far), the items without a human score first, then those with some
ratings but fewer than k, in the study's selection order; `--items N` hands out only the
first N of them. The first round (the raters' queues) is never adaptive: it is the
study's selection order, score-based, system-balanced or random, fixed before anyone rates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy.orm import Session

from meaningbench.analysis.data import load_study_data
from meaningbench.analysis.selection_adaptive import TARGETS, next_round
from meaningbench.annotation.queue import selection_ranks
from meaningbench.annotation.settings import load_settings
from meaningbench.errors import UserError

MAX_ITEMS = 1_000_000


@dataclass(frozen=True)
class TopUpChoice:
    """How a top-up chooses its items: all short items in id order (`adaptive` None), or
    ordered by what the ratings collected leave least settled; at most `items` of them."""

    adaptive: str | None = None
    items: int | None = None
    dimension: str = "meaning"

    def check(self) -> None:
        if self.adaptive is not None and self.adaptive not in TARGETS:
            raise UserError(
                f"--adaptive {self.adaptive!r}: choose {' or '.join(TARGETS)} (what the "
                "ratings rank)"
            )
        if self.items is not None and not 1 <= self.items <= MAX_ITEMS:
            raise UserError(f"--items must lie between 1 and {MAX_ITEMS:,}, not {self.items:,}")


def _base_order(session: Session, item_ids: np.ndarray) -> list[int]:
    """The study's selection order (its first round's) over these items, as row indices."""
    settings = load_settings(session)
    ranks = selection_ranks(session, settings, settings.seed or 0)
    last = len(ranks)
    return sorted(range(item_ids.size), key=lambda r: (ranks.get(int(item_ids[r]), last), r))


def adaptive_item_order(session: Session, choice: TopUpChoice) -> list[int]:
    """Item ids, most useful first for the next round (`choice.adaptive`): the unrated
    items by `next_round`, then the rated ones in the study's selection order."""
    target = choice.adaptive or "metrics"
    data = load_study_data(session, choice.dimension)
    human = np.asarray(data.ratings.scores().raw, dtype=np.float64)
    rated = np.isfinite(human)
    metrics = np.asarray(data.metric_values, dtype=np.float64)
    scored = np.isfinite(metrics).all(axis=0)
    if target == "metrics" and int(scored.sum()) < 2:
        raise UserError(
            "--adaptive metrics reads the metric scores of every item: score the study with "
            f"two metrics or more first ({int(scored.sum())} scored every item)"
        )
    systems = data.items["system"].to_numpy(dtype=object)
    has_system = np.array([isinstance(s, str) and s != "" for s in systems])
    if target == "systems" and len(set(systems[has_system & rated].tolist())) < 2:
        raise UserError(
            "--adaptive systems compares the systems' mean scores: the ratings collected "
            "must cover two systems or more (make the first round's kits, collect them, then "
            "top up)"
        )
    base = _base_order(session, data.item_ids)
    keep = has_system if target == "systems" else np.ones(human.size, dtype=bool)
    rows = np.flatnonzero(keep)
    local = {int(r): k for k, r in enumerate(rows)}
    chosen = next_round(
        target,
        np.where(rated, human, 0.0)[rows],
        metrics[rows][:, scored],
        systems[rows],
        rated[rows],
        [local[r] for r in base if r in local],
        int((~rated[rows]).sum()),
    )
    first = [int(rows[k]) for k in chosen]
    seen = set(first)
    order = first + [r for r in base if r not in seen]
    return [int(data.item_ids[r]) for r in order]
