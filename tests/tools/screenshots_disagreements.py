"""Screenshots of the Disagreements view (Campaign ▸ Disagreements…) on the scripted
campaign's study (3 raters, 60 items, overlap 2), one item settled with an adjudicated
score, over the window at 1280×720 and 1024×640, light and dark.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_disagreements [OUT]

Writes disagreements-WIDTH-THEME.png into OUT (default: a temporary folder), and the two
resources/docs/rating.md shows into resources/screenshots/.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

DOCS = {
    "disagreements-1280-light.png": "disagreements.png",
    "disagreements-1024-dark.png": "disagreements-1024-dark.png",
}


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mb-dis-"))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = tmp
        from tests.kits.campaign_study import campaign_study
        from tests.tools.screenshots import wait
        from tests.tools.screenshots_laptop import copy_for_docs, grab
        from tests.tools.shot_studies import looks, over_window, window_on

        app, window = window_on(campaign_study(Path(tmp)), "campaign")
        page = window.page("campaign")
        wait(app, 60, lambda: page.figures is not None)
        for width, theme in looks(app, window):
            dialog = page.show_disagreements()
            assert dialog is not None
            wait(app, 60, lambda d=dialog: d.view is not None and d.job is None)
            if dialog.view is not None and dialog.view.report and not dialog.view.report.n_resolved:
                dialog.table.selectRow(0)
                dialog.score.setValue(40)
                dialog.note.setText("the output drops the year")
                dialog.settle("score")
                wait(app, 60, lambda d=dialog: "1 settled" in d.summary.text())
            dialog.table.selectRow(1 if dialog.table.rowCount() > 1 else 0)
            over_window(app, window, dialog, (980, 560))
            grab(app, window, out, f"disagreements-{width}-{theme}.png")
            dialog.close()
        copy_for_docs(out, DOCS)
        window.close()
        print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
