"""Screenshots of an LLM judge stored as a machine rater: the browser marking its ratings, and
the Run metrics dialog after "All available" (which leaves the judge unticked and says why).

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_judge [STUDY]

Imports the first ITEMS pairs of the public CSMD dev ratings (the copy shipped with the tests)
into a study in a temporary data folder, scores BLEU and chrF, and rates the items with the
embedded SmolLM2 judge as the machine rater `smollm2-judge` (`meaningbench judge --as-rater`;
about 15–25 s per item on a small CPU). STUDY: such a study made before, used as it is.
Saves resources/screenshots/browser-machine-rater.png (the browser with a judged item in
the detail pane, light) and battery-all-available.png (the dialog after "All available",
scrolled to the judge's row).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.tools.screenshots import OUT_DIR, grab, open_browser, wait

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[2]
CSMD_DEV = ROOT / "tests" / "fixtures" / "datasets" / "csmd" / "dev.tsv"
ITEMS = 10
RATER = "smollm2-judge"
SIZE = (1560, 900)


def judged_study(folder: Path) -> Path:
    from meaningbench.cli import main

    part = folder / "csmd-dev-first.tsv"
    lines = CSMD_DEV.read_text(encoding="utf-8").splitlines(keepends=True)
    part.write_text("".join(lines[: ITEMS + 1]), encoding="utf-8")
    path = folder / "csmd-dev.mbstudy"
    steps = [
        ["import", str(path), str(part), "--format", "csmd"],
        ["score", str(path), "--metrics", "bleu,chrf"],
        ["judge", str(path), "--as-rater", RATER, "--device", "cpu"],
    ]
    for args in steps:
        if main(args) != 0:
            raise SystemExit(f"meaningbench {' '.join(args)} failed")
    return path


def main() -> int:
    home = Path(tempfile.mkdtemp(prefix="mb-judge-shots-"))
    os.environ["MEANINGBENCH_HOME"] = str(home)
    study = Path(sys.argv[1]) if len(sys.argv) > 1 else judged_study(home)

    from PySide6.QtCore import Qt

    app, window = open_browser(study, SIZE, detail_width=520)
    page = window.page("browser")
    page.fit_columns()
    page.select_item(page.model.item_id(1) or 1)
    grab(app, window, "browser-machine-rater.png")

    dialog = window.show_battery_dialog()
    wait(app, 300, lambda: bool(dialog.metrics))
    dialog.all_button.click()
    judge = next(
        i for i in dialog._metric_items() if i.data(0, Qt.ItemDataRole.UserRole + 1) == "llm_judge"
    )
    dialog.tree.scrollToItem(judge)
    dialog.tree.setCurrentItem(judge)
    wait(app, 0.6)
    geo = dialog.frameGeometry()
    shot = OUT_DIR / "battery-all-available.png"
    app.primaryScreen().grabWindow(0, geo.x(), geo.y(), geo.width(), geo.height()).save(
        str(shot), "PNG"
    )
    print(f"wrote {shot} ({shot.stat().st_size // 1024} KB)")
    dialog.close()
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
