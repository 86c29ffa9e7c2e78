"""One metric against the human scores: points, least-squares line, hover and click.

The points are a small custom item rather than pyqtgraph's ScatterPlotItem, whose
`setData` builds a symbol key per point (about 25 ms for 10,000 points): a live refresh
after one rating must stay within 50 ms, so here new data is two array assignments, the
repaint stamps one pre-drawn disc per point, and the nearest point to the cursor is one
vectorised distance in pixels.
"""

from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd
import pyqtgraph as pg
import pyqtgraph.functions as fn
from pyqtgraph.Qt import internals
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QCursor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QToolTip, QWidget

from meaningbench.queries.dashboard_stats import least_squares
from meaningbench.ui.dashboard.plots import (
    PlotColors,
    axis_label,
    fill_with_plot,
    make_plot,
    style_plot,
)

RADIUS = 3.5  # point radius in pixels
PICK_PX = 7.0  # how near (pixels) the cursor must be to a point to hover or click it
TEXT_CHARS = 280


class PointCloud(pg.GraphicsObject):
    """Round points of one colour, drawn in device pixels; hover and click by item id."""

    sigHovered = Signal(object)  # index into the points, or None
    sigClicked = Signal(int)  # item id

    def __init__(self) -> None:
        super().__init__()
        self.x = np.zeros(0)
        self.y = np.zeros(0)
        self.ids = np.zeros(0, dtype=np.int64)
        self.color = QColor(68, 119, 170, 130)
        self.ring = QColor("black")
        self.hovered: int | None = None
        self._bounds: tuple[float, float, float, float] | None = None
        self._fragments = internals.PrimitiveArray(QPainter.PixmapFragment, 10)
        self._sprite_pixmap = QPixmap()
        self._sprite_key: tuple[int, float] | None = None
        self.setAcceptHoverEvents(True)

    def set_points(self, x: np.ndarray, y: np.ndarray, ids: np.ndarray) -> None:
        keep = np.isfinite(x) & np.isfinite(y)
        self.prepareGeometryChange()
        self.x = np.asarray(x, dtype=float)[keep]
        self.y = np.asarray(y, dtype=float)[keep]
        self.ids = np.asarray(ids, dtype=np.int64)[keep]
        self.hovered = None
        if self.x.size:
            self._bounds = (self.x.min(), self.x.max(), self.y.min(), self.y.max())
        else:
            self._bounds = None
        self.informViewBoundsChanged()
        self.update()

    def set_colors(self, point: QColor, ring: QColor) -> None:
        self.color, self.ring = QColor(point), QColor(ring)
        self.update()

    # -- geometry (what ViewBox auto-range asks) -----------------------------------------
    def dataBounds(  # noqa: N802 - pyqtgraph's name
        self,
        ax: int,
        frac: float = 1.0,
        orthoRange: object = None,  # noqa: N803
    ) -> tuple[float | None, float | None]:
        if self._bounds is None:
            return (None, None)
        return (self._bounds[0], self._bounds[1]) if ax == 0 else (self._bounds[2], self._bounds[3])

    def pixelPadding(self) -> float:  # noqa: N802 - pyqtgraph's name
        return RADIUS + 3.0

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        if self._bounds is None:
            return QRectF()
        x0, x1, y0, y1 = self._bounds
        pw, ph = self.pixelWidth(), self.pixelHeight()
        px, py = (pw or 0.0) * (RADIUS + 4), (ph or 0.0) * (RADIUS + 4)
        return QRectF(x0 - px, y0 - py, (x1 - x0) + 2 * px, (y1 - y0) + 2 * py)

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph's name
        self.prepareGeometryChange()

    # -- drawing ------------------------------------------------------------------------
    def _device(self, transform: object) -> tuple[np.ndarray, np.ndarray]:
        t = transform
        dx = t.m11() * self.x + t.m21() * self.y + t.dx()  # type: ignore[attr-defined]
        dy = t.m12() * self.x + t.m22() * self.y + t.dy()  # type: ignore[attr-defined]
        return dx, dy

    def paint(self, p: QPainter, *_args: object) -> None:
        if self.x.size == 0:
            return
        export = getattr(self, "_exportOpts", False)
        dx, dy = self._device(p.transform())
        p.resetTransform()
        dx = np.clip(dx, -(2**30), 2**30)
        dy = np.clip(dy, -(2**30), 2**30)
        if export:
            scale = export.get("resolutionScale", 1.0) if isinstance(export, dict) else 1.0
            self._paint_vector(p, dx, dy, scale)
        else:
            self._paint_sprites(p, dx, dy)
        k = self.hovered
        if k is not None and k < dx.size and not export:
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            p.setPen(QPen(self.ring, 1.6))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawEllipse(QPointF(dx[k], dy[k]), RADIUS + 3, RADIUS + 3)

    def _paint_vector(self, p: QPainter, dx: np.ndarray, dy: np.ndarray, scale: float) -> None:
        """Exports: real vector points (an SVG of sprites would embed one image each)."""
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        pen = QPen(self.color, 2 * RADIUS * scale)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        poly = fn.create_qpolygonf(dx.size)
        arr = fn.ndarray_from_qpolygonf(poly)
        arr[:, 0], arr[:, 1] = dx, dy
        p.drawPoints(poly)

    def _paint_sprites(self, p: QPainter, dx: np.ndarray, dy: np.ndarray) -> None:
        """The screen: one pre-drawn disc stamped at every point, a millisecond for 10,000
        (antialiased wide-pen points take twenty)."""
        device = p.device()
        dpr = float(device.devicePixelRatioF()) if device is not None else 1.0
        sprite = self._sprite(dpr)
        size = sprite.width()
        self._fragments.resize(dx.size)
        frags = self._fragments.ndarray()
        frags[:, 0], frags[:, 1] = dx, dy
        frags[:, 2:6] = (0, 0, size, size)
        frags[:, 6:10] = (1 / dpr, 1 / dpr, 0.0, 1.0)
        p.drawPixmapFragments(*self._fragments.drawargs(), sprite)  # type: ignore[call-arg]

    def _sprite(self, dpr: float) -> QPixmap:
        key = (self.color.rgba(), dpr)
        if self._sprite_key != key:
            side = int(np.ceil((2 * RADIUS + 2) * dpr))
            pixmap = QPixmap(side, side)
            pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(pixmap)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self.color)
            painter.drawEllipse(QPointF(side / 2, side / 2), RADIUS * dpr, RADIUS * dpr)
            painter.end()
            pixmap.setDevicePixelRatio(1.0)
            self._sprite_pixmap, self._sprite_key = pixmap, key
        return self._sprite_pixmap

    # -- picking ------------------------------------------------------------------------
    def nearest(self, pos: QPointF) -> int | None:
        """Index of the point within PICK_PX pixels of `pos` (item coordinates), if any."""
        if self.x.size == 0:
            return None
        view = self.getViewWidget()
        if view is None:
            return None
        t = self.sceneTransform() * view.viewportTransform()
        dx, dy = self._device(t)
        target = t.map(pos)
        d2 = (dx - target.x()) ** 2 + (dy - target.y()) ** 2
        k = int(np.argmin(d2))
        return k if d2[k] <= PICK_PX**2 else None

    def _set_hovered(self, k: int | None) -> None:
        if k != self.hovered:
            self.hovered = k
            self.update()
            self.sigHovered.emit(k)

    def hoverEvent(self, ev: object) -> None:  # noqa: N802 - pyqtgraph's name
        if ev.isExit():  # type: ignore[attr-defined]
            self._set_hovered(None)
            return
        self._set_hovered(self.nearest(ev.pos()))  # type: ignore[attr-defined]

    def mouseClickEvent(self, ev: object) -> None:  # noqa: N802 - pyqtgraph's name
        if ev.button() != Qt.MouseButton.LeftButton:  # type: ignore[attr-defined]
            return
        k = self.nearest(ev.pos())  # type: ignore[attr-defined]
        if k is None:
            ev.ignore()  # type: ignore[attr-defined]
            return
        ev.accept()  # type: ignore[attr-defined]
        self.sigClicked.emit(int(self.ids[k]))


