"""Run the metric battery from the window: pick metrics, options, watch progress, cancel.

The list of metrics (with availability and reasons) and the scoring itself
(`meaningbench.jobs.scoring`) run in child processes, so neither the metric libraries' imports nor
the scoring's CPU time and garbage collections ever hold the window's thread. Scores reach
the browser batch by batch: the child sends each committed batch, the context relays it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.child_process import in_child_process
from meaningbench.ops.score import list_metrics_job, score_job
from meaningbench.queries.study import reference_coverage
from meaningbench.runtime import Progress
from meaningbench.runtime.rate import RateMeter, format_duration, format_rate
from meaningbench.settings import DEFAULT_ENCODER, DEVICE_CHOICES, UserPrefs
from meaningbench.ui.widgets import ElidedLabel, WrappedLabel
from meaningbench.ui.window_state import open_at
from meaningbench.ui.wording import counted
from meaningbench.ui.workers import JobFailure, JobHandle, cancel_job

if TYPE_CHECKING:
    from meaningbench.ops.score import MetricListing, MetricRunSummary
    from meaningbench.ui.context import StudyContext

NAME_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2
LACKS_MODEL = "lacks-model"  # STATUS_ROLE of a metric that only needs its `model` weights
IN_ALL_ROLE = Qt.ItemDataRole.UserRole + 3  # False: "All available" leaves it unticked
FAMILY_ORDER = ("lexical", "readability", "neural", "structural", "trained")
EACH_DEFAULT = "Each metric's default"
WORK_STEPS = 1000  # the progress bar's steps when the job reports its share of the work
REFERENCE_MODES = (("source", "Against the source"), ("references", "Against references"))


def availability_text(m: MetricListing) -> str:
    """The Availability column: available, or what the metric needs (weights, an extra…)."""
    status = m.status or ("available" if m.available else "")
    if status in ("", "unavailable"):
        return m.reason or "unavailable"
    return status


def not_in_all_text(m: MetricListing, *, long: bool = False) -> str:
    """What the row adds for a metric that "All available" leaves out (the LLM judge);
    `long`: the tooltip's wording."""
    if m.runs_in_all:
        return ""
    why = m.not_in_all_why
    if not long:
        return f"not in All: {why}"
    return f"“All available” leaves it out ({why}): tick it by hand to run it."


def availability_tooltip(m: MetricListing) -> str:
    """Why, and the exact option, command or variable that makes the metric available."""
    if m.available:
        lines = [m.reason or "ready to run", backend_text(m, long=True),
                 not_in_all_text(m, long=True)]  # fmt: skip
        return "\n".join(line for line in lines if line)
    lines = [m.reason or "unavailable"]
    if m.fix:
        lines.append(
            f"To use it: {m.fix}"
            + (" — or name the model under Options" if _takes_model(m) else "")
        )
    return "\n".join(lines)


def backend_text(m: MetricListing, *, long: bool = False) -> str:
    """What runs the metric's model: "onnx" or "torch" in the row, and why in the tooltip
    (`long`); "" for a metric without the choice."""
    if not m.backend:
        return ""
    if long:
        return f"Runs on {m.backend}, with the metric's default device"
    return f"runs on {m.backend.split(' ', 1)[0]}"


def _takes_model(m: MetricListing) -> bool:
    """Whether the weights it lacks are given through its `model` option (the Options' model
    field can give them)."""
    return m.fix.startswith(f"{m.name}[model=")


