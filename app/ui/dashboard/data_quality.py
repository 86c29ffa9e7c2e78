"""The Data quality tab: published labels against raw ratings, and the fix.

A thin skin over `meaningbench.jobs.audit`: the audit runs in the background, the table and the worst
mismatches show its result, and the Fix action previews what it would write before it
writes a new label set (the published labels stay). The label set the dashboard uses is
shown and can be changed here; the dashboard reloads when it changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.labels import AuditView, audit_job, choose_job, fix_job, preview_fix_job
from meaningbench.runtime.changes import StudyChanges
from meaningbench.ui.dashboard.tables import Fmt, FrameTable
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.ops.labels import AuditResult, FixResult
    from meaningbench.ui.context import StudyContext

WORST = 8
PUBLISHED = "(published labels)"


# The audit's group columns the tab has room for: the dimension and the ambiguous labels
# are left to the report and `meaningbench audit`.
SHOWN_COLUMNS = ["source file", "labels", "equal", "MAD", "Pearson", "other pair", "status"]


def audit_frame(view: AuditView) -> pd.DataFrame:
    """The audit table as shown: one row per label set and source file."""
    assert view.result is not None
    return view.result.group_frame()[SHOWN_COLUMNS]


class MismatchRow(QWidget):
    """One pair: its output, and on a 0–100 axis the raw ratings (dots), their mean (a bar)
    and the published label (a diamond)."""

    def __init__(self, output: str, label: float, mean: float, values: list[float]) -> None:
        super().__init__()
        self.label, self.mean, self.values = label, mean, [float(v) for v in values]
        self.setMinimumHeight(34)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        text = " ".join(output.split())
        self.setToolTip(
            f"{text}\npublished label {label:.2f}; "
            f"mean of {counted(len(self.values), 'rating')} {mean:.2f}"
        )
        self.text = text if len(text) <= 60 else text[:59] + "…"

    def paintEvent(self, _event: Any) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        w, h = self.width(), self.height()
        text_w = int(w * 0.45)
        p.setPen(self.palette().text().color())
        p.drawText(QRectF(0, 0, text_w - 8, h), Qt.AlignmentFlag.AlignVCenter, self.text)
        left, right, mid = text_w, w - 10, h / 2

        def x(v: float) -> float:
            return left + (right - left) * min(max(v, 0.0), 100.0) / 100.0

        p.setPen(QPen(self.palette().mid().color(), 1))
        p.drawLine(QPointF(left, mid), QPointF(right, mid))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(120, 120, 120, 150))
        for k, v in enumerate(self.values):
            p.drawEllipse(QPointF(x(v), mid - 6 + (k % 3) * 6), 3, 3)
        p.setPen(QPen(QColor(30, 100, 200), 3))
        p.drawLine(QPointF(x(self.mean), mid - 11), QPointF(x(self.mean), mid + 11))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(200, 40, 40))
        cx = x(self.label)
        p.drawPolygon(
            QPolygonF(
                [
                    QPointF(cx, mid - 8),
                    QPointF(cx + 6, mid),
                    QPointF(cx, mid + 8),
                    QPointF(cx - 6, mid),
                ]
            )
        )
        p.end()


IMPORTED_ONLY = "Raw ratings imported from rating files"


class DataQualityPanel(QWidget):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.view: AuditView | None = None
        # The raw rating sources the audit compares with; None: the engine's default (the
        # ratings imported from rating files, never the study's own raters).
        self.raters: list[str] | None = None
        top = self._label_set_row()
        against = self._against_row()
        legend = self._result_widgets()
        fix = self._fix_row()
        self._lay_out(top, against, legend, fix)
        context.study_opened.connect(lambda _s: self.refresh())
        context.study_changed.connect(self._on_study_changed)
        self._show_message("Open a study to audit its labels.")
        if context.study is not None:
            self.refresh()

    # -- building ------------------------------------------------------------------------
    def _label_set_row(self) -> QHBoxLayout:
        """The label set in use, and the one to use instead."""
        self.in_use = QLabel()
        self.in_use.setTextFormat(Qt.TextFormat.RichText)
        self.sets = QComboBox()
        self.sets.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.sets.setToolTip("The label set the dashboard and the commands use by default")
        self.use_button = QPushButton("Use for analyses")
        self.use_button.clicked.connect(self._use)
        top = QHBoxLayout()
        top.addWidget(self.in_use, 1)
        top.addWidget(self.sets)
        top.addWidget(self.use_button)
        return top

    def _against_row(self) -> QHBoxLayout:
        """Which raw ratings the audit compares the published labels with."""
        self.against = QComboBox()
        self.against.setObjectName("auditAgainst")
        self.against.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.against.setToolTip(
            "The raw ratings the published labels are checked against. The study's own "
            "raters rated for this study, not for the published labels: they are left out "
            "unless chosen here."
        )
        self.against.addItem(IMPORTED_ONLY, None)
        self.against.activated.connect(self._on_against)
        against = QHBoxLayout()
        against.addWidget(QLabel("Compare with:"))
        against.addWidget(self.against)
        against.addStretch(1)
        return against

    def _result_widgets(self) -> QLabel:
        """The audit's message, table, diagnoses and worst mismatches; returns the legend."""
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.table = FrameTable(fit_rows=10)
        self.diagnoses = QLabel()
        self.diagnoses.setWordWrap(True)
        self.diagnoses.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        legend = QLabel(
            "Worst mismatches: <span style='color:#c82828'>◆</span> published label, "
            "<span style='color:#1e64c8'>|</span> mean of the raw ratings, ● raw ratings "
            "(0–100)."
        )
        self.worst = QWidget()
        self.worst_layout = QVBoxLayout(self.worst)
        self.worst_layout.setContentsMargins(0, 0, 0, 0)
        return legend

    def _fix_row(self) -> QHBoxLayout:
        """The new label set a fix writes, and the button that previews it."""
        self.fix_name = QLineEdit("corrected")
        self.fix_name.setToolTip("Name of the new label set")
        self.keep = QCheckBox("copy published labels of pairs without raw ratings")
        # Replacing published labels in every analysis is a decision of its own: never
        # ticked for the user.
        self.choose = QCheckBox("use it for analyses")
        self.choose.setChecked(False)
        self.fix_button = QPushButton("Fix…")
        self.fix_button.setToolTip(
            "Preview, then add a label set holding the raw means (nothing is overwritten)"
        )
        self.fix_button.clicked.connect(self._preview)
        fix = QHBoxLayout()
        fix.addWidget(QLabel("New label set:"))
        fix.addWidget(self.fix_name)
        fix.addWidget(self.keep)
        fix.addWidget(self.choose)
        fix.addStretch(1)
        fix.addWidget(self.fix_button)
        return fix

    def _lay_out(
        self, top: QHBoxLayout, against: QHBoxLayout, legend: QLabel, fix: QHBoxLayout
    ) -> None:
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addLayout(top)
        layout.addLayout(against)
        layout.addWidget(self.message)
        layout.addWidget(self.table)
        layout.addWidget(self.diagnoses)
        layout.addLayout(fix)
        layout.addWidget(legend)
        layout.addWidget(self.worst)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

    # -- jobs ----------------------------------------------------------------------------
    def _on_study_changed(self, changes: StudyChanges) -> None:
        # The audit compares label sets with the raw ratings imported from files.
        if changes.everything or changes.label_sets:
            self.refresh()

    def refresh(self) -> None:
        path = self.context.path
        if path is None:
            self._show_message("Open a study to audit its labels.")
            return
        self._show_message("Auditing the labels…")
        self.context.runner.start(
            audit_job(path, raters=self.raters),
            title="Label audit",
            on_result=self.show_view,
            on_failed=lambda failure: self._show_message(failure.message),
        )

    def _preview(self) -> None:
        path = self.context.path
        if path is None:
            return
        name = self.fix_name.text().strip()
        self.context.runner.start(
            preview_fix_job(path, name, self.keep.isChecked(), self.raters),
            title="Fix preview",
            on_result=lambda plan: self._confirm(name, plan),
        )

    def _confirm(self, name: str, plan: FixResult) -> None:
        text = (
            f"Add the label set “{name}” with {counted(plan.n_written, 'label')}: "
            f"{plan.n_from_raw:,} raw means"
        )
        if plan.n_copied:
            text += f" and {plan.n_copied:,} published labels of pairs without raw ratings"
        text += "."
        if plan.items_without:
            text += f"\n{plan.items_without:,} labelled items get no label in it."
        text += "\nThe published labels stay as they are."
        answer = QMessageBox.question(self, "Fix labels", text)
        if answer != QMessageBox.StandardButton.Yes or self.context.path is None:
            return
        self.context.runner.start(
            fix_job(
                self.context.path,
                name,
                self.keep.isChecked(),
                self.choose.isChecked(),
                self.raters,
            ),
            title="Fix labels",
        )

    def _on_against(self, index: int) -> None:
        raters = self.against.itemData(index)
        self.raters = list(raters) if raters else None
        self.refresh()

    def _show_against(self, result: AuditResult | None) -> None:
        """The choice of raw sources: the imported files, or those and the study's raters."""
        self.against.clear()
        self.against.addItem(IMPORTED_ONLY, None)
        own = result.own_raters if result is not None else []
        if own:
            names = ", ".join(own)
            everyone = [*result.imported_raters, *own] if result is not None else own
            self.against.addItem(f"{IMPORTED_ONLY} and the study's own raters ({names})", everyone)
            if self.raters is not None:
                self.against.setCurrentIndex(1)

    def _use(self) -> None:
        path = self.context.path
        if path is None:
            return
        name = self.sets.currentData()
        self.context.runner.start(
            choose_job(path, name),
            title="Label set",
        )

    # -- display -------------------------------------------------------------------------
    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()
        self.table.hide()
        self.diagnoses.clear()
        self._clear_worst()

    def _clear_worst(self) -> None:
        while self.worst_layout.count():
            item = self.worst_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()

    def show_view(self, view: AuditView) -> None:
        self.view = view
        used = ", ".join(view.in_use) or "none"
        self.in_use.setText(f"The dashboard uses the label set: <b>{used}</b>")
        self.sets.clear()
        self.sets.addItem(PUBLISHED, None)
        for s in view.sets:
            if s.from_audit:
                self.sets.addItem(s.name, s.name)
                if view.in_use == [s.name]:
                    self.sets.setCurrentIndex(self.sets.count() - 1)
        self.fix_button.setEnabled(view.result is not None and bool(view.result.groups))
        result = view.result
        self._show_against(result)
        if result is None or not result.groups:
            why = view.why_not or "No label matched a pair with raw ratings in this study."
            notes = result.notes if result is not None else []
            self._show_message("\n".join([why, *notes]))
            return
        self.message.setText(
            f"Each published label against the mean of the raw ratings of the same pair "
            f"(tolerance {result.tolerance:g} on 0–100; texts matched after normalisation: "
            f"{result.normalisation})."
        )
        counts = {c: Fmt("int") for c in ("labels", "other pair")}
        self.table.set_frame(audit_frame(view), counts, index_label="label set")
        self.table.show()
        lines = []
        for g in result.groups:
            if g.mapping:
                lines.append(f"{g.label_set} vs {g.source}: {g.mapping_text()}")
        lines += result.notes
        unmatched = sum(result.unmatched.values())
        if unmatched:
            have = "has" if unmatched == 1 else "have"
            lines.append(
                f"{counted(unmatched, 'label')} {have} no raw ratings of their pair in the study."
            )
        self.diagnoses.setText("\n".join(lines))
        self._clear_worst()
        table = result.labels
        diff = pd.to_numeric(table["diff"], errors="coerce").abs()
        top = table.assign(absdiff=diff).dropna(subset=["absdiff"])
        top = top[top["absdiff"] > result.tolerance].sort_values("absdiff", ascending=False)
        for r in top.head(WORST).itertuples():
            self.worst_layout.addWidget(
                MismatchRow(str(r.output), float(r.label), float(r.raw_mean), list(r.raw_values))
            )
