"""The rater's end screen: a kit in rater mode after its last item (1280×720 and 1024×640,
light and dark), the header's counter on the last item before it, and the lead's Annotate
page after their own queue is done.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_end_screen [OUT]
Writes the shots into OUT (default: a temporary folder), then the ones the docs show
(resources/docs/rating.md) into resources/screenshots/. The lead's study is the demo study
with an overlap of 2 of 3; the rater's earlier items are rated through the engine, each as if
it had been on screen for 20 to 40 seconds, so the time spent reads as a rater's would.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.tools.screenshots import wait
from tests.tools.screenshots_laptop import copy_for_docs, grab
from tests.tools.shot_studies import SIZES, lead_study, looks

DOCS = {
    "end-1280-light.png": "rater-end-screen.png",
    "end-1280-dark.png": "rater-end-screen-dark.png",
    "end-1024-light.png": "rater-end-screen-1024.png",
    "end-1024-dark.png": "rater-end-screen-1024-dark.png",
}


def rate_last(app: Any, screen: Any) -> None:
    """The last item rated by keys, as the rater does it."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    for key in (Qt.Key.Key_6, Qt.Key.Key_5, Qt.Key.Key_Return):
        QTest.keyClick(app.focusWidget() or screen, key)
        wait(app, 0.05)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mb-end-"))
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="mb-shots-"))
    os.environ["MEANINGBENCH_HOME"] = str(home)
    lead = lead_study(home)

    from PySide6.QtCore import QPoint

    from meaningbench.db.study import open_study
    from meaningbench.kits.making import make_kits
    from meaningbench.ui.launch import create_application, start
    from tests.kits.campaign_helpers import rate_kit

    study = open_study(lead)
    try:
        kit = make_kits(study, ["ana", "ben"], home / "kits")[0].path
    finally:
        study.close()

    app = create_application()
    window = start([str(kit)])
    window.move(QPoint(20, 20))
    window.resize(1280, 720)
    wait(app, 30, lambda: window.context.study is not None)
    page = window.page("annotate")
    wait(app, 30, lambda: page.screen is not None)
    total = page.screen.queue.progress().total
    window.studies.close_study()
    rate_kit(kit, "ana", limit=total - 1, seconds=lambda n: 20 + (n * 7) % 21)

    assert window.studies.open_path(kit)
    window.activateWindow()
    wait(app, 5, window.isActiveWindow)
    screen = page.screen
    for width, height in SIZES:
        window.resize(width, height)
        wait(app, 0.3)
        window.resize(width, height)  # once more: the first can land before the layout does
        grab(app, window, out, f"last-item-{width}-light.png")
    window.resize(1280, 720)
    rate_last(app, screen)
    wait(app, 5, lambda: screen.current_item() is None)
    for width, theme in looks(app, window):
        grab(app, window, out, f"end-{width}-{theme}.png")
    window.resize(1280, 720)

    # The lead's own queue, in the lead's study: the Annotate page says it is done.
    assert window.studies.open_path(lead)
    assert window.show_page("annotate")
    assert page.start("lea")
    lead_screen = page.screen
    left = lead_screen.queue.progress().left
    from meaningbench.ops.rate import submit_rating

    for _ in range(left - 1):
        item = lead_screen.current_item()
        values = {sc.name: 50.0 for sc in lead_screen.queue.scales}
        window.runner.run_now(
            submit_rating(lead_screen.queue, item.item_id, values, dict.fromkeys(values), None)
        )
        lead_screen._show(lead_screen.queue.advance())  # noqa: SLF001 - a shot's shortcut
    window.activateWindow()
    wait(app, 5, window.isActiveWindow)
    lead_screen.setFocus()
    rate_last(app, lead_screen)
    wait(app, 5, lambda: page.screen is None)
    for width, theme in looks(app, window):
        grab(app, window, out, f"lead-done-{width}-{theme}.png")
    window.close()
    copy_for_docs(out, DOCS)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
