"""The Campaign page on a lead's study in mid-campaign: each rater's figures, the items'
ratings in, top-up kits for the raters chosen, and a refresh once kits are collected."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionComboBox

from meaningbench.cli import main
from meaningbench.db.study import copy_study
from meaningbench.runtime.changes import StudyChanges
from tests.cluster.helpers import query
from tests.kits.campaign_helpers import RATERS, lead_keys, lead_study, rate_kit
from tests.kits.campaign_study import campaign_study, ratings_in
from tests.kits.test_scripted_campaign import CARLA_RATES
from tests.ui.conftest import open_in


def _queues(path: Path) -> dict[str, tuple[int, int]]:
    """Each rater's queue in the study: (entries, done)."""
    rows = query(
        path,
        "SELECT a.name, COUNT(*), SUM(q.done) FROM queue_entry q "
        "JOIN annotator a ON a.id = q.annotator_id GROUP BY a.name",
    )
    return {str(n): (int(total), int(done or 0)) for n, total, done in rows}


def _rated_by(path: Path, rater: str) -> set[str]:
    rows = query(
        path,
        "SELECT DISTINCT i.pair_key FROM rating r JOIN item i ON i.id = r.item_id "
        f"JOIN annotator a ON a.id = r.annotator_id WHERE a.name = '{rater}' "
        "AND r.state = 'current'",
    )
    return {str(k) for (k,) in rows}


def _kit_items(kit: Path, lead: Path) -> set[str]:
    """The kit's queue, by the lead's item keys (a kit's keys are its own)."""
    keys = lead_keys(lead)
    return {
        keys[str(k)][0]
        for (k,) in query(
            kit, "SELECT i.pair_key FROM queue_entry q JOIN item i ON i.id = q.item_id"
        )
    }


def _table(table) -> list[list[str]]:  # noqa: ANN001
    return [
        [table.item(r, c).text() for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]


def _checks(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, dict]:
    """The rater checks as `meaningbench raters --json` prints them (null: none)."""
    assert main(["raters", str(path), "--json"]) in (0, 1)
    return {c["rater"]: c for c in json.loads(capsys.readouterr().out)}


def _pct(x: float | None) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.0%}"


def _num(x: float | None, places: int) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{places}f}"


def _campaign_page(window, qtbot, path: Path):  # noqa: ANN001, ANN202
    window.show()
    open_in(window, path, qtbot)
    assert "campaign" in window.page_keys()
    assert window.show_page("campaign")
    page = window.page("campaign")
    qtbot.waitUntil(lambda: page.figures is not None)
    return page


