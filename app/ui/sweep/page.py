"""The Sweep page: choose models, layers, idf corpora, rescaling and metrics; run the sweep
in the background (each configuration an ordinary metric run); read the table and the
layer curves, the best configuration marked and tested against the runner-up.

The page only gathers choices and shows results: the sweep, its runs and its table are
the engine's (`meaningbench.ops.sweep.sweep_job`, run in a child process like the Run
metrics action).
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from meaningbench.errors import UserError
from meaningbench.ops.child_process import in_child_process
from meaningbench.ops.sweep import SweepRequest, plan_sweep, split_list, sweep_job
from meaningbench.queries.sweep import SweepTable
from meaningbench.runtime import Progress
from meaningbench.settings import DEFAULT_ENCODER
from meaningbench.ui.context import StudyContext
from meaningbench.ui.sweep.curves import LayerCurves
from meaningbench.ui.sweep.table import SweepTableWidget
from meaningbench.ui.widgets import WrappedLabel
from meaningbench.ui.wording import counted
from meaningbench.ui.workers import JobHandle, cancel_job

IDF_CHOICES = (("none", "none"), ("sources", "sources"), ("references", "references"),
               ("outputs", "outputs"))  # fmt: skip


def _checks(names: tuple[tuple[str, str], ...], on: set[str]) -> dict[str, QCheckBox]:
    return {key: _check(label, key in on) for key, label in names}


def _check(label: str, on: bool) -> QCheckBox:
    box = QCheckBox(label)
    box.setChecked(on)
    return box


def _row(*widgets: QWidget) -> QWidget:
    holder = QWidget()
    layout = QHBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        layout.addWidget(w)
    layout.addStretch(1)
    return holder


def verdict_text(table: SweepTable) -> str:
    best, second, test = table.best, table.runner_up, table.comparison
    if best is None:
        return "No configuration has scores to compare yet."
    e = best.entry
    text = (
        f"Best by {table.rank_by}: {e.model} · {e.metric} · layer {e.layer} · {e.variant} "
        f"({getattr(best, table.rank_by):.3f})."
    )
    if second is not None and test is not None:
        ci = test.difference_ci
        diff = test.best - test.runner_up
        ci_text = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if all(map(math.isfinite, ci)) else "–"
        verdict = (
            "significantly better"
            if test.significant
            else "not significantly better (the intervals overlap)"
        )
        text += (
            f" Against the runner-up (layer {second.entry.layer} · {second.entry.variant}, "
            f"{test.runner_up:.3f}): Williams p = {test.williams_p:.3f}, paired bootstrap "
            f"difference {diff:.3f} {ci_text}, p = {test.bootstrap_p:.3f} — {verdict}."
        )
    return text + f" {table.scale_note}."


class SweepPage(QWidget):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sweepPage")
        self.context = context
        self.job: JobHandle | None = None
        self.table_data: SweepTable | None = None

        browse = self._choice_widgets()
        choices = self._choices_box(browse)
        right = self._results_pane()
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(choices)
        left_layout.addStretch(1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([370, 1130])

        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        self._update_buttons()

    # -- building ---------------------------------------------------------------------
    def _choice_widgets(self) -> QPushButton:
        """The sweep's choices (models, layers, metrics, idf, rescaling, bootstrap, ranking);
        returns the idf file's Browse button."""
        self.models = QLineEdit(DEFAULT_ENCODER)
        self.models.setToolTip("Comma-separated Hugging Face ids or local model folders")
        self.layers = QLineEdit("all")
        self.layers.setToolTip("all, a range such as 1-6, a list such as 2,4 (0 = embeddings)")
        self.metrics = _checks((("bertscore", "BERTScore"), ("sbert_cosine", "SBERT cosine")),
                               {"bertscore"})  # fmt: skip
        self.idf = _checks(IDF_CHOICES, {"none"})
        self.idf_file = QLineEdit()
        self.idf_file.setPlaceholderText("or a text file, one document per line")
        self.idf_file.setMinimumWidth(120)  # room for the results on a 1024-px screen
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.rescale = _checks((("off", "off"), ("on", "on (baseline)")), {"off"})
        self.boot = QSpinBox()
        self.boot.setRange(0, 20000)
        self.boot.setValue(1000)
        self.rank_by = QComboBox()
        self.rank_by.addItem("Pearson", "pearson")
        self.rank_by.addItem("Spearman", "spearman")
        return browse

    def _choices_box(self, browse: QPushButton) -> QGroupBox:
        """The choices in a form, with the buttons that run and cancel the sweep."""
        form = QFormLayout()
        form.addRow("Models", self.models)
        form.addRow("Layers", self.layers)
        form.addRow("Metrics", _row(*self.metrics.values()))
        idf = list(self.idf.values())
        form.addRow("idf (BERTScore)", _row(*idf[:2]))
        form.addRow("", _row(*idf[2:]))
        form.addRow("", _row(self.idf_file, browse))
        form.addRow("Rescaling", _row(*self.rescale.values()))
        form.addRow("Bootstrap", _row(self.boot, QLabel("resamples")))
        form.addRow("Best by", self.rank_by)
        self.run_button = QPushButton("Run sweep")
        self.run_button.setObjectName("runSweep")
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(lambda: cancel_job(self.job))
        self.progress = QProgressBar()
        # Progress names each run ("bertscore@org/model[layer=3,...]"): it wraps inside
        # the name rather than widening the window while the sweep runs.
        self.status = WrappedLabel("")
        self.status.setObjectName("sweepStatus")
        form.addRow("", _row(self.run_button, self.cancel_button))
        form.addRow("", self.progress)
        form.addRow("", self.status)
        choices = QGroupBox("Configurations")
        choices.setLayout(form)
        return choices

    def _results_pane(self) -> QWidget:
        """The verdict above the results table and the layer curves."""
        self.table = SweepTableWidget()
        self.curves = LayerCurves()
        self.verdict = WrappedLabel("Run a sweep to compare its configurations.")
        self.verdict.setObjectName("sweepVerdict")
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        results = QSplitter(Qt.Orientation.Vertical)
        results.addWidget(self.table)
        results.addWidget(self.curves)
        results.setSizes([480, 340])
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.verdict)
        right_layout.addWidget(results, 1)
        return right

    # -- choices ----------------------------------------------------------------------
    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "idf corpus", "", "Text (*.txt);;All (*)")
        if path:
            self.idf_file.setText(path)

    def request(self) -> SweepRequest:
        """The sweep the page's choices describe; raises UserError for what cannot run."""
        path = self.context.path
        if path is None:
            raise UserError("open a study first")
        idf = [key for key, box in self.idf.items() if box.isChecked()]
        if self.idf_file.text().strip():
            idf.append(self.idf_file.text().strip())
        request = SweepRequest(
            study_path=Path(path),
            models=split_list(self.models.text()),
            layers=self.layers.text().strip() or "all",
            idf=idf or ["none"],
            rescale=[key == "on" for key, box in self.rescale.items() if box.isChecked()]
            or [False],
            metrics=[key for key, box in self.metrics.items() if box.isChecked()],
        )
        plan_sweep(request)
        return request

    # -- running ----------------------------------------------------------------------
    def start(self) -> JobHandle | None:
        if self.job is not None:
            return None
        try:
            request = self.request()
        except UserError as exc:
            self.status.setText(f"Cannot run: {exc}")
            return None
        self.status.setText("Starting…")
        self.progress.setRange(0, 0)
        self.job = self.context.runner.start(
            in_child_process(
                sweep_job, request, "meaning", self.boot.value(), self.rank_by.currentData()
            ),
            title="Sweep",
            on_result=self.show_result,
        )
        self.job.progress.connect(self._on_progress)
        self.job.log.connect(self.status.setText)
        self.job.cancelling.connect(
            lambda: self.status.setText("Cancelling after the current batch…")
        )
        self.job.cancelled.connect(lambda: self.status.setText("Cancelled; finished runs kept"))
        self.job.failed.connect(lambda f: self.status.setText(f"Failed: {f.message}"))
        self.job.finished.connect(self._on_finished)
        self._update_buttons()
        return self.job

    def _on_progress(self, p: Progress) -> None:
        if p.message:
            self.status.setText(p.message)
        if p.total:
            self.progress.setRange(0, p.total)
            self.progress.setValue(min(p.done, p.total))
        else:
            self.progress.setRange(0, 0)

    def _on_finished(self) -> None:
        self.job = None
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self.job is not None
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    # -- results ----------------------------------------------------------------------
    def show_result(self, table: SweepTable) -> None:
        self.table_data = table
        self.table.show_table(table)
        self.curves.show_table(table)
        self.verdict.setText(verdict_text(table))
        done = sum(1 for r in table.rows if not r.note)
        self.status.setText(f"Done: {done} of {counted(len(table.rows), 'configuration')} scored")

    def shutdown(self) -> None:
        if self.job is not None:
            self.job.cancel()
