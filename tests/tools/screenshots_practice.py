"""The practice pass mark in a rater's kit: the end of a failed attempt, and the refusal a
rater out of attempts sees (why they cannot start yet, and what to do), light and dark at
1024×640 and 1280×720.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_practice [OUT_DIR]
Writes the shots into OUT_DIR (default: a temporary folder), then the ones the docs show
(resources/docs/rating.md) into resources/screenshots/. Uses the demo study as the lead's,
with the two practice items of `screenshots_kits` and a pass mark of 2 of 2 within 10
points, in 2 attempts, stopping a rater who fails both.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.tools.screenshots import wait
from tests.tools.screenshots_kits import PRACTICE, press
from tests.tools.screenshots_laptop import copy_for_docs, grab
from tests.tools.shot_studies import SIZES, lead_study

DOCS = {
    "practice-refused-1024-light.png": "practice-refused-1024.png",
    "practice-refused-1024-dark.png": "practice-refused-1024-dark.png",
    "practice-attempt-1280-light.png": "practice-attempt.png",
}


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mb-prac-"))
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="mb-shots-"))
    os.environ["MEANINGBENCH_HOME"] = str(home)
    lead_path = lead_study(home, PRACTICE)

    from PySide6.QtCore import QPoint, Qt

    from meaningbench.annotation.protocols import PracticeOptions, set_protocol
    from meaningbench.db.study import open_study
    from meaningbench.kits.making import make_kits
    from meaningbench.ui.launch import create_application, start

    lead = open_study(lead_path)
    try:
        set_protocol(lead, practice=PracticeOptions(2, 10.0, 2, "stop", out_of=2))
        make_kits(lead, ["ana"], home / "kits")
    finally:
        lead.close()

    app = create_application()
    window = start([str(home / "kits" / "ana.mbkit")])
    window.move(QPoint(20, 20))
    window.resize(1280, 720)
    wait(app, 30, lambda: window.context.study is not None)
    window.activateWindow()
    wait(app, 5, window.isActiveWindow)
    page = window.page("annotate")
    wait(app, 5, lambda: page.practice is not None)
    # Attempt 1: 20 for a pair expected 70–100, 80 for one expected 0–30: both far off.
    miss = [Qt.Key.Key_2, Qt.Key.Key_Return, Qt.Key.Key_Return]
    miss += [Qt.Key.Key_8, Qt.Key.Key_Return, Qt.Key.Key_Return]
    press(app, miss)
    grab(app, window, out, "practice-attempt-1280-light.png")
    press(app, [Qt.Key.Key_Return, *miss])  # attempt 2, missed again: refused
    wait(app, 5, lambda: page.practice is not None and page.practice.standing.stopped)
    for theme in ("light", "dark"):
        window.set_theme(theme)
        for width, height in SIZES:
            window.resize(width, height)
            wait(app, 0.3)
            grab(app, window, out, f"practice-refused-{width}-{theme}.png")
    window.set_theme("light")
    copy_for_docs(out, DOCS)
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
