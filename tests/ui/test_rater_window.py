"""The scripted campaign through the real window: the lead makes kits with File ▸ Make rater
kits…; each rater opens their kit, which shows the rating page alone, does the practice and
rates by keys on the focused slider (Enter submits), and sends the kit back; the lead
collects the returned folder with File ▸ Collect rater kits… (a kit collected twice adds
nothing, a tampered one is refused) and holds exactly the ratings given, each once; a
top-up for the items still short is made from the same dialog."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog

from meaningbench.annotation.practice import add_practice
from meaningbench.db.models import Item
from meaningbench.db.study import open_study
from meaningbench.ui.annotation.screen import HINT_BLOCKED
from meaningbench.ui.rater_mode import NOTHING_RATED
from tests.kits.campaign_helpers import RATERS, held_ratings, lead_keys, lead_study, tamper

Given = dict[tuple[str, str, str], float]

PRACTICE = [
    ("The shop opens at nine every morning.", "The shop opens at nine.", 70.0, 100.0, "Same."),
    ("It rained all day in the town.", "The town had a sunny day.", 0.0, 30.0, "Opposite."),
]
LEAD_PAGES = ["browser", "annotate", "dashboard", "compare", "sweep", "campaign"]


def _value(rater: str, key: str, kind: str) -> float:
    """What `rater` gives the item: 100 for an identical control, else a multiple of ten
    (one key: End, or one digit, so no typing speed matters)."""
    if kind == "control-identical":
        return 100.0
    return float(hashlib.sha256(f"{rater}|{key}".encode()).digest()[0] % 10 * 10)


def _items(kit: Path, lead: Path) -> dict[int, tuple[str, str]]:
    """The kit's items by id, as the lead's study knows them (a kit is blind to their kind)."""
    keys = lead_keys(lead)
    study = open_study(kit)
    try:
        with study.session() as s:
            return {i.id: keys[i.pair_key] for i in s.query(Item)}
    finally:
        study.close()


def _visible_pages(window: Any) -> list[str]:
    return [k for k, slot in window.slots().items() if not slot.nav_item.isHidden()]


def _activate(window: Any, qtbot: Any) -> None:
    """The window in front with the keyboard, as on a desktop (the offscreen platform does
    not give it back when a dialog closes)."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)


def _press(qtbot: Any, widget: Any, key: Qt.Key) -> None:
    qtbot.keyClick(widget, key)


def _do_practice(window: Any, qtbot: Any) -> None:
    page = window.page("annotate")
    practice = page.practice
    assert practice is not None and page.screen is None  # practice first
    scale = QApplication.focusWidget()
    assert scale is practice.row.scale
    _press(qtbot, scale, Qt.Key.Key_Return)  # the slider is not set: says so
    assert practice.hint.text() == "Set the slider first (a digit or the arrows)."
    for _ in range(len(PRACTICE)):
        scale = QApplication.focusWidget()
        _press(qtbot, scale, Qt.Key.Key_8)
        _press(qtbot, scale, Qt.Key.Key_Return)  # feedback
        assert practice.result.text()
        _press(qtbot, scale, Qt.Key.Key_Return)  # go on
    assert page.practice is None and page.screen is not None


