"""A real-window screenshot of the ESA screen pre-filled with a judge's error spans (one
proposal kept, two still proposed), to look at after a change.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_prefill [FOLDER]
Writes FOLDER/protocol-esa-prefill.png (default: resources/screenshots).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication, QMainWindow

from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.models import Item
from meaningbench.db.study import Study, create_study
from tests.annotation.judge_spans import store_judge_answers
from tests.tools.screenshots_annotation import add_pairs, light_palette, screenshot_app
from tests.tools.screenshots_protocols import SOURCE
from tests.tools.shot_output import OUT

OUTPUT = "The committee rejected the plan to open the library on holidays."
# The answer a judge gives with the esa template: its error spans as JSON, then a score.
ANSWER = (
    '[{"text": "rejected", "severity": "major"}, {"text": "on holidays", "severity": "minor"}, '
    '{"text": "the plan", "severity": "minor"}]\nScore: 35'
)


def make_study(folder: Path) -> Study:
    study = create_study(folder / "prefill.mbstudy")
    with study.session() as s:
        add_pairs(s, "examples", [(SOURCE, OUTPUT)], ["system-1"])
        cfg = load_settings(s)
        cfg.seed, cfg.qc_enabled = 7, False
        save_settings(s, cfg)
        item_id = s.query(Item.id).scalar()
    label = store_judge_answers(study, {item_id: ANSWER})
    set_protocol(study, "esa", prefill=label)
    return study


def shoot(app: QApplication, folder: Path, out: Path) -> Path:
    from meaningbench.ui.annotation.screen import AnnotationScreen

    study = make_study(folder)
    window = QMainWindow()
    window.setWindowTitle("MeaningBench — esa, pre-filled")
    screen = AnnotationScreen(study, "alice")
    editor = screen.span_editors[0]
    editor.next_proposal()  # the cursor on "the plan", then kept: A
    editor.accept_at_cursor()
    window.setCentralWidget(screen)
    window.resize(1400, 860)
    window.show()
    for _ in range(20):
        app.processEvents()
    window.activateWindow()
    editor.setFocus()
    for _ in range(10):
        app.processEvents()
    path = out / "protocol-esa-prefill.png"
    window.grab().save(str(path), "PNG", 9)
    window.close()
    study.close()
    return path


def main() -> int:
    app = screenshot_app()
    app.setPalette(light_palette())
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        print(shoot(app, Path(tmp), out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
