"""Real-window screenshots of the main window for the README.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots
Writes resources/screenshots/browser.png (light), browser-dark.png and battery.png (the
battery dialog while it runs, light; Xvfb has no window manager, so no title bars). Uses the demo study (its sentences are written by this project),
scored beforehand with a few metrics so the browser shows score columns.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

OUT_DIR = Path(__file__).resolve().parents[2] / "resources" / "screenshots"
SIZE = (1560, 900)
PRESCORED = ["bleu", "chrf", "sari", "meteor", "bertscore", "sbert_cosine"]
BATTERY = ["bleu", "chrf", "ter", "sari", "rougel", "meteor", "fkgl", "bertscore", "sbert_cosine"]


def wait(app, seconds: float, until=None) -> None:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        app.processEvents()
        if until is not None and until():
            return
        time.sleep(0.01)
    if until is not None:
        raise TimeoutError("the window did not reach the state for the screenshot")


def grab(app, window, name: str) -> Path:  # noqa: ANN001
    """What the X server shows inside the window's frame (dialogs on top included)."""
    wait(app, 0.6)
    geo = window.frameGeometry()
    screen = app.primaryScreen()
    pixmap = screen.grabWindow(0, geo.x(), geo.y(), geo.width(), geo.height())
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / name
    pixmap.save(str(path), "PNG")
    print(f"wrote {path} ({path.stat().st_size // 1024} KB)")
    return path


def prescore(path: Path) -> None:
    from meaningbench.jobs.scoring import ScoreRequest, score_study
    from meaningbench.runtime import JobContext

    summaries = score_study(ScoreRequest(study_path=path, metrics=PRESCORED), JobContext())
    for s in summaries:
        print(f"  {s.label}: {s.status}, {s.scored} scored" + (f" ({s.error})" if s.error else ""))


def open_browser(study: Path, size: tuple[int, int], *, detail_width: int):  # noqa: ANN201
    """(app, window): the main window on `study`, light, at `size`, its browser filled."""
    from PySide6.QtCore import QPoint

    from meaningbench.ui.launch import create_application, start

    app = create_application()
    window = start([str(study)])
    window.resize(*size)
    window.move(QPoint(40, 30))
    window.set_theme("light")
    wait(app, 30, lambda: window.context.study is not None)
    page = window.page("browser")
    page.splitter.setSizes([size[0] - 150 - detail_width, detail_width])
    wait(app, 30, lambda: not page.model.loading and page.model.rowCount() > 0)
    return app, window


def main() -> int:
    home = Path(tempfile.mkdtemp(prefix="mb-shots-"))
    os.environ["MEANINGBENCH_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from meaningbench.datasets.demo import build_demo_study

    scored = build_demo_study(home / "demo.mbstudy")
    prescore(scored)
    fresh = build_demo_study(home / "battery" / "demo.mbstudy")

    app, window = open_browser(scored, SIZE, detail_width=330)
    page = window.page("browser")
    page.fit_columns()  # for the width the splitter now gives the table
    # An item several people rated, with every metric's score, in the detail pane.
    page.select_item(page.model.item_id(6) or 1)
    grab(app, window, "browser.png")

    window.set_theme("dark")
    page.detail.render()  # its colours come from the palette
    grab(app, window, "browser-dark.png")
    window.set_theme("light")
    page.detail.render()

    window.studies.open_path(fresh)
    page = window.page("browser")
    wait(app, 30, lambda: not page.model.loading and page.model.rowCount() > 0)
    dialog = window.show_battery_dialog()
    wait(app, 300, lambda: bool(dialog.metrics))
    dialog.set_checked(BATTERY)
    dialog.batch_spin.setValue(4)
    job = dialog.start()
    if job is None:
        print("the battery did not start", file=sys.stderr)
        return 1
    job.progress.connect(lambda p: print(f"  battery {p.done}/{p.total} {p.message}"))
    # Mid-way through BERTScore: the bar weighs items by their metric's cost, so the
    # lexical metrics before it are a few per cent of the work. Taken as the progress
    # arrives (rendered by Qt, not read back from the screen): the next metric is quick.
    shot = OUT_DIR / "battery.png"

    def take(p) -> None:  # noqa: ANN001
        if shot.exists() or p.work is None or not 0.2 <= p.work <= 0.5:
            return
        if "bertscore" in p.message and "items/s" in dialog.rate_label.text():
            dialog.grab().save(str(shot), "PNG")
            print(f"wrote {shot} ({shot.stat().st_size // 1024} KB)")

    shot.unlink(missing_ok=True)
    job.progress.connect(take)
    wait(app, 600, lambda: not job.running)
    if not shot.exists():
        print("the battery ran past BERTScore without a progress report to show")
        return 1
    # The finished run in the dark theme (check boxes and ticks on a dark list); looked
    # at, not in the docs: written to a temporary folder.
    window.set_theme("dark")
    wait(app, 0.6)
    geo = dialog.frameGeometry()
    dark = Path(tempfile.mkdtemp(prefix="mb-battery-")) / "battery-dark.png"
    app.primaryScreen().grabWindow(0, geo.x(), geo.y(), geo.width(), geo.height()).save(str(dark))
    print(f"wrote {dark}")
    window.set_theme("light")
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
