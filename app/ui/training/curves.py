"""Live training and validation loss curves (pyqtgraph), redrawn from a `TrainingMonitor`.

The dialog calls `refresh` from a timer; the plot redraws only when the monitor changed
since the last draw, so a training that emits a hundred steps a second costs a few redraws
a second. Earlier runs of a training with folds or seeds stay as faint validation curves.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from meaningbench.queries.training_progress import RunCurves, TrainingMonitor
from meaningbench.ui.dashboard.plots import PlotColors, axis_label, make_plot, style_plot


def _faded(color: QColor, alpha: int) -> QColor:
    out = QColor(color)
    out.setAlpha(alpha)
    return out


class LossCurves(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("lossCurves")
        self.colors = PlotColors.from_palette()
        self.plot = make_plot(mouse=True)
        self.plot.setObjectName("lossPlot")
        self.plot.setMinimumSize(420, 280)
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setClipToView(True)
        item.setDownsampling(auto=True, mode="peak")
        self.legend = item.addLegend(
            offset=(-10, 10), labelTextSize=f"{QApplication.font().pointSizeF():.1f}pt"
        )
        self.batch = item.plot([], [], name="training, per batch")
        self.smooth = item.plot([], [], name="training, smoothed")
        self.val = item.plot([], [], name="validation")
        self.best = pg.ScatterPlotItem(name="best so far (saved)")
        item.addItem(self.best)  # a named item joins the legend by itself
        self.previous: dict[str, pg.PlotDataItem] = {}
        self.title = QLabel("")
        self.title.setObjectName("curveTitle")
        self.log_y = QCheckBox("Log scale")
        self.log_y.toggled.connect(lambda on: self.plot.getPlotItem().setLogMode(y=on))
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.log_y)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.plot, 1)
        self.drawn_version = -1
        self.redraws = 0
        self.apply_colors()

    def apply_colors(self) -> None:
        c = self.colors = PlotColors.from_palette()
        style_plot(self.plot, c)
        axis_label(self.plot, "bottom", "optimizer step", c)
        axis_label(self.plot, "left", "loss: MSE on the 0–100 scale", c)
        self.legend.setLabelTextColor(c.text)
        for _sample, label in self.legend.items:
            label.setText(label.text, color=c.text)  # setLabelTextColor alone keeps old text
        self.legend.setBrush(pg.mkBrush(_faded(c.background, 220)))
        self.legend.setPen(pg.mkPen(_faded(c.grid, 160)))
        self.batch.setPen(pg.mkPen(_faded(c.bar, 70), width=1))
        self.smooth.setPen(pg.mkPen(c.bar, width=2.2))
        self.val.setPen(pg.mkPen(c.accent, width=2.2))
        self.val.setSymbol("o")
        self.val.setSymbolSize(7)
        self.val.setSymbolBrush(pg.mkBrush(c.accent))
        self.val.setSymbolPen(pg.mkPen(c.background, width=1))
        self.best.setSymbol("star")
        self.best.setSize(17)
        self.best.setBrush(pg.mkBrush(c.negative))
        self.best.setPen(pg.mkPen(c.background, width=1))
        for curve in self.previous.values():
            curve.setPen(pg.mkPen(_faded(c.accent, 90), width=1.4))
        self.drawn_version = -1

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        # A theme switch changes the palette: the plot takes its colours from it.
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_colors()
        super().changeEvent(event)

    def clear(self) -> None:
        for curve in self.previous.values():
            self.plot.getPlotItem().removeItem(curve)
        self.previous.clear()
        for curve in (self.batch, self.smooth, self.val):
            curve.setData([], [])
        self.best.setData([], [])
        self.title.setText("")
        self.drawn_version = -1

    def refresh(self, monitor: TrainingMonitor) -> bool:
        """Redraw when the monitor changed; True when it did."""
        if monitor.version == self.drawn_version:
            return False
        self.drawn_version = monitor.version
        self.redraws += 1
        current = monitor.runs.get(monitor.current or "") or next(
            reversed(monitor.runs.values()), None
        )
        if current is None:
            return True
        self._draw_previous(monitor, current.name)
        self._draw_current(current)
        n_runs = max(monitor.n_runs, len(monitor.runs))
        position = f" (run {monitor.run_index + 1} of {n_runs})" if n_runs > 1 else ""
        self.title.setText(f"Loss curves · {current.name}{position}")
        return True

    def _draw_current(self, run: RunCurves) -> None:
        self.batch.setData(np.asarray(run.steps, float), np.asarray(run.batch_loss, float))
        # Before the live steps: the mean losses a resumed checkpoint kept.
        first_live = run.steps[0] if run.steps else None
        kept = [
            (s, v)
            for s, v in zip(run.mean_steps, run.mean_loss, strict=True)
            if first_live is None or s < first_live
        ]
        xs = [s for s, _ in kept] + list(run.steps)
        ys = [v for _, v in kept] + list(run.smooth_loss)
        self.smooth.setData(np.asarray(xs, float), np.asarray(ys, float))
        self.val.setData(np.asarray(run.val_steps, float), np.asarray(run.val_loss, float))
        if run.best_step is not None and run.best_val_loss is not None:
            self.best.setData([float(run.best_step)], [float(run.best_val_loss)])
        else:
            self.best.setData([], [])

    def _draw_previous(self, monitor: TrainingMonitor, current: str) -> None:
        item = self.plot.getPlotItem()
        for name, run in monitor.runs.items():
            if name == current or not run.val_steps:
                continue
            curve = self.previous.get(name)
            if curve is None:
                curve = pg.PlotDataItem(pen=pg.mkPen(_faded(self.colors.accent, 90), width=1.4))
                curve.setZValue(-1)
                item.addItem(curve)
                self.previous[name] = curve
            curve.setData(np.asarray(run.val_steps, float), np.asarray(run.val_loss, float))
