"""Train a MeaningBERT or a Sentence-BERT model from the window: options, live loss curves,
cancel, resume, model card.

The training is `meaningbench.training.train_model`, the function `meaningbench train` runs, on a
worker thread of the window's job runner. Its events are the job's messages: they reach
the GUI thread as the job handle's `message` signal and land in a `TrainingMonitor`; a timer redraws the curves and the progress
from it a few times a second, however fast the steps come. Cancel stops after the current
step and leaves a checkpoint; choosing a folder that holds one offers Resume, with the
saved settings locked and the curve so far drawn.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from meaningbench.errors import UserError
from meaningbench.ops.train import TRAIN_EVENT, train_job
from meaningbench.queries.training import checkpoint_lines, loss_text
from meaningbench.queries.training_progress import TrainingMonitor
from meaningbench.runtime.rate import format_duration
from meaningbench.settings import UserPrefs
from meaningbench.ui.dialogs.dialog_terms import TRAINING_TERMS, in_dialog_terms
from meaningbench.ui.training.curves import LossCurves
from meaningbench.ui.training.form import TrainingForm
from meaningbench.ui.training.panels import CardPanel, Notice
from meaningbench.ui.window_state import open_at
from meaningbench.ui.workers import JobFailure, JobHandle, cancel_job

if TYPE_CHECKING:
    from meaningbench.ops.train import TrainRequest, TrainResult
    from meaningbench.queries.training import TrainingState
    from meaningbench.ui.context import StudyContext

REDRAW_MS = 200  # the curves and labels follow the training at most five times a second
FOLDER_CHECK_MS = 300  # typing a folder path: look at it once the typing pauses
JOB_TITLE = "Training a model"


def study_dimensions(context: StudyContext) -> list[str]:
    from meaningbench.queries.study import dimension_names

    return [] if context.study is None else dimension_names(context.study)


def default_out_dir(study_path: Path | None, kind: str = "cross-encoder") -> Path:
    """A new folder under the data folder's models/, named after the study and the kind
    (the folder's name is the model's registered name by default)."""
    from meaningbench.settings import models_dir

    stem = study_path.stem if study_path is not None else "study"
    suffix = "sbert" if kind == "bi-encoder" else "meaningbert"
    base = models_dir() / f"{stem}-{suffix}"
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


class TrainingDialog(QDialog):
    train_event = Signal(object)  # each TrainEvent of the running training, after the monitor

    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trainingDialog")
        self.setWindowTitle("Train a model")
        self.setModal(False)
        self.context = context
        self.monitor = TrainingMonitor()
        self.job: JobHandle | None = None
        self.trained: TrainResult | None = None
        self.request: TrainRequest | None = None  # of the training running or last run
        self.failure: JobFailure | None = None
        self.folder_state: TrainingState | None = None
        self.folder_problem: str | None = None
        self.events_seen = 0
        self._started = 0.0
        self._curves_folder: Path | None = None  # the folder whose curves are drawn
        self._build()
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self.refresh_view)
        self._folder_timer = QTimer(self)
        self._folder_timer.setSingleShot(True)
        self._folder_timer.setInterval(FOLDER_CHECK_MS)
        self._folder_timer.timeout.connect(self.check_folder)
        self.form.out_dir_changed.connect(lambda _t: self._folder_timer.start())
        self._shown_kind = self._kind()
        self.form.kind.currentIndexChanged.connect(lambda _i: self._on_kind_changed())
        context.study_opened.connect(lambda _s: self._on_study_changed())
        context.study_closed.connect(self._on_study_changed)
        self._on_study_changed()

    # -- layout -----------------------------------------------------------------------

    def _build(self) -> None:
        self.intro = QLabel("")
        self.intro.setObjectName("mutedLabel")
        self.intro.setWordWrap(True)
        self.form = TrainingForm([])
        self.folder_notice = Notice("folderNotice")
        left = QWidget()
        left_box = QVBoxLayout(left)
        left_box.setContentsMargins(0, 0, 6, 0)
        left_box.addWidget(self.form)
        left_box.addWidget(self.folder_notice)
        left_box.addStretch(1)
        scroll = QScrollArea()
        scroll.setObjectName("trainingOptions")
        scroll.setWidget(left)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(400)

        self.curves = LossCurves()
        self.phase_label = QLabel("Choose the options, then Start.")
        self.phase_label.setObjectName("phaseLabel")
        self.progress = QProgressBar()
        self.progress.setObjectName("trainingProgress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m steps")
        self.detail_label = QLabel("")
        self.detail_label.setObjectName("rateLabel")
        self.detail_label.setWordWrap(True)
        self.error_notice = Notice("errorNotice")
        self.card = CardPanel()
        right = QWidget()
        right_box = QVBoxLayout(right)
        right_box.setContentsMargins(6, 0, 0, 0)
        right_box.addWidget(self.curves, 1)
        right_box.addWidget(self.phase_label)
        right_box.addWidget(self.progress)
        right_box.addWidget(self.detail_label)
        right_box.addWidget(self.error_notice)
        right_box.addWidget(self.card)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(scroll)
        split.addWidget(right)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([430, 770])

        self.start_button = QPushButton("Start training")
        self.start_button.setObjectName("startButton")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setObjectName("resumeButton")
        self.resume_button.setToolTip("Continue the training in the output folder")
        self.resume_button.clicked.connect(self.resume)
        self.cancel_button = QPushButton("Cancel training")
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setToolTip("Stop after the current step and write a checkpoint")
        self.cancel_button.clicked.connect(lambda: cancel_job(self.job))
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip("Hide this window; a running training goes on")
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for b in (self.start_button, self.resume_button, self.cancel_button, self.close_button):
            buttons.addWidget(b)

        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)
        open_at(self, QSize(1220, 780))

    # -- study and folder ---------------------------------------------------------------

    def _on_study_changed(self) -> None:
        if self.running:
            return  # the training holds its own path; the new study is for the next one
        path = self.context.path
        dims = study_dimensions(self.context)
        current = self.form.dimension.currentText()
        self.form.dimension.clear()
        self.form.dimension.addItems(dims or ["meaning"])
        wanted = current if current in dims else "meaning"
        if self.form.dimension.findText(wanted) >= 0:
            self.form.dimension.setCurrentText(wanted)
        self.form.device.setCurrentIndex(max(0, self.form.device.findData(UserPrefs.load().device)))
        name = self.context.title or (path.name if path else "")
        self.intro.setText(
            f"Fine-tune a model to predict the human ratings of <b>{name}</b>: a "
            "MeaningBERT-style cross-encoder, or a Sentence-BERT bi-encoder whose cosine "
            "also serves BERTScore. Items are split by source sentence so that no test "
            "source is seen in training. The model is saved with its model card and "
            "registered in the study as a metric."
            if path is not None
            else "Open a study with ratings to train a model on them."
        )
        if path is not None:
            self.form.out_dir.set_text(str(default_out_dir(path, self._kind())))
            self.check_folder()
        self._update_buttons()

    def _kind(self) -> str:
        return str(self.form.kind.currentData())

    def _on_kind_changed(self) -> None:
        """A folder the dialog proposed follows the kind; one the user chose stays."""
        path, old, new = self.context.path, self._shown_kind, self._kind()
        self._shown_kind = new
        if path is not None and self.form.out_dir.text() == str(default_out_dir(path, old)):
            self.form.out_dir.set_text(str(default_out_dir(path, new)))

    def check_folder(self) -> None:
        """Look at the output folder: new, not empty, or holding a training to resume."""
        from meaningbench.queries.training import read_card, training_state

        if self.running:
            return
        text = self.form.out_dir.text()
        folder = Path(text).expanduser() if text else None
        self.folder_state = training_state(folder) if folder is not None else None
        self.folder_problem = None
        state = self.folder_state
        if folder != self._curves_folder:
            # Another folder: its checkpoint's curves (or none), not the previous folder's.
            self._curves_folder = folder
            self.monitor.reset()
            self.curves.clear()
            self.card.setVisible(False)
            for run in state.runs if state is not None else []:
                self.monitor.seed_from_checkpoint(run.name, run.curve)
            self.curves.refresh(self.monitor)
        self.folder_notice.setVisible(False)
        if state is not None:
            self.form.set_request(state.request)
            self.form.set_locked(True)
            if state.finished:
                card = read_card(state.out_dir)
                if card and self.card.isHidden():
                    self.card.show_card(card, state.out_dir, card.get("name"))
                self.folder_problem = "this folder holds a finished model: choose another"
            else:
                self.folder_notice.show_text(
                    "info", "Checkpoint in this folder", checkpoint_lines(state)
                )
        else:
            if self.form.locked:
                self.form.set_locked(False)
            if (
                folder is not None
                and folder.exists()
                and (not folder.is_dir() or any(folder.iterdir()))
            ):
                self.folder_problem = "this folder is not empty: choose a new or empty one"
                self.folder_notice.show_text(
                    "error", "Output folder", [f"{folder} is not empty: choose a new one."]
                )
        self._update_buttons()

    # -- running ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.job is not None

    def start(self) -> JobHandle | None:
        """Start a new training with the form's options."""
        path = self.context.path
        if self.running or path is None:
            return None
        try:
            request = self.form.request(path)
        except UserError as exc:
            self.show_error("Cannot start", str(exc))
            return None
        return self._launch(request)

    def resume(self) -> JobHandle | None:
        """Continue the training in the output folder, with its saved settings."""
        from meaningbench.queries.training import load_request

        path = self.context.path
        if self.running or path is None:
            return None
        folder = Path(self.form.out_dir.text()).expanduser()
        try:
            saved = load_request(folder)
        except UserError as exc:
            self.show_error("Cannot resume", str(exc))
            return None
        request = self.form.apply_saved(saved, resume=True).with_changes(study=path)
        return self._launch(request, keep_curves=True)

    def _launch(self, request: TrainRequest, *, keep_curves: bool = False) -> JobHandle:
        if not keep_curves:
            self.monitor.reset()
            self.curves.clear()
        self._curves_folder = request.out_dir
        self.request = request
        self.trained = self.failure = None
        self.events_seen = 0
        self.error_notice.setVisible(False)
        self.folder_notice.setVisible(False)
        self.card.setVisible(False)
        self._started = time.monotonic()
        self.progress.setRange(0, 0)
        self.phase_label.setText("Starting: loading the model and the study's ratings…")
        self.detail_label.setText("")
        self.job = self.context.runner.start(
            partial(train_job, request),
            title=JOB_TITLE,
            on_result=self._on_result,
            on_failed=self._on_failed,
            show_errors=False,
        )
        self.job.message.connect(self._on_message)
        self.job.cancelling.connect(self._on_cancelling)
        self.job.cancelled.connect(self._on_cancelled)
        self.job.finished.connect(self._on_finished)
        self.form.set_running(True)
        self._timer.start()
        self._update_buttons()
        return self.job

    def _on_cancelling(self) -> None:
        self.cancel_button.setEnabled(False)
        self.phase_label.setText("Stopping after the current step; writing a checkpoint…")

    @Slot(str, object)
    def _on_message(self, kind: str, event: Any) -> None:
        if kind == TRAIN_EVENT:
            self.events_seen += 1
            self.monitor.feed(event)
            self.train_event.emit(event)

    def _end_live_view(self) -> None:
        """Draw the last state, then stop the timer: its next redraw would overwrite the
        closing message while the job winds down."""
        self.refresh_view()
        self._timer.stop()

    def _on_result(self, result: TrainResult) -> None:
        self.trained = result
        self._end_live_view()
        self.card.show_card(result.card, result.out_dir, result.name if result.registered else None)
        took = format_duration(time.monotonic() - self._started)
        self.phase_label.setText(f"Finished in {took}. The model is in {result.out_dir}")
        self.detail_label.setText("Choose a new output folder to train another model.")
        self._refresh_battery()

    def _on_failed(self, failure: JobFailure) -> None:
        self.failure = failure
        self._end_live_view()
        if failure.is_user_error:
            self.show_error("Training failed", failure.message)
        else:
            self.show_error(
                "Training failed",
                f"{failure.message}\n\nThis is a bug in MeaningBench; Details… shows where it "
                "happened. Finished runs and checkpoints were kept.",
                details=failure.trace,
            )
        self.phase_label.setText("Stopped by an error.")

    def _on_cancelled(self) -> None:
        self._end_live_view()
        step = self.monitor.last_checkpoint_step
        where = f" at step {step}" if step is not None else ""
        self.phase_label.setText(f"Cancelled; checkpoint written{where}. Resume continues it.")

    def _on_finished(self) -> None:
        self.job = None
        self._timer.stop()
        self.refresh_view()
        if self.progress.maximum() == 0:
            self.progress.setRange(0, 1)
        self.form.set_running(False)
        self.check_folder()
        if self.failure is not None:
            self.error_notice.setVisible(True)  # the folder check must not hide the error
        self._update_buttons()

    def show_error(self, heading: str, message: str, details: str = "") -> None:
        # The engine's messages name `meaningbench train`'s flags: here, the dialog's fields.
        words = in_dialog_terms(message, TRAINING_TERMS)
        self.error_notice.show_text("error", heading, [words], details)

    # -- view ---------------------------------------------------------------------------

    def refresh_view(self) -> None:
        """Redraw from the monitor (the timer calls this; it is cheap when nothing changed)."""
        m = self.monitor
        if not self.curves.refresh(m) or not self.running:
            return
        if m.current is None or m.run_total == 0:
            if m.phase:
                self.phase_label.setText(m.phase[:1].upper() + m.phase[1:] + "…")
            return
        total, done = m.overall_total, m.overall_done
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(min(done, total))
        runs = f" · run {m.run_index + 1} of {m.n_runs}" if m.n_runs > 1 else ""
        epochs = self.request.epochs if self.request is not None else m.n_epochs
        # "Stop after" may end the run inside an epoch: then "of N epochs" would mislead.
        of_epochs = f" of {epochs}" if m.n_epochs == epochs else ""
        where = f"{m.current}{runs} · epoch {m.epoch}{of_epochs} · step {m.step} of {m.run_total}"
        self.phase_label.setText(
            f"{m.phase[:1].upper() + m.phase[1:]}… ({where})" if m.phase else f"Training {where}"
        )
        self.detail_label.setText(self._detail_text())

    def _detail_text(self) -> str:
        m = self.monitor
        parts = []
        per_step = m.seconds_per_step()
        if per_step is not None:
            parts.append(f"{per_step:.2f} s/step · about {format_duration(m.seconds_left())} left")
        curves = m.runs.get(m.current or "")
        if curves is not None and curves.smooth_loss:
            parts.append(f"training {loss_text(curves.smooth_loss[-1])}")
        if curves is not None and curves.best_val_loss is not None:
            parts.append(f"best validation {loss_text(curves.best_val_loss)}")
        if m.last_checkpoint_step is not None:
            parts.append(f"checkpoint at step {m.last_checkpoint_step}")
        return " · ".join(parts)

    def _update_buttons(self) -> None:
        running = self.running
        has_study = self.context.path is not None
        state = self.folder_state
        paused = state is not None and state.resumable
        self.start_button.setEnabled(
            has_study and not running and state is None and self.folder_problem is None
        )
        self.resume_button.setEnabled(has_study and not running and paused)
        self.cancel_button.setEnabled(running)
        tip = self.folder_problem or ("the folder holds a checkpoint: Resume" if paused else "")
        self.start_button.setToolTip(tip.capitalize() if tip else "Train with these options")

    def _refresh_battery(self) -> None:
        """An open metrics dialog lists the new `meaningbert@NAME` without being reopened."""
        parent = self.parentWidget()
        battery = parent.findChild(QDialog, "batteryDialog") if parent is not None else None
        refresh = getattr(battery, "refresh_metrics", None)
        if callable(refresh) and getattr(battery, "job", None) is None:
            refresh()