def fit_segment(
    params: tuple[float, float] | None, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The fitted line across the points' box: over the x range, cut where it leaves the
    y range (a steep line would otherwise stretch the plot far beyond the data)."""
    if params is None or x.size == 0:
        return None
    slope, intercept = params
    x0, x1 = float(x.min()), float(x.max())
    y0, y1 = float(y.min()), float(y.max())
    if slope != 0:
        ends = sorted(((y0 - intercept) / slope, (y1 - intercept) / slope))
        x0, x1 = max(x0, ends[0]), min(x1, ends[1])
    if x1 <= x0:
        return None
    xs = np.array([x0, x1])
    return xs, slope * xs + intercept


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    return escape(text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…")


class MetricScatter(QWidget):
    """A metric (x) against the human item scores (y), with the least-squares line."""

    item_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = make_plot(mouse=True)
        self.item = self.plot.getPlotItem()
        self.item.showGrid(x=True, y=True, alpha=0.2)
        self.points = PointCloud()
        self.fit = pg.PlotDataItem()
        self.item.addItem(self.points)
        self.item.addItem(self.fit)
        self.texts: pd.DataFrame | None = None  # items_frame indexed by item_id
        self.metric_name = ""
        self.human_label = ""
        self.title = ""
        self._label_key: tuple[object, ...] | None = None
        self.fit_params: tuple[float, float] | None = None
        self.colors = PlotColors.from_palette()
        fill_with_plot(self, self.plot)
        self.points.sigHovered.connect(self._on_hovered)
        self.points.sigClicked.connect(self.item_activated)
        self.apply_colors(self.colors)

    def apply_colors(self, colors: PlotColors) -> None:
        self.colors = colors
        style_plot(self.plot, colors)
        self.points.set_colors(colors.point, colors.text)
        self.fit.setPen(pg.mkPen(colors.negative, width=2.2))
        if self.metric_name:
            self._labels()
            self.set_title(self.title, force=True)

    def set_texts(self, items: pd.DataFrame) -> None:
        self.texts = items.set_index("item_id") if "item_id" in items.columns else items

    def set_data(self, metric: str, frame: pd.DataFrame, *, human_label: str) -> None:
        """`frame` as `StudyAnalysis.scatter` gives it: item_id, metric, human."""
        x = frame["metric"].to_numpy(dtype=float)
        y = frame["human"].to_numpy(dtype=float)
        same_axes = metric == self.metric_name and human_label == self.human_label
        self.metric_name, self.human_label = metric, human_label
        self.points.set_points(x, y, frame["item_id"].to_numpy())
        self.fit_params = least_squares(x, y)
        segment = fit_segment(self.fit_params, x, y)
        if segment is not None:
            self.fit.setData(*segment)
        else:
            self.fit.setData([], [])
        self._labels()
        if not same_axes:
            self.item.enableAutoRange()

    def _labels(self) -> None:
        c = self.colors
        key = (self.metric_name, self.human_label, c.text.rgba())
        if key == self._label_key:  # relabelling an axis re-lays the plot out
            return
        self._label_key = key
        axis_label(self.plot, "bottom", self.metric_name, c)
        axis_label(self.plot, "left", self.human_label, c)
        if self.title:
            self.set_title(self.title, force=True)

    def set_title(self, title: str, *, force: bool = False) -> None:
        """A line over the plot (part of its exports): the pair's r, n and the fit."""
        if title == self.title and not force:
            return
        self.title = title
        size = f"{self.font().pointSizeF():.1f}pt"
        self.item.setTitle(escape(title), color=self.colors.text.name(), size=size)

    def reset_zoom(self) -> None:
        self.item.enableAutoRange()

    def tooltip_html(self, k: int) -> str:
        item_id = int(self.points.ids[k])
        x, y = self.points.x[k], self.points.y[k]
        lines = [f"<b>Item {item_id}</b>"]
        if self.texts is not None and item_id in self.texts.index:
            row = self.texts.loc[item_id]
            system = row.get("system")
            if isinstance(system, str) and system:
                lines[0] += f" · {escape(system)}"
            lines.append(f"<b>Source:</b> {_clip(row['source'])}")
            lines.append(f"<b>Output:</b> {_clip(row['output'])}")
        lines.append(
            f"{escape(self.metric_name)}: <b>{x:.2f}</b> · {escape(self.human_label)}: <b>{y:.2f}</b>"
        )
        lines.append("<i>Click to open the item</i>")
        return "<p style='white-space:normal'>" + "<br>".join(lines) + "</p>"

    def _on_hovered(self, k: int | None) -> None:
        if k is None:
            QToolTip.hideText()
            return
        QToolTip.showText(QCursor.pos(), self.tooltip_html(k), self.plot)
