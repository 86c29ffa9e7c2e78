"""`ui.svg_image.write_png`, which the command line calls without a window: the PNG is
written, and a process that goes on to show widgets (the app, a test run) still can."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="20" height="20" fill="red"/></svg>'


def test_a_png_written_first_leaves_room_for_widgets(tmp_path: Path) -> None:
    target = tmp_path / "chart.png"
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from meaningbench.ui.svg_image import write_png\n"
        f"write_png({SVG!r}, Path(sys.argv[1]))\n"
        "from PySide6.QtWidgets import QLabel\n"
        "label = QLabel('after the chart')\n"
        "print(label.text())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "after the chart"
    from PySide6.QtGui import QImage

    image = QImage(str(target))
    assert (image.width(), image.height()) == (80, 40)  # drawn at twice the SVG's size
    assert image.pixelColor(10, 10).red() == 255 and image.pixelColor(70, 10).red() == 255
    assert image.pixelColor(10, 10).green() == 0  # the rectangle; the rest is white
    assert image.pixelColor(70, 10).green() == 255
    assert not list(tmp_path.glob("*.part*"))