def _rate_in_window(
    window: Any, qtbot: Any, kit: Path, rater: str, back: Path, limit: int | None, lead: Path
) -> Given:
    """Open `kit` in the window, rate it by keys (`limit` items at most), send it back."""
    items = _items(kit, lead)
    assert window.studies.open_path(kit)
    _activate(window, qtbot)
    assert window.rater_mode.rater == rater
    assert _visible_pages(window) == ["annotate"] and window.current_page() == "annotate"
    hidden = window.actions_
    for action in (hidden.settings, hidden.run_metrics, hidden.import_, hidden.collect_kits):
        assert not action.isVisible() and not action.isEnabled()
    assert hidden.study_menu is not None and not hidden.study_menu.menuAction().isVisible()
    assert hidden.send_back.isVisible()
    page = window.page("annotate")
    window.actions_.send_back.trigger()  # nothing rated yet: says why, sends nothing
    assert page.practice.hint.text() == NOTHING_RATED
    assert window.rater_mode.dialog is None
    _do_practice(window, qtbot)

    screen = page.screen
    assert screen.who_label.text() == f"Rating as <b>{rater}</b>"
    _press(qtbot, QApplication.focusWidget(), Qt.Key.Key_Return)  # nothing set: blocked, says why
    assert screen.hint.text() == HINT_BLOCKED
    given: Given = {}
    while (shown := screen.current_item()) is not None and (limit is None or len(given) < limit):
        key, kind = items[shown.item_id]
        value = _value(rater, key, kind)
        scale = QApplication.focusWidget()
        assert scale is screen.rows[0].scale  # the keys go to the focused slider
        _press(qtbot, scale, Qt.Key.Key_End if value == 100 else Qt.Key(Qt.Key.Key_0 + value // 10))
        _press(qtbot, scale, Qt.Key.Key_Return)
        given[(rater, key, kind)] = value
        assert screen.saved_label.text().startswith("Saved ✓")
        counter = screen.progress_label.text()
        if screen.current_item() is None:
            assert counter.startswith(f"{len(given)} of {len(given)} rated · ")
        else:
            assert counter.startswith(f"Item {len(given) + 1} of ")
    if limit is None:
        assert screen.end_screen.send_back_button.isVisible()
        assert "Send back" in screen.end_screen.next_step.text()

    window.actions_.send_back.trigger()
    dialog = window.rater_mode.dialog
    assert dialog is not None and dialog.isVisible()
    dialog.folder_edit.setText(str(back))
    qtbot.mouseClick(dialog.send_button, Qt.MouseButton.LeftButton)
    assert dialog.sent is not None and dialog.sent.path == back / kit.name
    assert dialog.sent.ratings == len(given)
    said = dialog.result_label.text()
    assert str(back / kit.name) in said and "Collect rater kits" in said
    return given


def _make_kits(window: Any, qtbot: Any, lead: Path, out: Path) -> None:
    assert window.studies.open_path(lead)
    assert not window.rater_mode.active and _visible_pages(window) == LEAD_PAGES
    window.actions_.make_kits.trigger()
    dialog = window.findChild(QDialog, "makeKitsDialog")
    dialog.raters_edit.setText(", ".join(RATERS))
    dialog.folder_edit.setText(str(out))
    qtbot.mouseClick(dialog.make_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.made is not None, timeout=60_000)
    assert [m.rater for m in dialog.made] == list(RATERS)
    assert all((out / f"{r}.mbkit").is_file() for r in RATERS)
    assert "3 kits made" in dialog.result_label.text()
    dialog.close()


def _collect(window: Any, qtbot: Any, back: Path) -> Any:
    window.actions_.collect_kits.trigger()
    dialog = window.findChild(QDialog, "collectKitsDialog")
    dialog.folder_edit.setText(str(back))
    dialog.report = None
    with qtbot.waitSignal(window.context.study_changed, timeout=60_000) as changed:
        qtbot.mouseClick(dialog.collect_button, Qt.MouseButton.LeftButton)
    assert changed.args[0].everything  # every screen reloads the ratings
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=60_000)
    return dialog


def _campaign(window: Any, qtbot: Any, tmp_path: Path, n_sources: int, last_rates: int) -> None:
    _activate(window, qtbot)
    lead = tmp_path / "lead.mbstudy"
    study = lead_study(lead, seed=1, n_sources=n_sources)
    add_practice(study, PRACTICE)
    study.close()
    kits, back = tmp_path / "kits", tmp_path / "returned"
    _make_kits(window, qtbot, lead, kits)

    given: Given = {}
    for rater in RATERS:
        limit = last_rates if rater == RATERS[-1] else None
        given |= _rate_in_window(window, qtbot, kits / f"{rater}.mbkit", rater, back, limit, lead)
    tamper(back / "ben.mbkit", back / "ben-edited.mbkit")

    assert window.studies.open_path(lead)  # the lead's own study: every page is back
    assert not window.rater_mode.active and _visible_pages(window) == LEAD_PAGES
    assert window.actions_.settings.isVisible() and not window.actions_.send_back.isVisible()
    dialog = _collect(window, qtbot, back)
    report = dialog.report
    assert {k.rater: k.merge.ratings_added for k in report.collected} == dict(
        Counter(a for a, _k, _kind in given)
    )
    assert [p.name for p, _why in report.refused] == ["ben-edited.mbkit"]
    assert "changed since it was made" in dialog.refused.text()
    assert dialog.table.rowCount() == len(RATERS)
    shown = {
        dialog.table.item(r, 0).text(): int(dialog.table.item(r, 2).text())
        for r in range(dialog.table.rowCount())
    }
    assert shown == {k.rater: k.merge.ratings_added for k in report.collected}

    again = _collect(window, qtbot, back).report  # collected twice: adds nothing
    assert [k.merge.ratings_added for k in again.collected] == [0, 0, 0]
    assert "0 new ratings" in dialog.result_label.text()

    # carla stopped early: a top-up of her short items for ana and ben (the dialog's option).
    window.actions_.make_kits.trigger()
    make = window.findChild(QDialog, "makeKitsDialog")
    make.raters_edit.setText("ana, ben")
    make.top_up.setChecked(True)
    make.made = None
    qtbot.mouseClick(make.make_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: make.made is not None, timeout=60_000)
    assert make.made and all(m.top_up and "-top-up-" in m.path.name for m in make.made)
    assert {m.rater for m in make.made} <= {"ana", "ben"}

    window.studies.close_study()
    study = open_study(lead)
    try:
        held, rows = held_ratings(study)
    finally:
        study.close()
    assert held == given and rows == len(given)  # exactly the ratings given, each once


def test_the_scripted_campaign_through_the_window(window: Any, qtbot: Any, tmp_path: Path) -> None:
    """3 raters, overlap 2 of 3, 60 items; carla rates 20 of hers before sending back
    (about 12 s: quick enough for every run)."""
    _campaign(window, qtbot, tmp_path, n_sources=30, last_rates=20)
