"""Line icons from resources/icons/, drawn in the theme's text colour.

The SVGs stroke with `currentColor`; it is replaced with the palette's text colour when the
icon is painted, not when it is made: an icon made before a switch of theme (or before the
theme was first applied) is drawn in the new theme's colour, never dark on dark. A disabled
control's icon takes the palette's disabled text colour.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QGuiApplication, QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from meaningbench.settings import resources_dir

APP_ICON = "meaningbench"


def icon_path(name: str) -> str:
    return str(resources_dir() / "icons" / f"{name}.svg")


def app_icon() -> QIcon:
    return QIcon(icon_path(APP_ICON))


def icon_color(mode: QIcon.Mode = QIcon.Mode.Normal) -> str:
    """The colour an icon is drawn in now: the theme's text, or its disabled text."""
    palette = QGuiApplication.palette()
    group = (
        QPalette.ColorGroup.Disabled if mode == QIcon.Mode.Disabled else QPalette.ColorGroup.Active
    )
    return palette.color(group, QPalette.ColorRole.WindowText).name()


@lru_cache(maxsize=64)
def _svg(name: str) -> str | None:
    try:
        with open(icon_path(name), encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return None


@lru_cache(maxsize=512)
def _pixmap(name: str, color: str, width: int, height: int) -> QPixmap:
    pixmap = QPixmap(max(1, width), max(1, height))
    pixmap.fill(Qt.GlobalColor.transparent)
    svg = _svg(name)
    if svg is not None:
        renderer = QSvgRenderer(QByteArray(svg.replace("currentColor", color).encode("utf-8")))
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, width, height))
        painter.end()
    return pixmap


class _ThemedEngine(QIconEngine):
    """Draws one of the line icons in the colour the palette has when it is painted."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return QPixmap(_pixmap(self.name, icon_color(mode), size.width(), size.height()))

    def scaledPixmap(  # noqa: N802 - Qt override
        self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float
    ) -> QPixmap:
        width, height = round(size.width() * scale), round(size.height() * scale)
        pixmap = QPixmap(_pixmap(self.name, icon_color(mode), width, height))
        pixmap.setDevicePixelRatio(scale)
        return pixmap

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        painter.drawPixmap(rect, self.scaledPixmap(rect.size(), mode, state, ratio))

    def clone(self) -> QIconEngine:
        return _ThemedEngine(self.name)

    def key(self) -> str:
        return "meaningbench-themed"


def themed_icon(name: str) -> QIcon:
    """The icon `name`, drawn in the theme's text colour whatever the theme when painted."""
    if _svg(name) is None:
        return QIcon()
    return QIcon(_ThemedEngine(name))
