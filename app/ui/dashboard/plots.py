"""pyqtgraph set-up shared by the dashboard's plots: colours from the palette, export.

Plots take their colours from the application palette, so they follow the light and dark
themes. Exports go through pyqtgraph's own exporters; the SVG exporter of pyqtgraph 0.14
cannot parse the closed paths ("... Z") that Qt 6.10+ writes (pyqtgraph issue #3495), so
each closing command is given a dummy coordinate while the exporter rewrites the paths
and is restored afterwards.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPalette
from PySide6.QtWidgets import QApplication, QGraphicsItem, QVBoxLayout, QWidget

PNG_WIDTH = 1600  # pixels of an exported PNG: sharp in a paper or on a slide


@dataclass(frozen=True)
class PlotColors:
    background: QColor
    text: QColor
    muted: QColor
    grid: QColor
    bar: QColor
    negative: QColor
    accent: QColor
    point: QColor
    dark: bool

    @classmethod
    def from_palette(cls, palette: QPalette | None = None) -> PlotColors:
        pal = palette or QApplication.palette()
        role = QPalette.ColorRole
        base = pal.color(role.Base)
        dark = base.lightness() < 128
        return cls(
            background=base,
            text=pal.color(role.Text),
            muted=pal.color(role.PlaceholderText),
            grid=pal.color(role.Mid),
            bar=QColor("#5b8fd6" if dark else "#4477aa"),
            negative=QColor("#e08597" if dark else "#cc6677"),
            # Also the colour of text (the human-ceiling label): 4.5:1 on the base at least.
            accent=QColor("#e0a33a" if dark else "#9e5d00"),
            point=QColor(91, 143, 214, 150) if dark else QColor(68, 119, 170, 130),
            dark=dark,
        )


def make_plot(*, mouse: bool = False) -> pg.PlotWidget:
    """A PlotWidget without pyqtgraph's own menu and buttons (the panel has its own)."""
    widget = pg.PlotWidget()
    item = widget.getPlotItem()
    item.setMenuEnabled(False)
    item.hideButtons()
    for name in ("left", "bottom"):
        item.getAxis(name).setZValue(-1)  # grid lines behind the data, not over the bars
    cache_axes(widget, True)
    item.getViewBox().setMouseEnabled(x=mouse, y=mouse)
    widget.setAntialiasing(True)
    widget.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    widget.setMinimumSize(260, 200)
    return widget


def metric_rows_plot() -> tuple[pg.PlotWidget, pg.PlotItem]:
    """A plot of horizontal bars, one row per metric from the top down, with vertical grid
    lines only; returns the widget and its plot item."""
    widget = make_plot()
    item = widget.getPlotItem()
    item.invertY(True)
    item.showGrid(x=True, y=False, alpha=0.25)
    return widget, item


def fill_with_plot(owner: QWidget, widget: pg.PlotWidget) -> None:
    """`widget` fills `owner` edge to edge."""
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(widget)


def style_plot(widget: pg.PlotWidget, colors: PlotColors) -> None:
    widget.setBackground(colors.background)
    item = widget.getPlotItem()
    font = QFont(QApplication.font())
    for name in ("left", "bottom", "top", "right"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(colors.grid))
        axis.setTextPen(pg.mkPen(colors.text))
        axis.setTickFont(font)
        axis.label.setDefaultTextColor(colors.text)
    item.titleLabel.item.setDefaultTextColor(colors.text)


def axis_label(widget: pg.PlotWidget, side: str, text: str, colors: PlotColors) -> None:
    size = f"{QApplication.font().pointSizeF():.1f}pt"
    widget.getPlotItem().setLabel(side, text, color=colors.text.name(), size=size)


def fit_left_axis(widget: pg.PlotWidget, names: list[str]) -> None:
    """Room for the longest name, with a margin: exports scale the text, and hinting makes
    scaled text a little wider than the axis pyqtgraph sized for the screen."""
    axis = widget.getPlotItem().getAxis("left")
    font = axis.style.get("tickFont") or QApplication.font()
    longest = max((QFontMetricsF(font).horizontalAdvance(n) for n in names), default=20.0)
    axis.setWidth(int(longest * 1.08) + 16)


def cache_axes(widget: pg.PlotWidget, on: bool) -> None:
    """Axes redraw their tick text on every repaint of the plot (about 14 ms a refresh for
    the dashboard's plots); cached as pixmaps they are redrawn only when they change.
    Exports turn the cache off so that they draw text, not scaled pixmaps."""
    mode = QGraphicsItem.CacheMode.DeviceCoordinateCache if on else QGraphicsItem.CacheMode.NoCache
    for axis in widget.getPlotItem().axes.values():
        axis["item"].setCacheMode(mode)


# -- export ------------------------------------------------------------------------------

_CLOSE = re.compile(r"(?<![\w.])([Zz])(?=\s|$)")
_MARKED = re.compile(r"([Zz])-?[\d.]+(?:e[-+]?\d+)?,-?[\d.]+(?:e[-+]?\d+)?")


@contextmanager
def _closed_paths_tolerated() -> Iterator[None]:
    module = sys.modules.get("pyqtgraph.exporters.SVGExporter")
    original = getattr(module, "correctCoordinates", None)
    if original is None:  # a pyqtgraph that moved it: nothing to work around
        yield
        return

    def correct(node: Any, defs: Any, item: Any, options: Any) -> Any:
        paths = node.getElementsByTagName("path")
        for path in paths:
            d = path.getAttribute("d")
            if _CLOSE.search(d):
                path.setAttribute("d", _CLOSE.sub(r"\g<1>0,0", d))
        result = original(node, defs, item, options)
        for path in paths:
            d = path.getAttribute("d")
            if _MARKED.search(d):
                path.setAttribute("d", _MARKED.sub(r"\1", d))
        return result

    module.correctCoordinates = correct  # type: ignore[union-attr]
    try:
        yield
    finally:
        module.correctCoordinates = original  # type: ignore[union-attr]


def export_plot(widget: pg.PlotWidget, path: str | Path) -> Path:
    """Write the plot as PNG or SVG (by the file's suffix)."""
    path = Path(path)
    suffix = path.suffix.lower()
    item = widget.getPlotItem()
    cache_axes(widget, False)
    try:
        _export(item, path, suffix)
    finally:
        cache_axes(widget, True)
    return path


def _export(item: pg.PlotItem, path: Path, suffix: str) -> None:
    import pyqtgraph.exporters as exporters

    if suffix == ".svg":
        with _closed_paths_tolerated():
            exporters.SVGExporter(item).export(str(path))
    elif suffix == ".png":
        exporter = exporters.ImageExporter(item)
        params = exporter.parameters()
        width = max(int(item.sceneBoundingRect().width()), 1)
        params["width"] = max(PNG_WIDTH, width)
        params["antialias"] = True
        exporter.export(str(path))
    else:
        raise ValueError(f"cannot export a plot as {suffix or 'a file without suffix'}")
