"""Line icons from resources/icons/, drawn in the theme's text colour.

The SVGs stroke with `currentColor`; it is replaced with the palette's text colour before
rendering, so one set of files serves the light and the dark theme.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from meaningbench.settings import resources_dir

APP_ICON = "meaningbench"


def icon_path(name: str) -> str:
    return str(resources_dir() / "icons" / f"{name}.svg")


def app_icon() -> QIcon:
    return QIcon(icon_path(APP_ICON))


def themed_icon(name: str) -> QIcon:
    color = QGuiApplication.palette().color(QPalette.ColorRole.WindowText).name()
    return _render(name, color)


@lru_cache(maxsize=128)
def _render(name: str, color: str) -> QIcon:
    try:
        with open(icon_path(name), encoding="utf-8") as fh:
            svg = fh.read().replace("currentColor", color)
    except OSError:
        return QIcon()
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    icon = QIcon()
    for size in (16, 20, 24, 32, 48):
        for ratio in (1.0, 2.0):
            pixmap = QPixmap(int(size * ratio), int(size * ratio))
            pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(pixmap)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            renderer.render(painter, QRectF(0, 0, size * ratio, size * ratio))
            painter.end()
            pixmap.setDevicePixelRatio(ratio)
            icon.addPixmap(pixmap)
    return icon
