"""The Disagreements view on a real study with three raters: the widest gaps listed with each
rater's rating and spans, a lower threshold listing more, a decision written through the op
to the resolution set (the ratings untouched), and a study without two raters saying why."""

from __future__ import annotations

from pathlib import Path

from meaningbench.db.models import Rating, RatingSpan
from meaningbench.db.study import create_study
from tests.analysis.studybuild import SOURCES, add_items, add_ratings
from tests.cluster.helpers import query
from tests.ui.conftest import open_in

RATERS = {
    "ann": [50, 60, 70, 10, 40, 55, 95, 30],
    "bob": [55, 62, 68, 90, 45, 50, 20, 35],
    "cat": [52, 58, 71, 50, 42, 53, 60, 33],
}
RATINGS = "SELECT item_id, annotator_id, value, state FROM rating ORDER BY id"


def three_raters(path: Path) -> list[int]:
    """Three raters on 8 items; items 3 and 6 split them; ann marks a span on item 3."""
    study = create_study(path)
    try:
        ids = add_items(study, [(s, s.split(" ", 1)[1], "sys") for s in SOURCES])
        for rater, values in RATERS.items():
            add_ratings(study, rater, dict(zip(ids, map(float, values), strict=True)))
        with study.session() as s:
            ann = s.query(Rating).filter(Rating.item_id == ids[3], Rating.value == 10.0).one()
            s.add(RatingSpan(rating_id=ann.id, start=4, end=13, severity="major", text="committee"))
    finally:
        study.close()
    return ids


def _dialog(window, qtbot, path: Path):  # noqa: ANN001, ANN202
    window.show()
    open_in(window, path, qtbot)
    assert window.show_page("campaign")
    page = window.page("campaign")
    page.disagreements_button.click()
    dialog = page.disagreements
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.view is not None and dialog.job is None, timeout=10_000)
    return dialog


def _rows(table) -> list[list[str]]:  # noqa: ANN001
    return [
        [table.item(r, c).text() for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]


def test_the_widest_gaps_are_listed_and_one_is_settled(window, qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "lab.mbstudy"
    ids = three_raters(path)
    dialog = _dialog(window, qtbot, path)
    rows = _rows(dialog.table)
    assert rows[0][:4] == [str(ids[3]), "80", "ann 10 · cat 50 · bob 90", "–"]
    assert "95th percentile of 24 pairwise gaps" in dialog.summary.text()
    # The first row is selected: its texts, each rating and ann's span.
    detail = dialog.detail.text()
    assert SOURCES[3] in detail and "“committee” (major)" in detail
    assert dialog.score.value() == 50.0  # the raters' mean to start from

    dialog.threshold.setValue(20)
    dialog.show_button.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2 and dialog.job is None)
    assert [r[0] for r in _rows(dialog.table)] == [str(ids[3]), str(ids[6])]

    before = query(path, RATINGS)
    dialog.table.selectRow(1)
    dialog.score.setValue(45)
    dialog.note.setText("bob misread it")
    dialog.adjudicate.click()
    qtbot.waitUntil(lambda: "1 settled" in dialog.summary.text() and dialog.job is None)
    assert _rows(dialog.table)[1][3] == "adjudicated 45"
    assert dialog.selected() is not None and dialog.selected().item_id == ids[6]
    assert query(path, RATINGS)[: len(before)] == before  # the raters' rows as they were
    assert query(
        path,
        "SELECT r.item_id, r.value, r.origin, r.comment FROM rating r "
        "JOIN annotator a ON a.id = r.annotator_id WHERE a.name = 'resolved'",
    ) == [(ids[6], 45.0, "resolution:score", "bob misread it")]

    # Analyses read the decisions once the box is ticked (a study setting), not before.
    chosen = "SELECT value FROM study_setting WHERE key = 'label_set'"
    assert query(path, chosen) == [] and dialog.use.isEnabled() and not dialog.use.isChecked()
    dialog.use.click()
    qtbot.waitUntil(lambda: query(path, chosen) == [('"resolved"',)])
    dialog.refresh()
    qtbot.waitUntil(lambda: dialog.job is None and dialog.view is not None and dialog.view.in_use)
    assert dialog.use.isChecked()


def test_a_study_without_two_raters_says_why(window, qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "one.mbstudy"
    study = create_study(path)
    try:
        ids = add_items(study, [(SOURCES[0], "The cat sat.", "s")])
        add_ratings(study, "ann", {ids[0]: 40.0})
        add_ratings(study, "judge", {ids[0]: 90.0}, kind="machine")
    finally:
        study.close()
    dialog = _dialog(window, qtbot, path)
    assert "no item has meaning ratings from two human raters" in dialog.summary.text()
    assert dialog.table.rowCount() == 0 and not dialog.exclude.isEnabled()
    assert not dialog.use.isEnabled()
