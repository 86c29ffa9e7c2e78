"""The Data quality tab: the audit of a real study file, the preview and the fix."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from meaningbench.db.study import create_study
from tests.analysis.studybuild import add_items, add_ratings, add_scores
from tests.ui_dashboard.conftest import wait_ready


def _study(path: Path) -> Path:
    study = create_study(path)
    pairs = [(f"source {k} a b", f"output {k}", None) for k in range(6)]
    labelled = add_items(study, pairs, dataset="published")
    raw = add_items(study, [(s, o, "sys") for s, o, _ in pairs], dataset="raw")
    means = [10.0, 30.0, 50.0, 70.0, 90.0, 60.0]
    for r, offset in (("r1", -5.0), ("r2", 5.0)):
        add_ratings(study, r, {i: m + offset for i, m in zip(raw, means, strict=True)})
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
    panel.fix_button.click()
    qtbot.waitUntil(
        lambda: panel.view is not None and panel.view.in_use == ["corrected"], timeout=20_000
    )
    assert "6 raw means" in asked[0] and "published labels stay" in asked[0]
    wait_ready(qtbot, page)
    assert page.controller.analysis.data.label_sets == ["corrected"]
    assert "labels: corrected" in page.status.text()
    assert "corrected" in panel.in_use.text()
    # Back to the published labels from the picker.
    panel.sets.setCurrentIndex(0)
    panel.use_button.click()
    qtbot.waitUntil(lambda: panel.view.in_use == ["aggregate:pub"], timeout=20_000)
