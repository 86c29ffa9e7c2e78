"""The browser on a 1024×640 screen: the Ratings, Mean and flag columns are in view without
scrolling sideways, whether the study opened in that window or in a larger one made small,
and with dataset and system names as long as real corpora have. Source and output give up
the width; a shortened name is whole in its tooltip."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import open_in

LONG_DATASET = "simpda_2022_human_judgements_of_meaning"
LONG_SYSTEM = "muss-bart-large-wikilarge-mined-fr"


@pytest.fixture
def long_names(study_with_facts: tuple[Path, object]) -> Path:
    path, _facts = study_with_facts
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE dataset SET name = ? WHERE name = 'alpha'", (LONG_DATASET,))
        conn.execute("UPDATE item SET system = ? WHERE system = 'sys1'", (LONG_SYSTEM,))
    conn.close()
    return path


def columns_in_view(page) -> list[str]:  # noqa: ANN001
    table, model = page.table, page.model
    header, width = table.horizontalHeader(), table.viewport().width()
    return [
        model.column_key(c)
        for c in range(model.columnCount())
        if not table.isColumnHidden(c)
        and header.sectionViewportPosition(c) >= 0
        and header.sectionViewportPosition(c) + header.sectionSize(c) <= width
    ]


@pytest.mark.parametrize("opened_at", [(1024, 640), (1600, 1000)])
def test_the_ratings_column_is_in_view_at_1024x640(
    window, qtbot, long_names: Path, opened_at: tuple[int, int]
) -> None:
    window.show()
    window.resize(*opened_at)
    qtbot.wait(50)
    open_in(window, long_names, qtbot)
    window.resize(1024, 640)
    qtbot.wait(100)
    page = window.page("browser")
    assert page.table.horizontalScrollBar().value() == 0
    shown = columns_in_view(page)
    for key in ("id", "source", "output", "ratings", "mean", "flag"):
        assert key in shown, (key, shown)
    # Source and output still show a few words each.
    chars = page.table.fontMetrics().horizontalAdvance("x")
    for key in ("source", "output"):
        assert page.table.columnWidth(page.model.column_of(key)) >= 10 * chars
    # Back in a large window, the text columns take the room again.
    window.resize(1600, 1000)
    qtbot.wait(100)
    assert page.table.columnWidth(page.model.column_of("output")) >= 22 * chars


def test_a_shortened_dataset_or_system_name_is_whole_in_its_tooltip(
    window, qtbot, long_names: Path
) -> None:
    window.show()
    open_in(window, long_names, qtbot)
    model = window.page("browser").model
    tips = {
        model.data(model.index(r, model.column_of(key)), Qt.ItemDataRole.ToolTipRole)
        for r in range(model.rowCount())
        for key in ("dataset", "system")
    }
    assert {LONG_DATASET, LONG_SYSTEM} <= tips
