"""Metric × metric correlations as a heatmap with the value written in each cell.

Column names are written on a slant under the map: upright they would overlap for
anything beyond a handful of metrics, and pyqtgraph's axis would then drop them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QApplication, QToolTip, QWidget

from meaningbench.ui.dashboard.plots import (
    PlotColors,
    fill_with_plot,
    fit_left_axis,
    make_plot,
    style_plot,
)

MAX_CELL_TEXT = 30  # more metrics than this: colours only, values in the tooltip
SLANT = 45.0


def diverging_map(dark: bool) -> pg.ColorMap:
    middle = "#3a3f47" if dark else "#f7f7f7"
    colors = [QColor("#2f5f9e"), QColor(middle), QColor("#b2302b")]
    return pg.ColorMap(pos=np.array([0.0, 0.5, 1.0]), color=colors)


class SlantedAxis(pg.AxisItem):
    """A bottom axis that writes its tick names at 45°, running down to the left."""

    def __init__(self) -> None:
        super().__init__("bottom")
        self.names: list[str] = []
        self.extent = 0.0

    def set_names(self, names: list[str]) -> None:
        self.names = list(names)
        self.setTicks([[(k, n) for k, n in enumerate(self.names)], []])
        fm = QFontMetricsF(self._font())
        longest = max((fm.horizontalAdvance(n) for n in self.names), default=0.0)
        self.extent = longest * math.sin(math.radians(SLANT)) + fm.height()
        self.setHeight(int(self.extent + 14))

    def _font(self) -> QFont:
        return self.style["tickFont"] or QFont(QApplication.font())

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        # The names reach left of the axis, into the empty corner under the left axis.
        rect: QRectF = super().boundingRect()
        return rect.adjusted(-self.extent, 0, 0, 0)

    # The specs as pyqtgraph's generateDrawSpecs makes them: (pen, start, end) per line and
    # (rect, flags, text) per label.
    def drawPicture(  # noqa: N802 - pyqtgraph's name
        self,
        p: QPainter,
        axisSpec: tuple[QPen, QPointF, QPointF],  # noqa: N803
        tickSpecs: list[tuple[QPen, QPointF, QPointF]],  # noqa: N803
        textSpecs: list[tuple[QRectF, int, str]],  # noqa: N803
    ) -> None:
        super().drawPicture(p, axisSpec, tickSpecs, [])
        view = self.linkedView()
        if view is None or not self.names:
            return
        p.setClipping(False)
        p.setFont(self._font())
        p.setPen(self.textPen())
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        fm = QFontMetricsF(self._font())
        for _pen, p1, _p2 in tickSpecs:
            value = view.mapSceneToView(self.mapToScene(QPointF(p1.x(), 0))).x()
            k = int(round(value))
            if not 0 <= k < len(self.names):
                continue
            text = self.names[k]
            p.save()
            p.translate(p1.x(), p1.y() + 6)
            p.rotate(-SLANT)
            p.drawText(QPointF(-fm.horizontalAdvance(text), fm.ascent() / 2), text)
            p.restore()


class CorrelationHeatmap(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.axis = SlantedAxis()
        self.plot = make_plot()
        self.plot.getPlotItem().setAxisItems({"bottom": self.axis})
        self.item = self.plot.getPlotItem()
        self.item.invertY(True)
        self.item.setContentsMargins(4, 10, 8, 4)  # the colour bar's end labels stay whole
        self.image = pg.ImageItem(axisOrder="row-major")
        self.item.addItem(self.image)
        self.colorbar = pg.ColorBarItem(
            values=(-1.0, 1.0), colorMap=diverging_map(False), interactive=False, width=14
        )
        self.colorbar.setImageItem(self.image, insert_in=self.item)
        self.cells: list[pg.TextItem] = []
        self.frame: pd.DataFrame | None = None
        self.method = "pearson"
        self.colors = PlotColors.from_palette()
        fill_with_plot(self, self.plot)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.apply_colors(self.colors)

    def apply_colors(self, colors: PlotColors) -> None:
        self.colors = colors
        style_plot(self.plot, colors)
        self.colorbar.setColorMap(diverging_map(colors.dark))
        self.colorbar.axis.setTextPen(pg.mkPen(colors.text))
        self.colorbar.axis.setPen(pg.mkPen(colors.grid))
        if self.frame is not None:
            self.set_frame(self.frame, self.method)

    def set_frame(self, frame: pd.DataFrame, method: str = "pearson") -> None:
        self.frame, self.method = frame, method
        names = [str(c) for c in frame.columns]
        m = len(names)
        values = frame.to_numpy(dtype=float)
        self.image.setImage(np.nan_to_num(values, nan=0.0), levels=(-1.0, 1.0))
        self.colorbar.setColorMap(diverging_map(self.colors.dark))
        self.colorbar.setLevels((-1.0, 1.0))
        self.image.setRect(QRectF(-0.5, -0.5, m, m))
        self.item.getAxis("left").setTicks([[(k, n) for k, n in enumerate(names)], []])
        fit_left_axis(self.plot, names)
        self.axis.set_names(names)
        self._write_cells(values)
        self.item.setXRange(-0.5, m - 0.5, padding=0.01)
        self.item.setYRange(-0.5, m - 0.5, padding=0.01)

    def _write_cells(self, values: np.ndarray) -> None:
        m = values.shape[0]
        show = 0 < m <= MAX_CELL_TEXT
        need = m * m if show else 0
        while len(self.cells) < need:
            cell = pg.TextItem(anchor=(0.5, 0.5))
            self.item.addItem(cell)
            self.cells.append(cell)
        font = QFont(QApplication.font())
        if m > 12:
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
        for k, cell in enumerate(self.cells):
            if k >= need:
                cell.hide()
                continue
            i, j = divmod(k, m)
            v = values[i, j]
            strong = np.isfinite(v) and abs(v) > 0.55
            light = self.colors.dark or strong
            cell.setColor(QColor("#ffffff") if light else QColor("#1d2127"))
            cell.setFont(font)
            cell.setText("–" if not np.isfinite(v) else f"{v:.2f}")
            cell.setPos(j, i)
            cell.show()

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        if self.frame is None or not self.item.getViewBox().sceneBoundingRect().contains(scene_pos):
            return None
        point = self.item.getViewBox().mapSceneToView(scene_pos)
        i, j = int(round(point.y())), int(round(point.x()))
        m = len(self.frame.columns)
        return (i, j) if 0 <= i < m and 0 <= j < m else None

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        cell = self.cell_at(scene_pos)
        if cell is None or self.frame is None:
            self.plot.setToolTip("")
            QToolTip.hideText()
            return
        i, j = cell
        v = float(self.frame.iat[i, j])
        symbol = "ρ" if self.method == "spearman" else "r"
        text = f"{self.frame.index[i]} × {self.frame.columns[j]}: {symbol} = " + (
            f"{v:.3f}" if np.isfinite(v) else "–"
        )
        self.plot.setToolTip(text)


def heat_frame_for(frame: pd.DataFrame, order: list[str] | None) -> pd.DataFrame:
    """The matrix in the bar chart's order, so the two views list metrics alike."""
    if not order:
        return frame
    keep = [k for k in order if k in frame.columns]
    rest = [k for k in frame.columns if k not in keep]
    names = keep + rest
    return frame.loc[names, names]
