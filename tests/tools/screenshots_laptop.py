"""Every page on laptop screens (1366×768, 1280×720, 1024×640), light and dark, 15 runs.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_laptop [OUT_DIR]
Writes <page>-<width>-<theme>.png for the browser, the rating screen, the dashboard (each
tab) and compare into OUT_DIR (default: a temporary folder), then the few the docs show
into resources/screenshots/laptop-*.png, reduced to 128 colours when Pillow is installed.
Uses the demo study scored with the lexical metrics.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.tools.screenshots import wait

LEXICAL = [
    "bleu", "chrf", "compression", "edit_similarity", "fkbleu", "fkgl", "ibleu", "meteor",
    "rouge1", "rouge2", "rougel", "sari", "ter",
]  # fmt: skip
AGAINST_REFERENCES = ["bleu", "chrf"]
SIZES = [(1366, 768), (1280, 720), (1024, 640)]
DOCS_DIR = Path(__file__).resolve().parents[2] / "resources" / "screenshots"
# Shot -> the name the docs (resources/docs/app.md) use.
DOCS = {
    "dashboard0-1024-light.png": "laptop-dashboard-1024.png",
    "dashboard2-1024-dark.png": "laptop-sanity-1024-dark.png",
    "annotate-1024-dark.png": "laptop-rating-1024-dark.png",
    "compare-1024-light.png": "laptop-compare-1024.png",
    "browser-1280-dark.png": "laptop-browser-1280-dark.png",
}


def copy_for_docs(out: Path, docs: dict[str, str] | None = None) -> None:
    """The docs' shots (`docs`: shot -> name, DOCS unless given), small: a 128-colour
    palette keeps them near 30 KB."""
    import shutil

    for shot, name in (DOCS if docs is None else docs).items():
        dest = DOCS_DIR / name
        try:
            from PIL import Image
        except ImportError:
            shutil.copyfile(out / shot, dest)
            continue
        image = Image.open(out / shot).convert("RGB")
        image.quantize(colors=128, dither=Image.Dither.NONE).save(dest, optimize=True)
        print(f"wrote {dest} ({dest.stat().st_size // 1024} KB)")


def prescore(path: Path) -> None:
    from meaningbench.jobs.scoring import ScoreRequest, score_study
    from meaningbench.runtime import JobContext

    score_study(ScoreRequest(study_path=path, metrics=LEXICAL), JobContext())
    options = {"reference_mode": "references"}
    score_study(ScoreRequest(path, AGAINST_REFERENCES, options), JobContext())


def grab(app, window, out: Path, name: str) -> None:  # noqa: ANN001
    wait(app, 0.5)
    geo = window.frameGeometry()
    pixmap = app.primaryScreen().grabWindow(0, geo.x(), geo.y(), geo.width(), geo.height())
    path = out / name
    pixmap.save(str(path), "PNG")
    hint = window.minimumSizeHint()
    print(
        f"wrote {path}: window {geo.width()}x{geo.height()}, minimum {hint.width()}x{hint.height()}"
    )


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mb-laptop-"))
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="mb-shots-"))
    os.environ["MEANINGBENCH_HOME"] = str(home)
    from meaningbench.datasets.demo import build_demo_study

    study = build_demo_study(home / "demo.mbstudy")
    prescore(study)

    from PySide6.QtCore import QPoint

    from meaningbench.ui.launch import create_application, start

    app = create_application()
    window = start([str(study)])
    window.move(QPoint(20, 20))
    wait(app, 30, lambda: window.context.study is not None)
    browser = window.page("browser")
    wait(app, 30, lambda: not browser.model.loading and browser.model.rowCount() > 0)
    window.show_page("dashboard")
    dashboard = window.page("dashboard")
    c = dashboard.controller
    wait(app, 120, lambda: c.analysis is not None and c.qc is not None and not c.busy)
    sanity = dashboard.sanity
    sanity.run()  # the sanity chart with every lexical metric
    wait(app, 300, lambda: sanity.handle is None and sanity.shown is not None)
    window.show_page("compare")
    window.show_page("annotate")
    window.page("annotate").start("reviewer")
    for theme in ("light", "dark"):
        window.set_theme(theme)
        for width, height in SIZES:
            window.resize(width, height)
            wait(app, 0.3)
            for key in ("browser", "annotate", "compare"):
                window.show_page(key)
                grab(app, window, out, f"{key}-{width}-{theme}.png")
            window.show_page("dashboard")
            for i in range(dashboard.tabs.count()):
                dashboard.tabs.setCurrentIndex(i)
                grab(app, window, out, f"dashboard{i}-{width}-{theme}.png")
            dashboard.tabs.setCurrentIndex(0)
    window.set_theme("light")
    window.close()
    copy_for_docs(out)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
