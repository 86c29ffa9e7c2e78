"""Real-window screenshots of the esa, sxs and likert screens, to look at after a change.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_protocols [FOLDER]
Writes FOLDER/protocol-esa.png, protocol-sxs.png and protocol-likert.png (default: a
temporary folder, printed).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.study import Study, create_study
from tests.tools.screenshots_annotation import add_pairs, light_palette, screenshot_app

SOURCE = (
    "The committee, which had been meeting since early morning, finally approved the "
    "proposal to extend the library's opening hours on weekends and public holidays."
)
OUTPUTS = [
    "The committee approved the plan to keep the library open longer on weekends.",
    "The committee rejected the plan to open the library on holidays.",
    "The library will now be open on weekends and holidays, the committee decided.",
]
# Side by side: outputs of very different lengths, whose sliders must still stand level.
SXS_OUTPUTS = [
    OUTPUTS[0],
    "The library opens longer.",
    "After a meeting that had gone on since early morning, the committee finally agreed: "
    "the library will stay open for more hours on weekends, and on public holidays as "
    "well, which it did not do before.",
]


def make_study(folder: Path, protocol: str) -> Study:
    study = create_study(folder / f"{protocol}.mbstudy")
    with study.session() as s:
        outputs = SXS_OUTPUTS if protocol == "sxs" else OUTPUTS
        systems = [f"system-{k}" for k in range(len(outputs))]
        add_pairs(s, "examples", [(SOURCE, o) for o in outputs], systems)
        cfg = load_settings(s)
        cfg.seed, cfg.qc_enabled = 7, False
        save_settings(s, cfg)
    set_protocol(study, protocol, source_spans=protocol == "esa" or None)
    return study


def shoot(app: QApplication, folder: Path, protocol: str) -> Path:
    from meaningbench.ui.annotation.screen import AnnotationScreen
    from meaningbench.ui.annotation.side_by_side import SideBySideScreen

    study = make_study(folder, protocol)
    window = QMainWindow()
    window.setWindowTitle(f"MeaningBench — {protocol}")
    screen: QWidget
    if protocol == "sxs":
        sxs = SideBySideScreen(study, "alice")
        sxs.columns[0].row.scale.set_value(64)
        screen = sxs
    else:
        one = AnnotationScreen(study, "alice")
        if protocol == "esa":
            editor = one.span_editors[0]
            editor.move(4)
            editor.move(2, extend=True)
            editor.mark("major")
            editor.move(-3)
            editor.mark("minor")
            editor.move(5)
            editor.move(1, extend=True)
            one.rows[0].scale.set_value(45)
        else:
            one.rows[0].scale.set_value(4)
        screen = one
    window.setCentralWidget(screen)
    window.resize(1400, 860)
    window.show()
    for _ in range(20):
        app.processEvents()
    if protocol == "esa":
        window.activateWindow()
        one.span_editors[0].setFocus()  # the word cursor shows while the text has focus
        for _ in range(10):
            app.processEvents()
    path = folder / f"protocol-{protocol}.png"
    window.grab().save(str(path), "PNG", 9)
    window.close()
    study.close()
    return path


def main() -> int:
    app = screenshot_app()
    app.setPalette(light_palette())
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for protocol in ("esa", "sxs", "likert"):
            path = shoot(app, Path(tmp), protocol)
            path = path.rename(out / path.name)
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
