"""The matching view draws exactly the alignment it is given, and hover follows one token."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtTest import QTest

from meaningbench.metrics.explain import TokenAlignment
from meaningbench.metrics.neural.support.token_matching import from_bertscore_details
from meaningbench.queries.explanations import Line, alignment_lines
from meaningbench.ui.compare.matching_view import MatchingView
from tests.queries.test_explanations import ALIGNMENT


def _centre(view: MatchingView, side: str, index: int) -> QPoint:
    rect = view.box(side, index).rect
    return QPoint(int(rect.center().x()), int(rect.center().y()))


def _hover(view: MatchingView, point: QPoint) -> None:
    """Move the mouse onto `point` by way of a point beside it: Qt drops a move to where the
    pointer already is, and an earlier test's view may have left it exactly there."""
    QTest.mouseMove(view, point + QPoint(1, 1))
    QTest.mouseMove(view, point)


def test_view_state_and_hover(qtbot) -> None:
    view = MatchingView()
    qtbot.addWidget(view)
    view.set_alignment(ALIGNMENT)
    view.resize(view.sizeHint())
    view.show()
    qtbot.waitExposed(view)
    assert set(view.lines) == set(alignment_lines(ALIGNMENT))
    assert len(view.boxes) == len(ALIGNMENT.ref_tokens) + len(ALIGNMENT.cand_tokens)
    assert view.highlighted_lines() == view.lines

    _hover(view, _centre(view, "ref", 3))  # "sat"
    qtbot.waitUntil(lambda: view.hovered == ("ref", 3))
    assert set(view.highlighted_lines()) == {
        Line("mutual", 3, 4, 0.83),
        Line("precision", 3, 3, 0.52),
    }
    assert view.token_similarity("ref", 3) == pytest.approx(0.83)
    assert "0.830" in view.toolTip()

    _hover(view, _centre(view, "cand", 3))  # "was": chosen by no reference token
    qtbot.waitUntil(lambda: view.hovered == ("cand", 3))
    assert view.highlighted_lines() == [Line("precision", 3, 3, 0.52)]
    assert "nothing on the other side chose it" in view.toolTip()

    _hover(view, QPoint(2, 2))  # off every token: everything drawn again
    qtbot.waitUntil(lambda: view.hovered is None)
    assert view.highlighted_lines() == view.lines


def test_unpicked_tokens_are_outlined_in_red(qtbot) -> None:
    view = MatchingView()
    qtbot.addWidget(view)
    view.set_alignment(ALIGNMENT)
    view.resize(view.sizeHint())
    image = view.grab().toImage()
    rect = view.box("cand", 3).rect  # "was"
    edge = image.pixelColor(int(rect.center().x()), int(rect.top()))
    assert edge.red() > 150 and edge.green() < 110  # the red outline
    other = view.box("cand", 2).rect  # "cat", chosen
    edge2 = image.pixelColor(int(other.center().x()), int(other.top()))
    assert not (edge2.red() > 150 and edge2.green() < 110)


def test_bad_details_are_refused() -> None:
    with pytest.raises(ValueError, match="without its token alignment"):
        from_bertscore_details({"P": 0.5, "R": 0.5, "F1": 0.5})
    bad = {
        "alignment": {
            "cand": {"tokens": ["a"], "best": [3], "sim": [0.5]},
            "ref": {"tokens": ["b"], "best": [0], "sim": [0.5]},
        }
    }
    with pytest.raises(ValueError, match="outside"):
        from_bertscore_details(bad)


