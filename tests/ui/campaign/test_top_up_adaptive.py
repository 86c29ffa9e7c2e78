"""Make top-up kits… with an adaptive order: the round's items chosen from the ratings
collected, where the systems' ranking is least settled, and no more than asked."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from tests.kits.campaign_study import campaign_study, ratings_in
from tests.ui.campaign.test_page import _campaign_page, _kit_items, _rated_by


def test_an_adaptive_top_up_hands_out_the_items_asked_for(window, qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    path = campaign_study(tmp_path)
    page = _campaign_page(window, qtbot, path)
    short = {k for k, n in ratings_in(path).items() if n < 2}
    dialog = page.show_top_up_dialog()
    assert dialog is not None
    assert dialog.choice().adaptive is None and dialog.choice().items is None
    dialog.order.setCurrentIndex(dialog.order.findData("systems"))
    dialog.items.setValue(3)
    assert dialog.items.text() == "3"
    dialog.set_chosen(["ana"])
    out = tmp_path / "top-up"
    dialog.folder.setText(str(out))
    qtbot.mouseClick(dialog.make_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.job is None and bool(dialog.made), timeout=20_000)
    (kit,) = sorted(out.glob("*.mbkit"))
    held = _kit_items(kit, path)
    assert len(held) == 3 and held <= short - _rated_by(path, "ana")
    assert "3 items" in dialog.status.text()
