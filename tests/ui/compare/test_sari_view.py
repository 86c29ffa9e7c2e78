"""SARI's explanation adds up to the score the battery stores, and to the published values."""

from __future__ import annotations

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.explain import ExplainItem
from meaningbench.metrics.lexical.sari import SariExplanation, explain_sari
from meaningbench.metrics.registry import create_metric
from meaningbench.ui.compare.sari_view import SariView


def _explained(view: SariView, output: str) -> SariExplanation:
    """The battery's SARI explains the output through its hook; the view draws it."""
    metric = create_metric("sari", reference_mode="references")
    explanation = metric.explain(ExplainItem(Pair(1, SOURCE, output, tuple(REFS))))
    assert isinstance(explanation.body, SariExplanation)
    view.show_explanation(explanation.body, explanation.note)
    return explanation.body


SOURCE = "About 95 species are currently accepted ."
REFS = [
    "About 95 species are currently known .",
    "About 95 species are now accepted .",
    "95 species are now accepted .",
]
# HF evaluate's published sentence SARI values (metrics.md)
PUBLISHED = [
    ("About 95 you now get in .", 26.953601953601954),
    ("About 95 species are now agreed .", 61.709656084656075),
    ("About 95 species are currently agreed .", 50.88681849551415),
]


@pytest.mark.parametrize(("output", "expected"), PUBLISHED)
def test_explanation_adds_up_to_the_published_score(qtbot, output: str, expected: float) -> None:
    view = SariView()
    qtbot.addWidget(view)
    exp = _explained(view, output)
    assert (exp.add + exp.keep + exp.delete) / 3 == pytest.approx(exp.sari)
    assert exp.sari == pytest.approx(expected)
    # each operation score is the mean of its four n-gram orders, as the table shows
    assert exp.add == pytest.approx(100 * sum(o.add_f1 for o in exp.ngrams) / 4)
    assert exp.keep == pytest.approx(100 * sum(o.keep_f1 for o in exp.ngrams) / 4)
    assert exp.delete == pytest.approx(100 * sum(o.delete_precision for o in exp.ngrams) / 4)
    text = view.browser.toPlainText()
    assert "Against the item's 3 reference(s)." in text
    assert f"SARI {expected:.2f}" in text
    assert f"add {exp.add:.2f}" in text and f"delete {exp.delete:.2f}" in text


def test_explanation_matches_the_battery_metric_and_its_stored_parts(qtbot) -> None:
    metric = create_metric("sari", reference_mode="references")
    output = "About 95 species are now agreed ."
    [score] = metric.score_batch([Pair(1, SOURCE, output, tuple(REFS))])
    exp = explain_sari(SOURCE, output, REFS)
    assert score.value == pytest.approx(exp.sari)
    assert score.details["add"] == pytest.approx(exp.add)
    assert score.details["keep"] == pytest.approx(exp.keep)
    assert score.details["delete"] == pytest.approx(exp.delete)


def test_added_kept_deleted_ngrams_are_listed_with_their_support(qtbot) -> None:
    view = SariView()
    qtbot.addWidget(view)
    exp = _explained(view, "About 95 species are now agreed .")
    unigrams = exp.ngrams[0]
    # "now" is added and a reference has it; "agreed" is added and none has it
    assert set(unigrams.added) == {"now", "agreed"}
    assert unigrams.added_supported == ("now",)
    # "currently" and "accepted" were deleted
    assert set(unigrams.deleted) == {"currently", "accepted"}
    text = view.browser.toPlainText()
    assert "agreed" in text and "currently" in text