def test_the_view_draws_the_alignment_of_a_real_bertscore_run(qtbot) -> None:
    """Score a pair with the battery's BERTScore, then check every drawn line against it."""
    from meaningbench.metrics.base import Pair
    from meaningbench.metrics.registry import create_metric

    metric = create_metric("bertscore")
    source = "The old fisherman repaired his boat."
    output = "The fisherman fixed his old boat."
    [score] = metric.score_batch([Pair(1, source, output, (source,))])
    align = score.details["alignment"]
    alignment = from_bertscore_details(score.details)
    assert pytest.approx(score.details["F1"]) == alignment.F

    view = MatchingView()
    qtbot.addWidget(view)
    view.set_alignment(alignment, ref_label="source")
    view.resize(view.sizeHint())
    view.show()
    qtbot.waitExposed(view)
    recall = {(ln.ref, ln.cand) for ln in view.lines if ln.kind in ("recall", "mutual")}
    precision = {(ln.ref, ln.cand) for ln in view.lines if ln.kind in ("precision", "mutual")}
    assert recall == set(enumerate(align["ref"]["best"]))
    assert precision == {(i, j) for j, i in enumerate(align["cand"]["best"])}
    for ln in view.lines:
        assert ln.sim == pytest.approx(
            align["ref"]["sim"][ln.ref] if ln.kind != "precision" else align["cand"]["sim"][ln.cand]
        )

    j = align["cand"]["tokens"].index("fixed")
    _hover(view, _centre(view, "cand", j))
    qtbot.waitUntil(lambda: view.hovered == ("cand", j))
    assert all(ln.cand == j for ln in view.highlighted_lines())
    best_ref = align["cand"]["best"][j]
    assert any(ln.ref == best_ref for ln in view.highlighted_lines())
    assert view.token_similarity("cand", j) == pytest.approx(align["cand"]["sim"][j])


# An ordinary 25-token sentence (and its simplification), as BERTScore's tokenizer cuts it.
LONG_REF = str.split(
    "the committee announced on tuesday that the new bridge across the river would "
    "open to traffic in early spring after two long years of delays"
)
LONG_CAND = str.split(
    "the committee said tuesday that the new river bridge will open in early spring "
    "after two years of delays and higher costs for the city"
)


def long_alignment() -> TokenAlignment:
    ref = ("[CLS]", *LONG_REF, "[SEP]")
    cand = ("[CLS]", *LONG_CAND, "[SEP]")
    assert len(LONG_REF) == 25
    ref_best = tuple(min(k, len(cand) - 1) for k in range(len(ref)))
    cand_best = tuple(min(k, len(ref) - 1) for k in range(len(cand)))
    return TokenAlignment(
        ref_tokens=ref,
        cand_tokens=cand,
        ref_best=ref_best,
        ref_sim=tuple(0.9 for _ in ref),
        cand_best=cand_best,
        cand_sim=tuple(0.8 for _ in cand),
        P=0.8,
        R=0.9,
        F=0.85,
    )


def test_a_25_token_sentence_can_be_scrolled_to_its_end(qtbot) -> None:
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    from meaningbench.ui.compare.matching_view import MatchingScroll

    view = MatchingView()
    scroll = MatchingScroll(view)
    qtbot.addWidget(scroll)
    scroll.resize(900, 520)  # the Compare page's explain pane on an ordinary screen
    scroll.show()
    qtbot.waitExposed(scroll)
    view.set_alignment(long_alignment())
    qtbot.wait(50)
    right = max(b.rect.right() for b in view.boxes)
    assert right > scroll.viewport().width()  # wider than the pane: it must scroll
    assert view.width() >= right  # nothing drawn outside the widget
    bar = scroll.horizontalScrollBar()
    assert bar.maximum() >= right - scroll.viewport().width()

    # The wheel (turned as a wheel turns: vertically) moves the view sideways.
    centre = QPointF(scroll.viewport().width() / 2, scroll.viewport().height() / 2)
    for _ in range(200):
        wheel = QWheelEvent(
            centre, scroll.viewport().mapToGlobal(centre), QPoint(0, 0), QPoint(0, -120),
            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase, False,
        )  # fmt: skip
        QApplication.sendEvent(scroll.viewport(), wheel)  # where an unhandled wheel lands
        if bar.value() == bar.maximum():
            break
    assert bar.value() == bar.maximum() > 0
    # At the end, the last token of both rows is inside the visible part.
    visible_right = bar.value() + scroll.viewport().width()
    for side in ("ref", "cand"):
        last = max((b for b in view.boxes if b.side == side), key=lambda b: b.index)
        assert last.rect.right() <= visible_right
        assert last.rect.left() >= bar.value()
