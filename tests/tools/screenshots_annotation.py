"""Real-window screenshots of the rating screen, light and dark, for the README.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_annotation
Writes resources/screenshots/annotation-light.png and annotation-dark.png, and
rate-long-text.png (tests.tools.screenshots_long_text).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QMainWindow

from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.models import Dataset
from meaningbench.db.study import Study, create_study
from tests.annotation.factories import regular_item

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from meaningbench.ui.annotation.screen import AnnotationScreen

OUT_DIR = Path(__file__).resolve().parents[2] / "resources" / "screenshots"

# Sentences written for these pictures (no dataset text is copied into the project).
PAIRS = [
    (
        "The committee, which had been meeting since early morning, finally approved the "
        "proposal to extend the library's opening hours on weekends and public holidays.",
        "The committee approved the plan to keep the library open longer on weekends.",
    ),
    (
        "Although the bridge had been closed for repairs for nearly two years, local "
        "businesses reported only a small drop in the number of visitors.",
        "The bridge was closed for two years. Local shops lost only a few visitors.",
    ),
    (
        "Researchers found that the new vaccine, tested on more than three thousand "
        "volunteers, reduced severe illness by almost ninety percent.",
        "A new vaccine cut severe illness by about ninety percent in a large test.",
    ),
    (
        "The museum, founded in 1872 by a group of wealthy merchants, houses one of the "
        "largest collections of maritime paintings in northern Europe.",
        "The museum has many paintings of ships.",
    ),
]


def dark_palette() -> QPalette:
    pal = QPalette()
    window, base, text = QColor("#1f2226"), QColor("#272b30"), QColor("#e6e8eb")
    pal.setColor(QPalette.ColorRole.Window, window)
    pal.setColor(QPalette.ColorRole.WindowText, text)
    pal.setColor(QPalette.ColorRole.Base, base)
    pal.setColor(QPalette.ColorRole.AlternateBase, QColor("#2d3238"))
    pal.setColor(QPalette.ColorRole.Text, text)
    pal.setColor(QPalette.ColorRole.Button, QColor("#2d3238"))
    pal.setColor(QPalette.ColorRole.ButtonText, text)
    pal.setColor(QPalette.ColorRole.Highlight, QColor("#5b9bd5"))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#0e1114"))
    pal.setColor(QPalette.ColorRole.ToolTipBase, base)
    pal.setColor(QPalette.ColorRole.ToolTipText, text)
    pal.setColor(QPalette.ColorRole.PlaceholderText, QColor("#8a9099"))
    pal.setColor(QPalette.ColorRole.Mid, QColor("#3a4047"))
    pal.setColor(QPalette.ColorRole.Shadow, QColor("#000000"))
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6b717a"))
    return pal


def light_palette() -> QPalette:
    pal = QApplication.style().standardPalette()
    pal.setColor(QPalette.ColorRole.Window, QColor("#f3f4f6"))
    pal.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.Highlight, QColor("#2f6fb3"))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    return pal


def add_pairs(
    s: Session, dataset: str, pairs: list[tuple[str, str]], systems: list[str] | None = None
) -> None:
    """A dataset of (source, output) pairs, each of its system in `systems` ("demo" when
    none are given)."""
    ds = Dataset(name=dataset)
    s.add(ds)
    s.flush()
    for k, (source, output) in enumerate(pairs):
        system = systems[k] if systems is not None else "demo"
        s.add(regular_item(ds.id, source, output, system))


def rating_window(study: Study) -> tuple[QMainWindow, AnnotationScreen]:
    """The rating screen of rater "alice" in a shown window of the pictures' size."""
    from meaningbench.ui.annotation.screen import AnnotationScreen

    window = QMainWindow()
    window.setWindowTitle("MeaningBench — rating")
    screen = AnnotationScreen(study, "alice")
    window.setCentralWidget(screen)
    window.resize(1400, 860)
    window.show()
    return window, screen


def screenshot_app() -> QApplication:
    """The application as the pictures show it: a real display where there is one, Fusion."""
    os.environ.pop("QT_QPA_PLATFORM", None) if os.environ.get("DISPLAY") else None
    app = cast(QApplication, QApplication.instance() or QApplication(sys.argv))
    QApplication.setStyle("Fusion")
    app.setAttribute(Qt.ApplicationAttribute.AA_DontShowIconsInMenus, True)
    return app


def make_study(folder: Path, *, highlight: bool) -> Study:
    study = create_study(folder / f"screens-{int(highlight)}.mbstudy")
    with study.session() as s:
        add_pairs(s, "examples", PAIRS)
        cfg = load_settings(s)
        cfg.seed = 7
        cfg.qc_enabled = False
        cfg.diff_highlighting = highlight
        for d in cfg.dimensions:
            if d.name == "fluency":
                d.active, d.scale = True, "likert"
        save_settings(s, cfg)
    return study


def shoot(
    app: QApplication, palette: QPalette, name: str, folder: Path, *, highlight: bool
) -> Path:
    app.setPalette(palette)
    study = make_study(folder, highlight=highlight)
    window, screen = rating_window(study)
    # One rating done, the next item half rated: the picture shows a set and an unset scale.
    screen.rows[0].scale.set_value(80)
    screen.rows[1].scale.set_value(5)
    screen.submit_current()
    screen.rows[0].scale.set_value(72)
    if highlight:
        screen.toggle_guidelines()
    for _ in range(20):
        app.processEvents()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"annotation-{name}.png"
    pixmap = window.grab()
    pixmap.save(str(path), "PNG", 9)
    window.close()
    study.close()
    return path


def main() -> int:
    app = screenshot_app()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, palette, highlight in (
            ("light", light_palette(), False),
            ("dark", dark_palette(), True),
        ):
            path = shoot(app, palette, name, folder, highlight=highlight)
            print(f"{path} ({path.stat().st_size // 1024} KB)")
    from tests.tools.screenshots_long_text import shoot_long

    path = shoot_long(app)
    print(f"{path} ({path.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
