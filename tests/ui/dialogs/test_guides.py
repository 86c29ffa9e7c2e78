"""Help ▸ User guide shows the Markdown guides of resources/docs and follows their links."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QKeySequence

from meaningbench.guides import docs_dir, guides

README = Path(__file__).resolve().parents[3] / "README.md"


def test_every_guide_is_listed_in_the_readme_and_in_the_app() -> None:
    listed = set(re.findall(r"\(resources/docs/([\w\-]+\.md)\)", README.read_text()))
    on_disk = {p.name for p in docs_dir().glob("*.md")}
    assert on_disk - {"figures.md"} <= listed, "a guide the README does not link"
    assert listed <= on_disk, "the README links a guide that does not exist"
    assert {g.path.name for g in guides()} == on_disk


def test_user_guide_opens_from_f1_and_follows_links(window, qtbot) -> None:
    window.show()
    qtbot.waitExposed(window)
    qtbot.keySequence(window, QKeySequence(QKeySequence.StandardKey.HelpContents))
    qtbot.waitUntil(lambda: "guides" in window._dialogs, timeout=5_000)
    dialog = window._dialogs["guides"]
    assert dialog.list.count() == len(guides())
    first = dialog.browser.toPlainText()
    assert first.strip(), "the first guide is rendered"
    row = [g.path.name for g in dialog.guides].index("rating.md")
    dialog.list.setCurrentRow(row)
    text = dialog.browser.toPlainText()
    assert "Rating items" in text and text != first
    assert "#" not in text.splitlines()[0], "Markdown is rendered, not shown as source"
    # A link to another guide moves the list along with the page.
    target = QUrl.fromLocalFile(str(docs_dir() / "data.md"))
    dialog.browser.setSource(target)
    assert dialog.guides[dialog.list.currentRow()].path.name == "data.md"
    dialog.list.setFocus()
    qtbot.keyClick(dialog.list, Qt.Key.Key_Down)
    assert dialog.guides[dialog.list.currentRow()].path.name != "data.md"
    dialog.close()


def test_every_guide_title_shows_whole_in_the_list(qtbot) -> None:
    from PySide6.QtCore import QRect

    from meaningbench.ui.dialogs.guides import GuidesDialog

    dialog = GuidesDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.wait(50)
    view = dialog.list
    metrics = view.fontMetrics()
    assert max(len(g.title) for g in dialog.guides) > 60
    for row, guide in enumerate(dialog.guides):
        rect = view.visualRect(view.model().index(row, 0))
        flags = int(Qt.TextFlag.TextWordWrap)
        needed = metrics.boundingRect(QRect(0, 0, rect.width() - 8, 10_000), flags, guide.title)
        assert needed.width() <= rect.width() and needed.height() <= rect.height(), (
            f"{guide.title!r} needs {needed.width()}×{needed.height()} px, "
            f"has {rect.width()}×{rect.height()}"
        )
        assert rect.right() <= view.viewport().width()
