"""BLANC-help and Coverage with a tiny masked LM built from a config."""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest

from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.blanc import BlancHelpMetric, even_maskings
from meaningbench.metrics.neural.coverage import CoverageMetric, rake_word_scores
from meaningbench.metrics.neural.support.cloze import split_sentences
from tests.metrics.neural.conftest import SENTENCES

LENGTHS = (4, 2, 100)


def _pairs(rows):
    return [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(rows)]


@pytest.mark.parametrize("cls", [BlancHelpMetric, CoverageMetric])
def test_without_a_masked_lm_they_say_why(cls):
    metric = cls()
    availability = metric.availability()
    assert not availability.ok and "masked language model" in availability.reason
    with pytest.raises(UserError, match="masked language model"):
        metric.score_batch(_pairs(SENTENCES[:1]))


def test_split_sentences():
    assert split_sentences("It rained. Then it stopped! Did it? Yes.") == [
        "It rained.",
        "Then it stopped!",
        "Did it?",
        "Yes.",
    ]
    assert split_sentences("Mr. smith came at 3.5 pm.") == ["Mr. smith came at 3.5 pm."]


def test_even_masking_follows_the_paper_rules():
    tokens = ["the", "committee", "post", "##poned", "its", "decision"]
    # gap 2: offset 0 may mask positions 0, 2, 4; offset 1 positions 1, 3, 5.
    # "the"/"its" are too short (< 4), "post" leads a word (>= 2), "##poned" continues one.
    assert even_maskings(tokens, 2, LENGTHS) == [[2], [1, 5]]
    assert even_maskings([], 2, LENGTHS) == []


def test_blanc_with_an_empty_output_is_zero(tiny_mlm):
    metric = BlancHelpMetric(mlm_model=tiny_mlm)
    (item,) = metric.score_batch(_pairs([("The committee postponed its decision.", "")]))
    assert item.raw == 0.0 and item.value == 0.0
    assert item.details["S"][0][1] == item.details["S"][1][0] == 0
    assert item.details["n_masked"] > 0


def _blanc_package():
    """The authors' `blanc` package. It pins torch < 2, so `make test` installs it without
    its dependencies; a plain `pip install -e .[dev]` lacks it and the comparison is skipped.

    Its `__init__` imports models that transformers 5 removed; the scorer module itself
    runs once `transformers.AdamW` exists, so the package module is loaded without its
    `__init__`. punkt data is unavailable offline: both sides split sentences the same way.
    """
    spec = importlib.util.find_spec("blanc")
    if spec is None or spec.origin is None:
        pytest.skip("the blanc package is not installed")
    import torch
    import transformers

    pkg = types.ModuleType("blanc")
    pkg.__path__ = [spec.origin.rsplit("/", 1)[0]]
    sys.modules.setdefault("blanc", pkg)
    transformers.__dict__.setdefault("AdamW", torch.optim.AdamW)
    import blanc.blanc as package

    package.sent_tokenize = split_sentences
    return package


def test_blanc_equals_the_authors_package(tiny_mlm):
    package = _blanc_package()
    rows = [(s, o) for s, o in SENTENCES if o]
    scorer = package.BlancHelp(
        model_name=tiny_mlm, device="cpu", show_progress_bar=False, measure="relative-counts"
    )
    expected = scorer.eval_pairs([s for s, _ in rows], [o for _, o in rows])
    ours = BlancHelpMetric(mlm_model=tiny_mlm).score_batch(_pairs(rows))
    for item, (score, counts) in zip(ours, expected, strict=True):
        assert item.details["S"] == counts
        assert item.raw == pytest.approx(score)


def test_rake_scores_by_hand():
    words = [
        "Linear",
        "constraints",
        "over",
        "the",
        "set",
        "of",
        "natural",
        "numbers",
        "and",
        "linear",
        "systems",
    ]
    # phrases: [linear constraints], [set], [natural numbers], [linear systems]
    # linear: freq 2, degree 4 -> 2.0; constraints, natural, numbers, systems: 2.0; set: 1.0
    scores = rake_word_scores(words)
    assert scores["linear"] == pytest.approx(8.0)  # in two phrases worth 4 each
    assert scores["constraints"] == pytest.approx(4.0)
    assert scores["set"] == pytest.approx(1.0)
    assert "the" not in scores and "of" not in scores


def test_coverage_masks_the_top_keywords(tiny_mlm):
    from meaningbench.metrics.neural.support.models import load_model

    metric = CoverageMetric(mlm_model=tiny_mlm, mask_ratio=0.2)
    loaded = load_model(tiny_mlm, "mlm")
    source = "Linear constraints over the set of natural numbers and linear systems."
    ids, answers, words = metric.masked_source(loaded, source)
    # 12 words (with the full stop) * 0.2 -> 2 masks; "linear" ranks first, then a tie at 4.0
    assert words[:2] == ["Linear", "linear"] or words[0] == "Linear"
    mask = loaded.tokenizer.mask_token_id
    assert all(ids[p] == mask for p in answers)
    assert loaded.tokenizer.convert_ids_to_tokens(answers[min(answers)]) == "linear"


def test_coverage_with_an_empty_output_is_zero(tiny_mlm):
    metric = CoverageMetric(mlm_model=tiny_mlm)
    items = metric.score_batch(_pairs([(SENTENCES[0][0], ""), SENTENCES[1]]))
    assert items[0].raw == 0.0 and items[0].value == 0.0
    for item in items:
        assert 0.0 <= item.details["acc_with"] <= 1.0
        assert item.details["n_masked"] > 0