class BatteryDialog(QDialog):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("batteryDialog")
        self.setWindowTitle("Run metrics")
        self.context = context
        self.metrics: list[MetricListing] = []
        self._coverage: tuple[int, int] | None = None  # items with references, items
        self.job: JobHandle | None = None
        self.summaries: list[MetricRunSummary] = []
        self._meter = RateMeter()
        # Time left follows the work (items weighted by their metric's cost), not the
        # items: a thousand lexical items take less time than ten neural ones.
        self._work_meter = RateMeter()
        self._build()
        self.refresh_metrics()

    # -- layout -----------------------------------------------------------------------

    def _build(self) -> None:
        self._build_tree()
        picks = self._build_picks()
        options = self._build_options()
        progress_box = self._build_progress()
        buttons = self._build_buttons()

        left = QVBoxLayout()
        left.addWidget(self.tree, 1)
        left.addLayout(picks)
        top = QHBoxLayout()
        top.addLayout(left, 1)
        side = QVBoxLayout()
        side.addWidget(options)
        side.addWidget(self.reference_warning)
        side.addStretch(1)
        options.setFixedWidth(330)
        top.addLayout(side)
        layout = QVBoxLayout(self)
        layout.addLayout(top, 1)
        layout.addLayout(progress_box)
        layout.addLayout(buttons)
        open_at(self, QSize(1040, 640))
        self._update_buttons()

    def _build_tree(self) -> None:
        self.tree = QTreeWidget()
        self.tree.setObjectName("metricTree")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Metric", "Uses", "Availability"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.tree.itemChanged.connect(lambda *_: self._update_buttons())
        self.tree.itemChanged.connect(lambda *_: self._update_reference_warning())

    def _build_picks(self) -> QHBoxLayout:
        self.all_button = QPushButton("All available")
        self.none_button = QPushButton("None")
        self.all_button.clicked.connect(lambda: self.check_all(True))
        self.none_button.clicked.connect(lambda: self.check_all(False))
        picks = QHBoxLayout()
        picks.addWidget(self.all_button)
        picks.addWidget(self.none_button)
        picks.addStretch(1)
        # A failure to list the metrics can be long: it wraps, never widening the dialog.
        self.list_status = WrappedLabel("Checking which metrics can run…")
        self.list_status.setMinimumWidth(
            self.list_status.fontMetrics().horizontalAdvance("00 of 00 metrics can run here") + 8
        )  # the usual line on one line
        self.list_status.setObjectName("mutedLabel")
        picks.addWidget(self.list_status)
        return picks

    def _build_options(self) -> QGroupBox:
        self.model_combo = QComboBox()
        self.model_combo.setObjectName("modelCombo")
        self.model_combo.setEditable(True)
        self.model_combo.addItem(EACH_DEFAULT)
        self.model_combo.addItem(DEFAULT_ENCODER)
        self.model_combo.setToolTip(
            "Model for the neural metrics: each metric's own default, the bundled encoder, "
            "a Hugging Face id, or a local model folder"
        )
        self.model_combo.currentTextChanged.connect(lambda _t: self._update_weight_metrics())
        self.model_combo.currentTextChanged.connect(lambda _t: self._update_buttons())
        self.device_combo = QComboBox()
        for d in DEVICE_CHOICES:
            self.device_combo.addItem(d, d)
        prefs = UserPrefs.load()
        self.device_combo.setCurrentIndex(max(0, self.device_combo.findData(prefs.device)))
        self.refmode_combo = QComboBox()
        for value, label in REFERENCE_MODES:
            self.refmode_combo.addItem(label, value)
        self.refmode_combo.setToolTip(
            "Reference-based metrics compare the output with the source, or with the item's "
            "human references when it has them (items without references fall back to the source)"
        )
        self.refmode_combo.currentIndexChanged.connect(lambda _i: self._update_reference_warning())
        self.reference_warning = self._make_reference_warning()
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, 4096)
        self.batch_spin.setValue(64)
        self.batch_spin.setToolTip("Items scored and committed together")
        options = QGroupBox("Options")
        form = QFormLayout(options)
        form.addRow("Model", self.model_combo)
        form.addRow("Device", self.device_combo)
        form.addRow("References", self.refmode_combo)
        form.addRow("Batch size", self.batch_spin)
        return options

    def _build_progress(self) -> QVBoxLayout:
        # "Now: <run's name>" names long runs (a model folder, an idf corpus): elided, the
        # whole line in its tooltip, so the dialog keeps its width while it runs.
        self.phase_label = ElidedLabel("")
        self.phase_label.setObjectName("phaseLabel")
        self.progress = QProgressBar()
        self.progress.setObjectName("batteryProgress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.rate_label = QLabel("")
        self.rate_label.setObjectName("rateLabel")
        progress_box = QVBoxLayout()
        progress_box.addWidget(self.phase_label)
        progress_box.addWidget(self.progress)
        progress_box.addWidget(self.rate_label)
        self.results = QPlainTextEdit()
        self.results.setObjectName("batteryResults")
        self.results.setReadOnly(True)
        self.results.setMaximumHeight(self.fontMetrics().lineSpacing() * 7)
        self.results.hide()
        progress_box.addWidget(self.results)
        return progress_box

    def _build_buttons(self) -> QHBoxLayout:
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel run")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: cancel_job(self.job))
        self.close_button = QPushButton("Close")
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.close_button)
        return buttons

    # -- scoring against the source while references exist ------------------------------

    def _make_reference_warning(self) -> QFrame:
        box = QFrame()
        box.setObjectName("referenceWarning")
        box.setFrameShape(QFrame.Shape.StyledPanel)
        self.reference_label = QLabel()
        self.reference_label.setWordWrap(True)
        self.use_references_button = QPushButton("Score against references")
        self.use_references_button.setObjectName("useReferences")
        self.use_references_button.setAutoDefault(False)
        self.use_references_button.clicked.connect(
            lambda: self.refmode_combo.setCurrentIndex(self.refmode_combo.findData("references"))
        )
        lay = QVBoxLayout(box)
        lay.addWidget(self.reference_label)
        lay.addWidget(self.use_references_button, 0, Qt.AlignmentFlag.AlignLeft)
        box.hide()
        return box

    def _reference_coverage(self) -> tuple[int, int]:
        if self._coverage is None:
            study = self.context.study
            self._coverage = reference_coverage(study) if study is not None else (0, 0)
        return self._coverage

    def _update_reference_warning(self) -> None:
        """Warn when reference-based metrics are about to ignore the study's references."""
        if not hasattr(self, "reference_warning"):
            return
        needs = {m.name for m in self.metrics if m.needs_references}
        chosen = [name for name in self.checked_metrics() if name in needs]
        with_refs, total = self._reference_coverage() if chosen else (0, 0)
        show = self.refmode_combo.currentData() == "source" and bool(chosen) and with_refs > 0
        if show:
            self.reference_label.setText(
                f"⚠ {with_refs:,} of {counted(total, 'item')} "
                f"{'has' if with_refs == 1 else 'have'} human references, but "
                f"{', '.join(chosen)} will compare each output with its source."
            )
        self.reference_warning.setVisible(show)

    # -- the metric list --------------------------------------------------------------

    def refresh_metrics(self) -> None:
        self.context.runner.start(
            in_child_process(list_metrics_job, self.context.path),
            title="Checking metrics",
            on_result=self.set_metrics,
            on_failed=self._list_failed,
        )

    def _list_failed(self, failure: JobFailure) -> None:
        self.list_status.setText(f"Cannot list the metrics: {failure.message}")

    def set_metrics(self, metrics: list[MetricListing]) -> None:
        self.metrics = list(metrics)
        self.tree.blockSignals(True)
        self.tree.clear()
        families: dict[str, QTreeWidgetItem] = {}
        order = {f: i for i, f in enumerate(FAMILY_ORDER)}
        for m in sorted(self.metrics, key=lambda m: (order.get(m.family, 99), m.name)):
            family = m.family or "other"
            parent = families.get(family)
            if parent is None:
                parent = QTreeWidgetItem([family.capitalize(), "", ""])
                parent.setFlags(Qt.ItemFlag.ItemIsEnabled)
                font = parent.font(0)
                font.setBold(True)
                parent.setFont(0, font)
                self.tree.addTopLevelItem(parent)
                families[family] = parent
            uses = []
            if m.needs_references:
                uses.append("references")
            if m.needs_model:
                uses.append("a model")
            available = m.available
            child = QTreeWidgetItem([m.label or m.name, ", ".join(uses), ""])
            child.setData(0, NAME_ROLE, m.name)
            # The judge's row says why "All available" leaves it out; ticking it still works.
            outside_all = not_in_all_text(m)
            shown = (availability_text(m), backend_text(m) if available else "", outside_all)
            child.setText(2, " · ".join(x for x in shown if x))
            child.setData(0, IN_ALL_ROLE, m.runs_in_all)
            child.setToolTip(0, m.name)
            child.setToolTip(2, availability_tooltip(m))
            lacks_model = m.status == "needs weights" and _takes_model(m)
            child.setData(0, STATUS_ROLE, LACKS_MODEL if lacks_model else "")
            if available:
                child.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
                checked = family in ("lexical", "readability")
                child.setCheckState(
                    0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked
                )
            else:
                child.setFlags(Qt.ItemFlag.ItemIsUserCheckable)  # shown, not enabled
                child.setCheckState(0, Qt.CheckState.Unchecked)
            parent.addChild(child)
        self.tree.expandAll()
        self._update_weight_metrics()
        self.tree.blockSignals(False)
        n_ok = sum(1 for m in self.metrics if m.available)
        self.list_status.setText(f"{n_ok} of {counted(len(self.metrics), 'metric')} can run here")
        self._update_buttons()
        self._update_reference_warning()

    def _update_weight_metrics(self) -> None:
        """A metric that lacks only its weights can run once the Options name a model."""
        model_given = self.options()["model"] is not None
        for item in self._metric_items():
            if item.data(0, STATUS_ROLE) != LACKS_MODEL:
                continue
            if model_given:
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
                item.setText(2, "uses the model under Options")
            else:
                item.setFlags(Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(0, Qt.CheckState.Unchecked)
                item.setText(2, "needs weights")

    def _metric_items(self) -> list[QTreeWidgetItem]:
        out: list[QTreeWidgetItem] = []
        for i in range(self.tree.topLevelItemCount()):
            parent = self.tree.topLevelItem(i)
            if parent is not None:
                children = (parent.child(j) for j in range(parent.childCount()))
                out.extend(c for c in children if c is not None)
        return out

    def check_all(self, checked: bool) -> None:
        """The "All available" button ticks every runnable metric of "all" (`Metric.in_all`),
        as `--metrics all` runs them, and leaves the others (the LLM judge) as the user set
        them; "None" unticks everything."""
        for item in self._metric_items():
            if not item.flags() & Qt.ItemFlag.ItemIsEnabled:
                continue
            if checked and item.data(0, IN_ALL_ROLE) is False:
                continue
            item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)

    def set_checked(self, names: list[str]) -> None:
        wanted = set(names)
        for item in self._metric_items():
            if item.flags() & Qt.ItemFlag.ItemIsEnabled:
                state = item.data(0, NAME_ROLE) in wanted
                item.setCheckState(0, Qt.CheckState.Checked if state else Qt.CheckState.Unchecked)

    def checked_metrics(self) -> list[str]:
        return [
            str(item.data(0, NAME_ROLE))
            for item in self._metric_items()
            if item.checkState(0) == Qt.CheckState.Checked
            and item.flags() & Qt.ItemFlag.ItemIsEnabled
        ]

    def options(self) -> dict[str, Any]:
        model = self.model_combo.currentText().strip()
        return {
            # None leaves each metric its own default (MeaningBERT's is not an encoder).
            "model": None if model in ("", EACH_DEFAULT) else model,
            "device": self.device_combo.currentData(),
            "reference_mode": self.refmode_combo.currentData(),
            "batch_size": self.batch_spin.value(),
        }

    # -- running ----------------------------------------------------------------------

    def start(self) -> JobHandle | None:
        metrics = self.checked_metrics()
        path = self.context.path
        if not metrics or path is None or self.job is not None:
            return None
        self.summaries = []
        self._meter.reset()
        self._work_meter.reset()
        self._started = time.monotonic()
        self.progress.setRange(0, 0)
        self.phase_label.setText("Starting…")
        self.rate_label.setText("")
        self.results.hide()
        self.job = self.context.runner.start(
            in_child_process(score_job, path, metrics, self.options()),
            title="Running metrics",
            on_result=self._on_result,
        )
        self.job.progress.connect(self._on_progress)
        self.job.cancelling.connect(
            lambda: self.phase_label.setText("Cancelling after the current batch…")
        )
        self.job.cancelled.connect(
            lambda: self.phase_label.setText("Cancelled; finished work kept")
        )
        self.job.failed.connect(lambda f: self.phase_label.setText(f"Failed: {f.message}"))
        self.job.finished.connect(self._on_finished)
        self._update_buttons()
        return self.job

    def _on_progress(self, p: Progress) -> None:
        if p.message:
            self.phase_label.setText(f"Now: {p.message}")
        if p.total:
            now = time.monotonic()
            self._meter.add(now, p.done)
            rate = self._meter.rate()
            if p.work is not None:
                self.progress.setRange(0, WORK_STEPS)
                self.progress.setValue(round(p.work * WORK_STEPS))
                self._work_meter.add(now, round(p.work * WORK_STEPS))
                left = self._work_meter.eta_s(WORK_STEPS)
            else:
                self.progress.setRange(0, p.total)
                self.progress.setValue(min(p.done, p.total))
                left = self._meter.eta_s(p.total)
            self.rate_label.setText(
                f"{p.done:,} / {counted(p.total, 'item')} · {format_rate(rate)} · "
                f"{format_duration(left)} left"
            )
        else:
            self.progress.setRange(0, 0)

    def _on_result(self, summaries: list[MetricRunSummary]) -> None:
        self.summaries = list(summaries)
        lines = []
        for s in self.summaries:
            text = f"{s.label}: {s.status}, {s.scored:,} scored, {s.cached:,} cached"
            if s.failed:
                text += f", {s.failed:,} failed"
            if s.error:
                text += f" ({s.error})"
            lines.append(text)
        elapsed = format_duration(time.monotonic() - self._started)
        cancelled = (self.job is not None and self.job.outcome == "cancelled") or any(
            s.status == "cancelled" for s in self.summaries
        )
        self.phase_label.setText(
            f"Cancelled after {elapsed}; finished work kept" if cancelled else f"Done in {elapsed}"
        )
        self.results.setPlainText("\n".join(lines))
        self.results.setVisible(bool(lines))

    def _on_finished(self) -> None:
        self.job = None
        if self.progress.maximum() == 0:
            self.progress.setRange(0, 1)
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self.job is not None
        self.run_button.setEnabled(not running and bool(self.checked_metrics()))
        self.cancel_button.setEnabled(running)
        # The metric list stays readable (not greyed) while a run goes on: the run took its
        # own copy of the choice.
        for w in (self.model_combo, self.device_combo, self.refmode_combo,
                  self.batch_spin, self.all_button, self.none_button):  # fmt: skip
            w.setEnabled(not running)
