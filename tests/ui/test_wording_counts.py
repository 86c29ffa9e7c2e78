"""Counts on the screens say "1 metric run", "1 dataset", "1 item", never "1 metric runs",
and the dialogs speak of their own fields, not of the command line's flags."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from meaningbench.cli import main
from tests.conftest import FIXTURE_DATASETS
from tests.kits.campaign_helpers import lead_study
from tests.ui.browser.test_page import wait_filter
from tests.ui.conftest import open_in


def test_the_status_bar_and_the_settings_count_in_the_singular(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    path = tmp_path / "dev.mbstudy"
    assert main(["import", str(path), str(FIXTURE_DATASETS / "csmd" / "dev.tsv")]) == 0
    assert main(["score", str(path), "--metrics", "bleu"]) == 0
    window.show()
    open_in(window, path, qtbot)
    window.refresh_counts()
    counts = window.status.counts_label.text()
    assert counts.endswith("· 1 metric run"), counts
    dialog = window.show_settings_dialog()
    contents = dialog.contents_label.text()
    assert "1 metric run ·" in contents and "· 1 dataset ·" in contents, contents
    assert "1 metric runs" not in contents and "1 datasets" not in contents


def test_the_browser_counts_one_item(window: Any, qtbot: Any, study_with_facts) -> None:
    path, _facts = study_with_facts
    window.show()
    open_in(window, path, qtbot)
    page = window.page("browser")
    page.search_edit.setText("number 7 ")  # one source says "number 7"
    page.apply_filters()
    wait_filter(qtbot, page)
    assert page.model.rowCount() == 1
    assert page.count_label.text() == "1 item"


def test_the_kits_dialog_names_its_field_not_the_flag(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=1).close()
    assert window.studies.open_path(lead)
    window.actions_.make_kits.trigger()
    dialog = window.findChild(QDialog, "makeKitsDialog")
    dialog.raters_edit.setText("ana, ../ben")
    dialog.folder_edit.setText(str(tmp_path / "kits"))
    qtbot.mouseClick(dialog.make_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=30_000)
    said = dialog.result_label.text()
    assert "may not hold / or \\" in said, said  # the engine's reason, whole
    assert "--" not in said and "Raters " in said, said
    assert not (tmp_path / "kits").exists() or not any((tmp_path / "kits").iterdir())


# A number put straight before a plural noun in a screen's f-string: "{n} items" says
# "1 items" when n is 1. Resamples and steps are never one.
BARE_COUNT = re.compile(
    r"\{[^{}\"']*\}\s+(items|ratings|metric runs|datasets|files|sources|labels|raters|"
    r"annotators|kits|conflicts|notes|outputs|configurations|metrics|jobs|rows|spans|systems)\b"
)


def test_no_screen_puts_a_bare_number_before_a_plural() -> None:
    import meaningbench.ui as ui

    root = Path(ui.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if BARE_COUNT.search(line) and "capitalize()" not in line:
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)
