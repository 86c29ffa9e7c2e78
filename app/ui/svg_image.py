"""An SVG chart (the analysis's own, drawn by hand) written as a PNG, with Qt's renderer.

The command line reaches this lazily for `--out chart.png`; without a display it renders
offscreen. The PNG is written beside the target and renamed when complete.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from meaningbench.core.atomic_file import part_path

SCALE = 2.0  # pixels per SVG unit: sharp on high-density screens and in documents


# The command line's own application, kept alive. A QApplication, not the lighter
# QGuiApplication: a process that later shows a window (the app, a test run) cannot make a
# widget under a QGuiApplication; Qt aborts.
_APP: list[QApplication] = []


def write_png(svg: str, target: Path) -> None:
    if QApplication.instance() is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        _APP.append(QApplication([]))
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    size = renderer.defaultSize()
    width, height = int(size.width() * SCALE), int(size.height() * SCALE)
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, image.width(), image.height()))
    painter.end()
    part = part_path(target)
    # PySide6 takes the format as text; its stubs say bytes, which it refuses at run time.
    if not image.save(str(part), "PNG"):  # type: ignore[call-overload]
        part.unlink(missing_ok=True)
        raise OSError(f"could not write {target}")
    os.replace(part, target)
