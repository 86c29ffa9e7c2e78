"""The status bar: the study's name and counts, and the job panel (what runs, and its cancel)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QHBoxLayout,
    QMenu,
    QProgressBar,
    QSizePolicy,
    QStatusBar,
    QToolButton,
    QWidget,
)

from meaningbench.runtime import Progress
from meaningbench.runtime.rate import RateMeter, format_duration
from meaningbench.ui.icons import themed_icon
from meaningbench.ui.widgets import ElidedLabel
from meaningbench.ui.wording import counted
from meaningbench.ui.workers import JobHandle, JobRunner

if TYPE_CHECKING:
    from meaningbench.queries.study import StudyCounts


def _titled(title: str, line: str) -> str:
    """`title: line`, once: a job whose own messages start with its title ("Sanity checks:
    building the pairs") is not named twice."""
    return line if line.startswith(title) else f"{title}: {line}"


def _job_line(handle: JobHandle) -> str:
    p = handle.last_progress
    if handle.ctx.cancelled:
        return f"{handle.title}: cancelling…"
    if p is not None and p.total:
        return f"{handle.title}: {p.done:,}/{p.total:,}"
    return handle.title


class JobIndicator(QWidget):
    """The job panel, the app's rendering of job contexts: the most recent running job's
    title, a bar, time left or its latest log line, and a cancel button; with several
    jobs running, a list of them, each with its cancel."""

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("jobIndicator")
        self.runner = runner
        # A job's line can name a long metric run: it is shortened, never the window widened.
        self.label = ElidedLabel()
        self.label.setObjectName("jobLine")
        self.label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(180)
        self.bar.setTextVisible(False)
        self.bar.setFixedHeight(12)
        self.cancel_button = QToolButton()
        self.cancel_button.setIcon(themed_icon("cancel"))
        self.cancel_button.setToolTip("Cancel this job (finished work is kept)")
        self.cancel_button.setAutoRaise(True)
        self.cancel_button.clicked.connect(self._cancel)
        # Every running job, each with its cancel (shown while more than one runs).
        self.jobs_button = QToolButton()
        self.jobs_button.setObjectName("runningJobs")
        self.jobs_button.setToolTip("The jobs running now; choose one to cancel it")
        self.jobs_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.jobs_menu = QMenu(self.jobs_button)
        self.jobs_menu.aboutToShow.connect(self._fill_jobs_menu)
        self.jobs_button.setMenu(self.jobs_menu)
        self.jobs_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.setSpacing(6)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel_button)
        layout.addWidget(self.jobs_button)
        self._handle: JobHandle | None = None
        self._meter = RateMeter()
        runner.job_started.connect(self._on_started)
        runner.job_finished.connect(self._on_finished)
        self.hide()

    @property
    def handle(self) -> JobHandle | None:
        return self._handle

    def _on_started(self, handle: JobHandle) -> None:
        handle.progress.connect(lambda p, h=handle: self._on_progress(h, p))
        handle.log.connect(lambda line, h=handle: self._on_log(h, line))
        handle.cancelling.connect(lambda h=handle: self._on_log(h, "cancelling…"))
        self._show(handle)

    def _show_count(self) -> None:
        running = self.runner.active
        self.jobs_button.setText(counted(len(running), "job"))
        self.jobs_button.setVisible(len(running) > 1)

    def _fill_jobs_menu(self) -> None:
        """One entry per running job, newest first; choosing one cancels it."""
        self.jobs_menu.clear()
        for handle in reversed(self.runner.active):
            action = self.jobs_menu.addAction(themed_icon("cancel"), _job_line(handle))
            action.setToolTip(f"Cancel {handle.title} (finished work is kept)")
            action.setEnabled(not handle.ctx.cancelled)
            action.triggered.connect(handle.cancel)

    def _show(self, handle: JobHandle) -> None:
        """Follow `handle` (already connected when it started)."""
        self._handle = handle
        self._meter.reset()
        self.label.setText(handle.title)
        self.bar.setRange(0, 0)
        self._show_count()
        self.show()

    def _on_progress(self, handle: JobHandle, p: Progress) -> None:
        if handle is not self._handle:
            return
        if p.total:
            self.bar.setRange(0, p.total)
            self.bar.setValue(min(p.done, p.total))
            self._meter.add(time.monotonic(), p.done)
            left = self._meter.eta_s(p.total)
            suffix = f" · {format_duration(left)} left" if left is not None else ""
            self.label.setText(f"{handle.title}: {p.done:,}/{p.total:,}{suffix}")
        else:
            self.bar.setRange(0, 0)
            self.label.setText(_titled(handle.title, p.message) if p.message else handle.title)

    def _on_log(self, handle: JobHandle, line: str) -> None:
        if handle is self._handle:
            self.label.setText(_titled(handle.title, line))

    def _on_finished(self, handle: JobHandle) -> None:
        self._show_count()
        if handle is not self._handle:
            return
        others = self.runner.active
        if others:
            self._show(others[-1])
            return
        self._handle = None
        self.hide()

    def _cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()


class MainStatusBar(QStatusBar):
    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainStatusBar")
        # The study's name and counts are shortened too when the window is narrow.
        self.study_label = ElidedLabel()
        self.study_label.setObjectName("statusStudy")
        self.study_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.counts_label = ElidedLabel()
        self.counts_label.setObjectName("statusCounts")
        self.jobs = JobIndicator(runner)
        self.addWidget(self.study_label)
        self.addWidget(self.counts_label, 1)
        self.addPermanentWidget(self.jobs)

    def set_study(self, name: str, path: str) -> None:
        self.study_label.setText(name)
        self.study_label.setToolTip(path)

    def set_counts(self, counts: StudyCounts | None) -> None:
        self.counts_label.setText("" if counts is None else counts.summary())

    def clear_study(self) -> None:
        self.study_label.setText("No study open")
        self.study_label.setToolTip("")
        self.counts_label.setText("")
