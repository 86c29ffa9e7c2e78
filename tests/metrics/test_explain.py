"""Each metric's `explain` hook: what the compare view draws for a score.

Lexical metrics list the n-grams an output shares with its references, checked against the
matching n-gram counts sacrebleu's BLEU reports; SARI takes itself apart into the numbers
it scores; SAMSA shows its scenes, as stored when the stored score used today's scenes; a
metric without parts to show says so plainly.
"""

from __future__ import annotations

from typing import Any

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.explain import (
    ExplainItem,
    NgramMatches,
    NoExplanation,
    SceneScores,
    ngram_matches,
)
from meaningbench.metrics.lexical.sari import SariExplanation
from meaningbench.metrics.registry import create_metric, metric_classes
from meaningbench.metrics.structural.samsa import SamsaMetric
from meaningbench.metrics.structural.scenes import Participant, SceneSpec
from meaningbench.metrics.structural.tokens import words

SOURCE = "The committee approved the new budget after a long debate on Tuesday ."
OUTPUT = "After a long debate , our committee approved the budget ."
REFS = ("The committee approved the budget after a long debate .",)


def test_bleu_shows_the_ngrams_sacrebleu_counts_as_matches() -> None:
    import sacrebleu

    metric = create_metric("bleu", reference_mode="references", lowercase=True)
    explanation = metric.explain(ExplainItem(Pair(1, SOURCE, OUTPUT, REFS)))
    matches = explanation.body
    assert isinstance(matches, NgramMatches)
    oracle = sacrebleu.sentence_bleu(OUTPUT, list(REFS), lowercase=True)
    # no n-gram repeats in the output, so its distinct n-grams are sacrebleu's counts
    assert [len(o.matched) for o in matches.orders] == oracle.counts
    assert [len(o.matched) + len(o.output_only) for o in matches.orders] == oracle.totals
    assert "after a long debate" in matches.orders[3].matched
    assert "," in matches.orders[0].output_only  # the references have no comma
    assert "Against the item's 1 reference(s)." in explanation.note
    assert "no BLEU score is stored" in explanation.note


def test_a_stored_score_is_said_to_be_reproduced_or_not() -> None:
    metric = create_metric("rouge1")
    pair = Pair(1, SOURCE, OUTPUT, (SOURCE,))
    [score] = metric.score_batch([pair])
    same = metric.explain(ExplainItem(pair, value=score.value, details=score.details))
    assert "this explanation reproduces it" in same.note
    assert "Against the source as the only reference (source mode)." in same.note
    other = metric.explain(ExplainItem(pair, value=score.value - 5, details=score.details))
    assert "computed from other texts" in other.note


def test_ngram_matches_lists_each_side() -> None:
    found = ngram_matches("a b c", ["b c d"], str.split, max_n=2)
    unigrams, bigrams = found.orders
    assert (unigrams.matched, unigrams.output_only, unigrams.reference_only) == (
        ("b", "c"),
        ("a",),
        ("d",),
    )
    assert (bigrams.matched, bigrams.output_only, bigrams.reference_only) == (
        ("b c",),
        ("a b",),
        ("c d",),
    )


def test_sari_explains_the_score_it_stores() -> None:
    metric = create_metric("sari", reference_mode="references")
    pair = Pair(1, SOURCE, OUTPUT, REFS)
    [score] = metric.score_batch([pair])
    explanation = metric.explain(ExplainItem(pair, value=score.value, details=score.details))
    body = explanation.body
    assert isinstance(body, SariExplanation)
    assert body.sari == pytest.approx(score.value)
    assert (body.add, body.keep, body.delete) == pytest.approx(
        (score.details["add"], score.details["keep"], score.details["delete"])
    )
    assert "reproduces it" in explanation.note
    easse = create_metric("sari", item_variant="easse").explain(ExplainItem(pair, value=12.5))
    assert "EASSE's corpus formula" in easse.note and "12.50" in easse.note


def _committee_scenes() -> list[SceneSpec]:
    t = tuple(words(SOURCE))
    return [SceneSpec(t, (2,), (Participant((0, 1), (1,)), Participant((3, 4, 5), (5,))))]


def test_samsa_shows_its_scenes_stored_or_computed_here() -> None:
    scenes = _committee_scenes()
    metric = SamsaMetric(embeddings=False)
    metric.use_scenes(lambda pairs: {p.item_id: scenes for p in pairs})
    pair = Pair(1, SOURCE, OUTPUT, (SOURCE,))
    live = metric.explain(ExplainItem(pair))
    assert isinstance(live.body, SceneScores)
    assert live.body.details["n_scenes"] == 1
    assert live.body.details["scenes"][0]["main_relation"]["found"] is True
    assert "Live computation" in live.note

    [score] = metric.score_batch([pair])
    stored = metric.explain(ExplainItem(pair, value=score.value, details=score.details))
    assert isinstance(stored.body, SceneScores) and stored.body.details == score.details
    assert stored.note.startswith("As stored by the run")
    # scores stored from other scenes are not passed off as today's
    older = {**score.details, "scenes_hash": "0" * 16}
    redone = metric.explain(ExplainItem(pair, value=score.value, details=older))
    assert "The stored score used other scenes." in redone.note

    bare = SamsaMetric(embeddings=False)
    bare.use_scenes(lambda pairs: {})
    nothing = bare.explain(ExplainItem(pair))
    assert isinstance(nothing.body, NoExplanation) and "No scenes" in nothing.body.reason


def test_bertscore_without_a_stored_score_says_how_to_get_one() -> None:
    explanation = create_metric("bertscore").explain(ExplainItem(Pair(1, SOURCE, OUTPUT, ())))
    assert isinstance(explanation.body, NoExplanation)
    assert "Run BERTScore from the metric battery" in explanation.body.reason


def test_the_llm_judge_without_a_stored_judgement_says_to_score_first() -> None:
    explanation = create_metric("llm_judge").explain(ExplainItem(Pair(1, SOURCE, OUTPUT, ())))
    assert isinstance(explanation.body, NoExplanation)
    assert "score it first" in explanation.body.reason


@pytest.mark.parametrize(
    "name",
    sorted(
        n
        for n, c in metric_classes().items()
        if not c.explains_live and n not in ("bertscore", "llm_judge")
    ),
)
def test_metrics_without_parts_to_show_say_so_plainly(name: str) -> None:
    cls: Any = metric_classes()[name]
    body = cls().explain(ExplainItem(Pair(1, SOURCE, OUTPUT, (SOURCE,)))).body
    assert isinstance(body, NoExplanation)
    if name.startswith("samsa"):  # SAMSA_abl, with no scenes to read
        assert "No scenes" in body.reason
    else:
        assert body.reason.startswith(f"{cls.info.label} has no explanation view: ")
