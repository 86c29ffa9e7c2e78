"""Sanity checks: pass rates by hand, a toy metric, a real lexical metric, a real study."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pytest

from meaningbench.analysis.sanity import (
    build_sanity_pairs,
    identical_rates,
    run_sanity,
    study_sanity,
    unrelated_rates,
)
from meaningbench.core.controls import under_overlap_bar
from meaningbench.metrics.base import ItemScore, Metric, MetricInfo, Pair
from meaningbench.runtime import CancelToken
from tests.analysis.studybuild import SOURCES, add_items, add_scores


class WordJaccard(Metric):
    """A toy metric: 100 × Jaccard overlap of lower-cased word sets of source and output."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="word_jaccard", label="Jaccard", family="lexical", description="test metric"
    )
    defaults: ClassVar[dict] = {"reference_mode": "source"}

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        out = []
        for p in pairs:
            a = set(re.findall(r"\w+", p.source.lower()))
            b = set(re.findall(r"\w+", p.output.lower()))
            if not b:
                out.append(ItemScore(None, None, error="empty output"))
                continue
            v = 100.0 * len(a & b) / len(a | b)
            out.append(ItemScore(v, v / 100))
        return out


def test_rates_by_hand() -> None:
    # round (half to even): 100, 99, 100, 94, 96, 97
    ident = identical_rates([100.0, 99.4, 99.6, 94.5, 95.5, 96.7])
    assert ident == {
        "95": 5 / 6,
        "96": 5 / 6,
        "97": 4 / 6,
        "98": 3 / 6,
        "99": 3 / 6,
        "100": 2 / 6,
    }
    # round: 0, 0, 2, 4, 6, 1 (0.5 → 0 and 1.5 → 2 under half-to-even)
    unrel = unrelated_rates([0.2, 0.5, 1.5, 4.4, 5.6, 1.0])
    assert unrel == {"5": 5 / 6, "4": 5 / 6, "3": 4 / 6, "2": 4 / 6, "1": 3 / 6, "0": 2 / 6}
    assert np.isnan(identical_rates([np.nan])["95"])


def test_toy_metric_passes_identical_and_word_soup() -> None:
    result = run_sanity(WordJaccard(), SOURCES, unrelated="wordsoup", seed=1)
    assert result.n == len(SOURCES)
    assert all(v == 1.0 for v in result.identical.values())
    assert all(v == 1.0 for v in result.unrelated.values())  # soups share no word
    assert result.n_errors == 0 and result.n_fallback == 0


def test_sampled_unrelated_pairs_satisfy_the_bar() -> None:
    pairs = build_sanity_pairs(SOURCES, unrelated="sampled", seed=3)
    assert pairs.n_fallback == 0
    for s, u in zip(pairs.sources, pairs.unrelated, strict=True):
        assert u in SOURCES and u != s
        assert under_overlap_bar(s, u)
    again = build_sanity_pairs(SOURCES, unrelated="sampled", seed=3)
    assert again.unrelated == pairs.unrelated
    subset = build_sanity_pairs(SOURCES, n=3, seed=0)
    assert len(subset.sources) == 3 and set(subset.sources) <= set(SOURCES)


def test_errors_are_counted_not_failed() -> None:
    pairs = build_sanity_pairs(SOURCES, seed=0)
    pairs.unrelated[0] = "   "  # the toy metric refuses an empty output
    result = run_sanity(WordJaccard(), SOURCES, pairs=pairs)
    assert result.n_errors == 1
    assert result.unrelated["0"] == 1.0  # over the seven scored pairs


def test_real_bleu_scores_identical_pairs_100() -> None:
    result = run_sanity("bleu", SOURCES, seed=0)
    assert result.identical["100"] == 1.0
    assert result.unrelated["5"] == 1.0


def test_study_sanity_uses_the_runs_of_the_study(new_study) -> None:
    ids = add_items(new_study, [(s, s.split(" ", 1)[1], "sys") for s in SOURCES])
    add_scores(new_study, "bleu", dict.fromkeys(ids, 50.0))
    add_scores(new_study, "no_such_metric", dict.fromkeys(ids, 50.0))
    table = study_sanity(new_study, unrelated="sampled", seed=0)
    assert set(table.results) == {"bleu[refs=source]", "no_such_metric"}
    assert table.results["bleu[refs=source]"].identical["100"] == 1.0
    assert table.results["no_such_metric"].error
    frame = table.to_frame()
    assert frame.loc["bleu[refs=source]", "identical =100"] == 1.0
    assert list(frame.columns[:6]) == [
        "identical ≥95",
        "identical ≥96",
        "identical ≥97",
        "identical ≥98",
        "identical ≥99",
        "identical =100",
    ]
    from meaningbench.jobs.metric_specs import configured_names

    chosen = configured_names(["rouge1[refs=source]"], [])
    named = study_sanity(new_study, [(c.name, c.metric, c.config) for c in chosen], n=4)
    assert named.results["rouge1[refs=source]"].n == 4


@pytest.mark.parametrize("mode", ["wordsoup", "sampled"])
def test_progress_and_cancel(mode: str) -> None:
    seen: list[tuple[int, int]] = []
    run_sanity(WordJaccard(), SOURCES, unrelated=mode, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (2 * len(SOURCES), 2 * len(SOURCES))
    token = CancelToken()
    token.cancel()
    from meaningbench.runtime import Cancelled

    with pytest.raises(Cancelled):
        run_sanity(WordJaccard(), SOURCES, cancel=token)


def test_a_single_source_still_gets_a_word_soup() -> None:
    """With one source sentence every study word is in it: the soup falls back to common
    words, still sharing none with the source."""
    from meaningbench.analysis.sanity import build_sanity_pairs
    from meaningbench.core.controls import words

    source = "The quiet river carried the old boat to the sea."
    pairs = build_sanity_pairs([source], unrelated="wordsoup", seed=1)
    [soup] = pairs.unrelated
    soup_words = [w.lower() for w in words(soup)]
    assert len(soup_words) == len(words(source))
    assert not set(soup_words) & {w.lower() for w in words(source)}