def test_each_raters_figures_and_the_items_ratings_in(
    window, qtbot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = campaign_study(tmp_path)
    checks = _checks(capsys, path)
    queues = _queues(path)
    page = _campaign_page(window, qtbot, path)

    assert not page.empty.isVisible()
    rows = {r[0]: r for r in _table(page.raters)}
    assert sorted(rows) == sorted(RATERS)
    for name, row in rows.items():
        total, done = queues[name]
        c = checks[name]
        assert row[1:4] == ["1", "1", f"{done} / {total} ({done / total:.0%})"]
        assert row[4:8] == [
            _pct(c["identical_pass"]),
            _pct(c["unrelated_pass"]),
            _num(c["agreement_r"], 2),
            _num(c["median_seconds"], 1),
        ]
        assert row[8] != "–"  # returned: a time
    assert queues["carla"][1] == CARLA_RATES < queues["carla"][0]

    counted = ratings_in(path)
    short = {k for k, n in counted.items() if n < 2}
    assert short, "carla's unfinished kit leaves items short"
    # Each row names its item and shows its original text (not the pair's key).
    pairs = {str(i): (str(k), " ".join(str(src).split())) for i, k, src in query(
        path, "SELECT id, pair_key, source FROM item")}  # fmt: skip
    items = _table(page.items)  # the filter starts on the short items
    assert all(r[4] == pairs[r[0]][1] for r in items)
    assert {pairs[r[0]][0]: r[1] for r in items} == {k: f"{counted[k]} of 2" for k in short}
    page.filter.setCurrentIndex(page.filter.findData("all"))
    items = _table(page.items)
    assert {pairs[r[0]][0]: r[1] for r in items} == {k: f"{n} of 2" for k, n in counted.items()}
    complete = len(counted) - len(short)
    assert page.coverage.text().startswith(f"k = 2: {complete} items complete")
    assert page.complete_bar.value() == complete
    assert page.top_up_button.isEnabled()


def test_top_up_kits_hold_the_short_items_for_the_raters_chosen(
    window, qtbot, tmp_path: Path
) -> None:
    path = campaign_study(tmp_path)
    page = _campaign_page(window, qtbot, path)
    short = {k for k, n in ratings_in(path).items() if n < 2}
    dialog = page.show_top_up_dialog()
    assert dialog is not None and dialog.isVisible()
    # carla did not finish her kit: she is not offered by default.
    assert dialog.chosen() == ["ana", "ben"]
    ben = next(
        dialog.raters.item(r)
        for r in range(dialog.raters.count())
        if dialog.raters.item(r).data(Qt.ItemDataRole.UserRole) == "ben"
    )
    ben.setCheckState(Qt.CheckState.Unchecked)
    assert dialog.chosen() == ["ana"]
    out = tmp_path / "top-up"
    dialog.folder.setText(str(out))
    qtbot.mouseClick(dialog.make_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.job is None and bool(dialog.made), timeout=20_000)

    kits = sorted(out.iterdir())  # the kits, before a read opens a log beside them
    assert [k.name.startswith("ana-top-up-") and k.suffix == ".mbkit" for k in kits] == [True]
    # Every short item ana has not rated herself, and nothing else.
    assert _kit_items(kits[0], path) == short - _rated_by(path, "ana")
    assert str(out) in dialog.status.text() and kits[0].name in dialog.status.text()
    # The page heard the write: ana's second kit is counted.
    qtbot.waitUntil(lambda: _table(page.raters)[0][1] == "2")
    assert _table(page.raters)[0][:3] == ["ana", "2", "1"]

    # Again for ana alone: she rated or now holds every short item, and is told so.
    window.runner.show_error_dialogs = False
    dialog.set_chosen(["ana"])
    qtbot.mouseClick(dialog.make_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.job is None and "No kit was made" in dialog.status.text())
    assert "ana rated or already holds each of them" in dialog.status.text()
    assert sorted(out.glob("*.mbkit")) == kits


def test_the_page_follows_a_collect(
    window, qtbot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = campaign_study(tmp_path)
    page = _campaign_page(window, qtbot, path)
    before = ratings_in(path)
    carla_before = _table(page.raters)[2]
    # carla rates the rest of her kit and sends it again; the lead collects it.
    kit = tmp_path / "kits" / "carla.mbkit"
    rate_kit(kit, "carla")
    copy_study(kit, tmp_path / "returned" / "carla.mbkit")
    assert main(["collect", str(path), str(tmp_path / "returned")]) == 0
    capsys.readouterr()
    after = ratings_in(path)
    assert after != before
    assert _table(page.raters)[2] == carla_before  # nothing told the page yet
    window.runner.broadcast(StudyChanges.of(ratings=[1]))
    total, done = _queues(path)["carla"]
    assert done == total
    qtbot.waitUntil(lambda: _table(page.raters)[2][3] == f"{total} / {total} (100%)")
    page.filter.setCurrentIndex(page.filter.findData("all"))
    pair_of = {str(i): str(k) for i, k in query(path, "SELECT id, pair_key FROM item")}
    shown = {pair_of[r[0]]: r[1] for r in _table(page.items)}
    assert shown == {k: f"{n} of 2" for k, n in after.items()}


def test_a_study_without_kits_says_how_to_make_them(window, qtbot, study_with_facts) -> None:
    path, _facts = study_with_facts
    page = _campaign_page(window, qtbot, path)
    assert page.empty.isVisible()
    text = page.empty.text()
    assert "File ▸ Make rater kits…" in text and "meaningbench kit" in text
    assert "File ▸ Collect rater kits…" in text


def _ratings_column(page) -> list[int]:  # noqa: ANN001
    return [int(row[1].split(" of ")[0]) for row in _table(page.items)]


def _click_heading(qtbot, table, column: int) -> None:  # noqa: ANN001
    head = table.horizontalHeader()
    x = head.sectionViewportPosition(column) + head.sectionSize(column) // 2
    qtbot.mouseClick(head.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, head.height() // 2))


def test_the_items_sort_by_their_numbers(window, qtbot, tmp_path: Path) -> None:
    page = _campaign_page(window, qtbot, campaign_study(tmp_path))
    # Until a heading is clicked, the short items come fewest ratings first.
    assert _ratings_column(page) == sorted(_ratings_column(page))
    page.filter.setCurrentIndex(page.filter.findData("all"))
    in_id_order = _ratings_column(page)
    assert in_id_order != sorted(in_id_order)
    _click_heading(qtbot, page.items, 1)
    assert _ratings_column(page) in (sorted(in_id_order), sorted(in_id_order, reverse=True))
    _click_heading(qtbot, page.items, 0)
    ids = [int(row[0]) for row in _table(page.items)]
    assert len(ids) > 10 and ids in (sorted(ids), sorted(ids, reverse=True))
    # A refill (a collect, another filter) keeps the order the lead chose.
    page.filter.setCurrentIndex(page.filter.findData("short"))
    ids = [int(row[0]) for row in _table(page.items)]
    assert ids in (sorted(ids), sorted(ids, reverse=True))


def test_the_show_box_is_wide_enough_for_its_counts(window, qtbot, tmp_path: Path) -> None:
    page = _campaign_page(window, qtbot, campaign_study(tmp_path))
    combo = page.filter
    for index in range(combo.count()):
        combo.setCurrentIndex(index)
        QApplication.processEvents()
        option = QStyleOptionComboBox()
        combo.initStyleOption(option)
        field = combo.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox,
            option,
            QStyle.SubControl.SC_ComboBoxEditField,
            combo,
        )
        text = combo.itemText(index)
        assert "(" in text  # the count the figures added
        assert field.width() >= combo.fontMetrics().horizontalAdvance(text), text


def test_the_top_up_list_follows_the_top_up(window, qtbot, tmp_path: Path) -> None:
    path = campaign_study(tmp_path)
    page = _campaign_page(window, qtbot, path)
    dialog = page.show_top_up_dialog()
    assert dialog is not None
    dialog.set_chosen(["ana"])
    dialog.folder.setText(str(tmp_path / "top-up"))
    before = _queues(path)["ana"]

    def ana_line() -> str:
        return next(
            dialog.raters.item(r).text()
            for r in range(dialog.raters.count())
            if dialog.raters.item(r).data(Qt.ItemDataRole.UserRole) == "ana"
        )

    assert ana_line() == f"ana  ·  {before[1]} of {before[0]} done"
    qtbot.mouseClick(dialog.make_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.job is None and bool(dialog.made), timeout=20_000)
    total, done = _queues(path)["ana"]
    assert total > before[0]  # her queue grew by the top-up
    qtbot.waitUntil(lambda: ana_line() == f"ana  ·  {done} of {total} done", timeout=10_000)
    assert dialog.chosen() == ["ana"]  # the lead's ticks stay


def test_a_study_without_raters_lists_no_item_short(window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "lead.mbstudy"
    lead_study(path, seed=1).close()
    page = _campaign_page(window, qtbot, path)
    assert page.empty.isVisible()
    assert not page.items_box.isVisible() and not page.raters_box.isVisible()
    assert page.status.text() == "No kits yet · 60 items"
    assert not page.top_up_button.isEnabled()
