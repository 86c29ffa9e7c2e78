"""The agreement and rater QC tab: three tables, refreshed with the bootstrap job, and a
fourth for the machine raters (an LLM judge stored as a rater) when the study has any."""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries.dashboard import AgreementResult, QCResult
from meaningbench.queries.raters import MACHINE_MARK, RaterCheck, machine_raters_frame
from meaningbench.queries.tables import table_csv, table_latex
from meaningbench.ui.dashboard.formats import (
    agreement_display,
    loo_display,
    machine_display,
    qc_display,
)
from meaningbench.ui.dashboard.panel import Panel
from meaningbench.ui.dashboard.tables import FrameTable
from meaningbench.ui.wording import counted

QC_NOTE = (
    "Appraise's test: each annotator's scores as z-scores, degraded control items paired "
    "with their originals, one-sided Mann–Whitney U (degraded lower); p < {p} passes. "
    "Identical controls should be rated high, unrelated ones low; repeat |Δ| is the mean "
    "absolute change between an item and its hidden repeat."
)
MACHINE_NOTE = (
    "A machine rater's ratings are a model's (meaningbench judge --as-rater): shown beside "
    "the people, never part of an item's human score nor of the figures above. r is with "
    "the mean of the named raters of the same items; α with it counts it as one more rater."
)


def _table_panel(title: str, name: str) -> tuple[Panel, FrameTable]:
    table = FrameTable(fit_rows=16, min_rows=MIN_ROWS)
    panel = Panel(title, table, formats=("csv", "tex"), name=name)
    panel.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    table.customContextMenuRequested.connect(
        lambda pos: panel.show_context_menu(table.viewport(), pos)
    )
    return panel, table


# Rows each table keeps however short the window: below that the tab scrolls.
MIN_ROWS = 5


class QualityPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.agreement: AgreementResult | None = None
        self.qc: QCResult | None = None
        self.summary_panel, self.summary = _table_panel("Agreement", "agreement")
        self.loo_panel, self.loo = _table_panel(
            "Each annotator against the others", "agreement-annotators"
        )
        self.qc_panel, self.qc_table = _table_panel("Rater quality control", "rater-qc")
        self.machines: list[RaterCheck] = []
        self.machine_panel, self.machine_table = _table_panel(
            f"{MACHINE_MARK} Machine raters, beside the people", "machine-raters"
        )
        self.machine_panel.set_exporter("csv", lambda p: table_csv(self._machine_frame(), p))
        self.machine_panel.set_exporter(
            "tex",
            lambda p: table_latex(self._machine_frame(), p, caption="Machine raters"),
        )
        self.machine_note = QLabel(MACHINE_NOTE)
        self.machine_note.setObjectName("mutedLabel")
        self.machine_note.setWordWrap(True)
        self.summary_panel.set_exporter(
            "csv", lambda p: table_csv(self._agreement().summary_frame(), p)
        )
        self.summary_panel.set_exporter(
            "tex",
            lambda p: table_latex(self._agreement().summary_frame(), p, caption="Agreement"),
        )
        self.loo_panel.set_exporter(
            "csv", lambda p: table_csv(self._agreement().annotators_frame(), p)
        )
        self.loo_panel.set_exporter(
            "tex",
            lambda p: table_latex(
                self._agreement().annotators_frame(),
                p,
                caption="Each annotator against the leave-one-out mean",
            ),
        )
        self.qc_panel.set_exporter("csv", lambda p: table_csv(self._qc(), p))
        self.qc_panel.set_exporter(
            "tex", lambda p: table_latex(self._qc(), p, caption="Rater quality control")
        )
        self.qc_note = QLabel()
        self.qc_note.setObjectName("mutedLabel")
        self.qc_note.setWordWrap(True)
        top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(self.summary_panel, 3, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.loo_panel, 2, Qt.AlignmentFlag.AlignTop)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addLayout(top)
        layout.addWidget(self.qc_panel)
        layout.addWidget(self.qc_note)
        layout.addWidget(self.machine_panel)
        layout.addWidget(self.machine_note)
        layout.addStretch(1)
        # On a short screen the tab scrolls: every table keeps MIN_ROWS rows in sight.
        self.scroll_area = QScrollArea()
        self.scroll_area.setObjectName("qualityScroll")
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll_area)
        self.set_results(None, None)

    def _agreement(self) -> AgreementResult:
        if self.agreement is None:
            raise RuntimeError("no agreement to export yet")
        return self.agreement

    def _machine_frame(self) -> pd.DataFrame:
        alphas = self.agreement.machine if self.agreement is not None else {}
        return machine_raters_frame(self.machines, alphas)

    def _show_machines(self) -> None:
        """The machine raters' table, shown only when the study has one."""
        has = bool(self.machines)
        self.machine_panel.setVisible(has)
        self.machine_note.setVisible(has)
        self.machine_panel.export_button.setEnabled(has)
        if has:
            frame, formats = machine_display(self._machine_frame())
            self.machine_table.set_frame(frame, formats, "machine rater")
            self.machine_panel.show_content()

    def _qc(self) -> QCResult:
        if self.qc is None:
            raise RuntimeError("no rater QC to export yet")
        return self.qc

    def set_results(
        self,
        agreement: AgreementResult | None,
        qc: QCResult | None,
        machines: list[RaterCheck] | None = None,
    ) -> None:
        self.agreement, self.qc = agreement, qc
        self.machines = list(machines or [])
        self._show_machines()
        if agreement is None or agreement.n_ratings == 0:
            text = "Computing…" if agreement is None else "No human ratings on this dimension yet."
            self.summary_panel.show_message(text)
            self.loo_panel.show_message(text)
        else:
            frame, formats = agreement_display(agreement)
            self.summary.set_frame(frame, formats, "statistic")
            self.summary_panel.show_content()
            if agreement.loo:
                frame, formats = loo_display(agreement)
                self.loo.set_frame(frame, formats, "annotator")
                self.loo_panel.show_content()
            elif agreement.not_shown:
                self.loo_panel.show_message(
                    f"{counted(agreement.n_anonymous, 'rating')} "
                    f"{'has' if agreement.n_anonymous == 1 else 'have'} no rater id: each annotator "
                    "against the others needs to know whose ratings are whose."
                )
            else:
                self.loo_panel.show_message("Needs items rated by two annotators or more.")
        for panel, has in (
            (self.summary_panel, agreement is not None),
            (self.loo_panel, agreement is not None),
            (self.qc_panel, qc is not None),
        ):
            panel.export_button.setEnabled(has)
        if qc is None:
            self.qc_panel.show_message("Computing…")
            self.qc_note.clear()
            return
        self.qc_note.setText(QC_NOTE.format(p=qc.p_threshold))
        if not qc.raters:
            anonymous = agreement is not None and agreement.n_anonymous > 0
            self.qc_panel.show_message(
                "Rater QC tests one named annotator's ratings; the ratings here have no rater ids."
                if anonymous
                else "No human annotator has rated this dimension yet."
            )
            return
        frame, formats = qc_display(qc)
        self.qc_table.set_frame(frame, formats, "annotator")
        self.qc_panel.show_content()
