"""What the window's keys do is what the user guide's key table says they do."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtGui import QKeySequence

APP_MD = Path(__file__).resolve().parents[2] / "resources" / "docs" / "app.md"


def documented_keys() -> dict[str, str]:
    """The "Keys of the window" table of app.md: keys → action."""
    text = APP_MD.read_text(encoding="utf-8")
    table = text.split("## Keys of the window", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (.+?) \| (.+?) \|$", table, flags=re.M)
    return {keys: what for keys, what in rows if keys not in ("Keys", "---")}


def test_f1_and_the_shortcuts_key_do_what_the_guide_says(window) -> None:
    from meaningbench.ui.menus import shortcut_rows

    documented = documented_keys()
    actions = window.actions_
    f1 = [a for a in window.actions() if a.shortcut() == QKeySequence("F1")]
    assert [a.text().replace("&", "") for a in f1] == ["User guide"]
    assert documented["F1"].startswith("User guide")
    assert documented["Ctrl+/"] == "Keyboard shortcuts"
    keymap = [a for a in window.actions() if a.shortcut() == QKeySequence("Ctrl+/")]
    assert [a.text().replace("&", "") for a in keymap] == ["Keyboard shortcuts"]
    assert ("User guide", "F1") in shortcut_rows(actions)  # the in-app list says it too
