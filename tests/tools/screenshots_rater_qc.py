"""Screenshots of the Rater QC view (Campaign ▸ Rater QC…) on a study of three raters, one of
whom turns careless halfway through their queue (tests/analysis/careless_study.py), over
the window at 1280×720 and 1024×640, light and dark: controls passed, r with the others,
and seconds per item with cy's row selected.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_rater_qc [OUT]

Writes rater-qc-MEASURE-WIDTH-THEME.png into OUT (default: a
temporary folder), and the ones resources/docs/rating.md shows into resources/screenshots/.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

DOCS = {
    "rater-qc-r-1024-light.png": "rater-qc.png",
    "rater-qc-seconds-1024-dark.png": "rater-qc-seconds-dark.png",
}


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mb-qc-"))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = tmp
        from tests.analysis.careless_study import careless_study
        from tests.tools.screenshots import wait
        from tests.tools.screenshots_laptop import copy_for_docs, grab
        from tests.tools.shot_studies import looks, over_window, window_on

        app, window = window_on(careless_study(Path(tmp) / "lead.mbstudy"), "campaign")
        page = window.page("campaign")
        wait(app, 60, lambda: page.figures is not None)
        for width, theme in looks(app, window):
            dialog = page.show_qc_view()
            assert dialog is not None
            wait(app, 60, lambda d=dialog: d.view is not None and d.job is None)
            over_window(app, window, dialog, (980, 600))
            for index, name in ((0, "controls"), (2, "r"), (1, "seconds")):
                dialog.measure.setCurrentIndex(index)
                if name == "seconds":
                    dialog.table.selectRow(dialog.table.rowCount() - 1)
                grab(app, window, out, f"rater-qc-{name}-{width}-{theme}.png")
            dialog.close()
        copy_for_docs(out, DOCS)
        window.close()
        print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
