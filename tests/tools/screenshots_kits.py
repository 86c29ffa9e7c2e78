"""A campaign's screens: a rater kit in rater mode (1280×720 and 1024×640, light and dark, the
practice and the rating screen), Send back, and the lead's File ▸ Make rater kits… and
File ▸ Collect rater kits… dialogs.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_kits [OUT_DIR]
Writes the shots into OUT_DIR (default: a temporary folder), then the one the docs show
(resources/docs/rating.md) as resources/screenshots/rater-mode.png. Uses the demo study as
the lead's, with two practice items and an overlap of 2 of 3.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.tools.screenshots import wait
from tests.tools.screenshots_laptop import copy_for_docs, grab
from tests.tools.shot_studies import SIZES, lead_study

DOCS = {"rater-1280-light.png": "rater-mode.png"}
# Written for these pictures (no dataset text is copied into the project).
PRACTICE = [
    (
        "The library will stay open until nine on weekdays from next month.",
        "From next month, the library closes at nine on weekdays.",
        70.0,
        100.0,
        "Every fact is kept; only the wording changes.",
    ),
    (
        "The council postponed the vote on the new bus routes until the spring.",
        "The council voted for the new bus routes.",
        0.0,
        30.0,
        "The simplified text says the vote took place; it was postponed.",
    ),
]


def press(app: Any, keys: list[Any]) -> None:
    """Keys to the focused widget, as the rater types them."""
    from PySide6.QtTest import QTest

    for key in keys:
        focused = app.focusWidget()
        assert focused is not None, "nothing has the keyboard focus"
        QTest.keyClick(focused, key)
        wait(app, 0.05)


def show_dialog(app: Any, window: Any, dialog: Any, out: Path, name: str) -> None:
    """The dialog on its own, centred on the window."""
    dialog.show()
    geo = window.frameGeometry()
    dialog.move(geo.center() - dialog.rect().center())
    wait(app, 0.5)
    g = dialog.frameGeometry()
    pixmap = app.primaryScreen().grabWindow(0, g.x(), g.y(), g.width(), g.height())
    pixmap.save(str(out / name), "PNG")
    print(f"wrote {out / name}: {g.width()}x{g.height()}")


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mb-kits-"))
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="mb-shots-"))
    os.environ["MEANINGBENCH_HOME"] = str(home)
    lead = lead_study(home, PRACTICE)

    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QDialog

    from meaningbench.ui.launch import create_application, start

    app = create_application()
    window = start([str(lead)])
    window.move(QPoint(20, 20))
    window.resize(1280, 720)
    wait(app, 30, lambda: window.context.study is not None)

    # The lead makes the kits (File ▸ Make rater kits…).
    window.actions_.make_kits.trigger()
    make = window.findChild(QDialog, "makeKitsDialog")
    make.raters_edit.setText("ana, ben, carla")
    show_dialog(app, window, make, out, "make-kits-empty.png")
    make.make()
    wait(app, 60, lambda: make.made is not None)
    show_dialog(app, window, make, out, "make-kits.png")
    make.close()
    kits = Path(make.folder_edit.text())

    # ana opens her kit: practice first, then her queue.
    assert window.studies.open_path(kits / "ana.mbkit")
    window.activateWindow()
    wait(app, 5, window.isActiveWindow)
    page = window.page("annotate")
    wait(app, 5, lambda: page.practice is not None)
    for width, height in SIZES:
        window.resize(width, height)
        grab(app, window, out, f"rater-practice-{width}-light.png")
    window.resize(1280, 720)
    press(app, [Qt.Key.Key_8, Qt.Key.Key_Return])
    grab(app, window, out, "rater-practice-feedback-1280-light.png")
    press(app, [Qt.Key.Key_Return, Qt.Key.Key_2, Qt.Key.Key_Return, Qt.Key.Key_Return])
    wait(app, 5, lambda: page.screen is not None)
    for digit in (Qt.Key.Key_7, Qt.Key.Key_5, Qt.Key.Key_9, Qt.Key.Key_4):
        press(app, [digit, Qt.Key.Key_Return])
    press(app, [Qt.Key.Key_6])  # the next one set, not yet submitted
    for theme in ("light", "dark"):
        window.set_theme(theme)
        for width, height in SIZES:
            window.resize(width, height)
            wait(app, 0.3)
            grab(app, window, out, f"rater-{width}-{theme}.png")
    window.set_theme("light")
    window.resize(1280, 720)
    press(app, [Qt.Key.Key_Return])

    # Send back, into the folder beside the kit.
    dialog = window.rater_mode.send_back()
    assert dialog is not None
    show_dialog(app, window, dialog, out, "send-back-ask.png")
    dialog.send()
    show_dialog(app, window, dialog, out, "send-back-done.png")
    sent = dialog.sent
    assert sent is not None
    dialog.close()

    # ben rated his through the engine and sent it back; an edited copy comes back too.
    from meaningbench.db.study import copy_study
    from tests.kits.campaign_helpers import rate_kit, tamper

    rate_kit(kits / "ben.mbkit", "ben", limit=12)
    copy_study(kits / "ben.mbkit", sent.path.parent / "ben.mbkit")
    tamper(kits / "ben.mbkit", sent.path.parent / "ben-edited.mbkit")

    # The lead collects the folder (File ▸ Collect rater kits…).
    assert window.studies.open_path(lead)
    window.actions_.collect_kits.trigger()
    collect = window.findChild(QDialog, "collectKitsDialog")
    collect.folder_edit.setText(str(sent.path.parent))
    show_dialog(app, window, collect, out, "collect-kits-empty.png")
    collect.collect()
    wait(app, 60, lambda: collect.report is not None)
    show_dialog(app, window, collect, out, "collect-kits.png")
    collect.close()
    window.close()
    copy_for_docs(out, DOCS)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
