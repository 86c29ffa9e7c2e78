"""What one item of a metric costs, relative to the others: the weights of a run's progress.

A battery's items are not alike: a lexical metric scores thousands a second on a CPU, a
neural one (a transformer pass per item) tens, and a cached score is only read. Counting
every item as one made a run of BLEU, chrF, SARI and BERTScore read 76 % done with one
second left while BERTScore had scored nothing. These are orders of magnitude, not
timings: they only have to put each metric's share of a run in the right proportion.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meaningbench.metrics.base import Metric

# Per-item cost by metric family (`MetricInfo.family`), a lexical item being 1.
FAMILY_COST: dict[str, float] = {
    "lexical": 1.0,
    "readability": 1.0,
    "structural": 20.0,  # scene parses and alignments
    "neural": 200.0,  # a transformer forward pass per item
    "trained": 200.0,  # a fine-tuned transformer: the same
}
# A family this table does not know (a plugin's own): between the two.
UNKNOWN_FAMILY_COST = 20.0
# An item whose score is cached: it is read, not computed.
CACHED_COST = 0.05


def item_cost(metric: Metric) -> float:
    """The expected cost of scoring one item with `metric`."""
    return FAMILY_COST.get(metric.info.family, UNKNOWN_FAMILY_COST)
