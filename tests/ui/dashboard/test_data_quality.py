"""The Data quality tab: the audit of a real study file, the preview and the fix."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from meaningbench.db.study import create_study
from tests.analysis.studybuild import add_items, add_ratings, add_scores
from tests.ui.dashboard.conftest import wait_ready


def _study(path: Path) -> Path:
    study = create_study(path)
    pairs = [(f"source {k} a b", f"output {k}", None) for k in range(6)]
    labelled = add_items(study, pairs, dataset="published")
    raw = add_items(study, [(s, o, "sys") for s, o, _ in pairs], dataset="raw")
    means = [10.0, 30.0, 50.0, 70.0, 90.0, 60.0]
    for r, offset in (("r1", -5.0), ("r2", 5.0)):
        add_ratings(
            study,
            r,
            {i: m + offset for i, m in zip(raw, means, strict=True)},
            origin="import:raw.csv",
        )
    # Two labels swapped: pairs 0 and 4 carry each other's mean.
    published = [90.0, 30.0, 50.0, 70.0, 10.0, 60.0]
    add_ratings(
        study, "aggregate:pub", dict(zip(labelled, published, strict=True)), kind="aggregate"
    )
    add_scores(study, "m", {i: float(k) for k, i in enumerate(labelled + raw)})
    study.close()
    return path


def test_audit_table_worst_mismatches_and_fix(qtbot, open_page, tmp_path, monkeypatch) -> None:
    page = open_page(_study(tmp_path / "dq.mbstudy"))
    panel = page.data_quality
    page.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.view is not None and panel.table.isVisible(), timeout=20_000)
    frame = panel.table.model_.frame
    # The audit's group rows, in the columns the tab has always shown.
    assert list(frame.columns) == [
        "source file",
        "labels",
        "equal",
        "MAD",
        "Pearson",
        "other pair",
        "status",
    ]
    assert list(frame.index) == ["aggregate:pub"] and frame.index.name == "label set"
    assert list(frame["source file"]) == ["raw"]
    assert frame["equal"].iloc[0].startswith("4 ")
    assert "aggregate:pub" in panel.in_use.text()
    assert panel.worst_layout.count() == 2  # the two swapped labels
    asked: list[str] = []

    def yes(_parent, _title, text, *args, **kwargs):  # noqa: ANN001, ANN202
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", yes)
    panel.fix_name.setText("corrected")
    assert not panel.choose.isChecked()  # replacing published labels is asked for, never preset
    panel.choose.setChecked(True)
    panel.fix_button.click()
    qtbot.waitUntil(
        lambda: panel.view is not None and panel.view.in_use == ["corrected"], timeout=20_000
    )
    assert "6 raw means" in asked[0] and "published labels stay" in asked[0]
    wait_ready(qtbot, page)
    assert page.controller.state.label_sets == ("corrected",)
    assert "labels: corrected" in page.status.text()
    assert "corrected" in panel.in_use.text()
    # Back to the published labels from the picker.
    panel.sets.setCurrentIndex(0)
    panel.use_button.click()
    qtbot.waitUntil(lambda: panel.view.in_use == ["aggregate:pub"], timeout=20_000)


def _study_with_a_new_rater(path: Path) -> tuple[Path, list[int]]:
    """Published labels and nine ratings of the study's own new rater on the same pairs."""
    study = create_study(path)
    labelled = add_items(study, [(f"source {k} a b", f"output {k}", None) for k in range(9)])
    add_ratings(
        study,
        "aggregate:pub",
        {i: 10.0 * k for k, i in enumerate(labelled)},
        kind="aggregate",
    )
    add_ratings(study, "ana", {i: 95.0 - 5 * k for k, i in enumerate(labelled)})  # in the app
    add_scores(study, "m", {i: float(k) for k, i in enumerate(labelled)})
    study.close()
    return path, labelled


def test_a_new_raters_ratings_are_not_taken_as_the_raw_ratings(qtbot, open_page, tmp_path) -> None:
    path, _ = _study_with_a_new_rater(tmp_path / "new-rater.mbstudy")
    page = open_page(path)
    panel = page.data_quality
    page.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.view is not None, timeout=20_000)
    # Nothing compared: ana rated for this study, not for the published labels.
    assert panel.view.result is not None and panel.view.result.groups == []
    assert not panel.table.isVisible() and not panel.fix_button.isEnabled()
    assert "ana" in panel.message.text() and "0 of 9" not in panel.message.text()
    assert not panel.choose.isChecked()
    # Chosen on purpose, ana's ratings are compared.
    assert panel.against.count() == 2 and "ana" in panel.against.itemText(1)
    panel.against.setCurrentIndex(1)
    panel.against.activated.emit(1)
    qtbot.waitUntil(lambda: panel.table.isVisible(), timeout=20_000)
    frame = panel.table.model_.frame
    assert list(frame["labels"]) == [9]
    assert panel.view.result.raters == ["ana"] and panel.view.result.chosen_raters
    assert not panel.choose.isChecked()
