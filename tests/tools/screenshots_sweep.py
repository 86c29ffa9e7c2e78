"""Screenshots of the Sweep page after a real sweep of the embedded MiniLM on CSMD dev.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_sweep [OUT_DIR]

Imports the public CSMD dev ratings (the copy shipped with the tests) into a study
in a temporary data folder, sweeps MiniLM's six layers with BERTScore (idf none and from
the sources) and SBERT cosine in the main window, and saves resources/screenshots/sweep.png
(the page, light) and sweep-1024-dark.png (the window at 1024×640, dark). The window at
1024×640 and 1366×768 in both themes goes to OUT_DIR (default: a temporary folder) as
sweep-WIDTH-THEME.png.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "resources" / "screenshots"
CSMD = ROOT / "tests" / "fixtures" / "datasets" / "csmd"
PAGE_SIZE = (1500, 960)
SIZES = [(1024, 640), (1366, 768)]
DOCS = {"sweep-1024-dark.png": "sweep-1024-dark.png"}
TIMEOUT_S = 900


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mb-sweep-"))
    out.mkdir(parents=True, exist_ok=True)
    if not (CSMD / "dev.tsv").is_file():
        print(f"needs the CSMD data in {CSMD}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = tmp
        from PySide6.QtCore import QPoint

        from meaningbench.datasets.importer import import_file
        from meaningbench.db.study import create_study
        from meaningbench.ui.launch import create_application, start
        from tests.tools.screenshots import wait
        from tests.tools.screenshots_laptop import grab

        study = create_study(Path(tmp) / "csmd-dev.mbstudy")
        import_file(study, CSMD / "dev.tsv", dataset="csmd-dev")
        path = study.path
        study.close()
        app = create_application()
        window = start([str(path)])
        window.move(QPoint(0, 0))
        window.set_theme("light")
        wait(app, 30, lambda: window.context.study is not None)
        window.show_page("sweep")
        page = window.page("sweep")
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
        # The page as the docs show it: wide, light.
        window.resize(PAGE_SIZE[0] + 160, PAGE_SIZE[1] + 90)
        wait(app, 0.5)
        target = OUT / "sweep.png"
        page.grab().save(str(target), "PNG", 9)
        print(f"  {target.relative_to(ROOT)}  {target.stat().st_size // 1024} KB")
        for theme in ("light", "dark"):
            window.set_theme(theme)
            for width, height in SIZES:
                window.resize(width, height)
                wait(app, 0.3)
                grab(app, window, out, f"sweep-{width}-{theme}.png")
        window.set_theme("light")
        for shot, name in DOCS.items():
            shutil.copyfile(out / shot, OUT / name)
            print(f"  {(OUT / name).relative_to(ROOT)}")
        window.close()
        print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
