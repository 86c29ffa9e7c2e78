"""A screenshot of the Sweep page after a real sweep of the embedded MiniLM on CSMD dev.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.screenshots_sweep

Imports the public CSMD dev ratings (the copy shipped with the tests) into a study
in a temporary data folder, sweeps MiniLM's six layers with BERTScore (idf none and from
the sources) and SBERT cosine, and saves resources/screenshots/sweep.png.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "screenshots"
CSMD = ROOT / "tests" / "fixtures" / "datasets" / "csmd"
SIZE = (1500, 960)
TIMEOUT_S = 900


def main() -> int:
    from PySide6.QtWidgets import QApplication

    if not (CSMD / "dev.tsv").is_file():
        print(f"needs the CSMD data in {CSMD}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = tmp
        app = QApplication(sys.argv)
        from meaningbench.ui.theme import ThemeManager

        ThemeManager(app).apply(choice="light")
        from meaningbench.datasets.importer import import_file
        from meaningbench.db.study import create_study, open_study
        from meaningbench.ui.context import StudyContext
        from meaningbench.ui.sweep import SweepPage

        study = create_study(Path(tmp) / "csmd-dev.mbstudy")
        import_file(study, CSMD / "dev.tsv", dataset="csmd-dev")
        path = study.path
        study.close()
        context = StudyContext()
        context.runner.show_error_dialogs = False
        context.set_study(open_study(path))
        page = SweepPage(context)
        page.resize(*SIZE)
        page.show()
        page.idf["sources"].setChecked(True)
        page.metrics["sbert_cosine"].setChecked(True)
        if page.start() is None:
            print("the sweep did not start:", page.status.text())
            return 1
        end = time.monotonic() + TIMEOUT_S
        while (page.job is not None or page.table_data is None) and time.monotonic() < end:
            app.processEvents()
            time.sleep(0.05)
        if page.table_data is None:
            print("no table:", page.status.text())
            return 1
        for _ in range(10):
            app.processEvents()
        OUT.mkdir(parents=True, exist_ok=True)
        target = OUT / "sweep.png"
        page.grab().save(str(target), "PNG", 9)
        print(f"  {target.relative_to(ROOT)}  {target.stat().st_size // 1024} KB")
        context.set_study(None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
