"""Make top-up kits…: the raters who get the items still short of their k ratings, and
the folder the kits go to, which short items first and how many; the kits are
`meaningbench kit --top-up [--adaptive …] [--items N]`'s
(`meaningbench.ops.campaign.top_up_job`, run by the window's job runner)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.campaign import MadeKit, TopUpChoice, top_up_job
from meaningbench.queries.campaign import Campaign, RaterProgress
from meaningbench.ui.dialogs.dialog_terms import KIT_TERMS, in_dialog_terms
from meaningbench.ui.widgets import choice_combo
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.ui.context import StudyContext
    from meaningbench.ui.workers import JobFailure, JobHandle


# `kit --top-up --adaptive`'s choices, as the dialog words them.
ORDERS = (
    ("All short items, in the study's order", None),
    ("First where the metrics' ranking is least settled", "metrics"),
    ("First where the systems' ranking is least settled", "systems"),
)


def _finished(r: RaterProgress) -> bool:
    return r.assigned > 0 and r.done >= r.assigned


def _rater_item(r: RaterProgress) -> QListWidgetItem:
    item = QListWidgetItem(f"{r.rater}  ·  {r.done} of {r.assigned} done")
    item.setData(Qt.ItemDataRole.UserRole, r.rater)
    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
    # Raters who finished their queue are the likely helpers; the lead decides.
    item.setCheckState(Qt.CheckState.Checked if _finished(r) else Qt.CheckState.Unchecked)
    return item


class TopUpDialog(QDialog):
    def __init__(self, context: StudyContext, figures: Campaign, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("topUpDialog")
        self.setWindowTitle("Make top-up kits")
        self.context = context
        self.job: JobHandle | None = None
        self.made: list[MadeKit] = []
        study = context.path
        assert study is not None, "the page opens the dialog on an open study"
        self.study_path = study

        self.intro = QLabel()
        self.intro.setObjectName("topUpIntro")
        self.intro.setWordWrap(True)
        self.raters = QListWidget()
        self.raters.setObjectName("topUpRaters")
        self.raters.itemChanged.connect(lambda _i: self._update_button())
        self.folder = QLineEdit(str(study.parent / "kits"))
        self.folder.setObjectName("topUpFolder")
        self.folder.textChanged.connect(lambda _t: self._update_button())
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        folder_row = QHBoxLayout()
        folder_row.addWidget(QLabel("Folder"))
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(browse)
        self.order = choice_combo(
            "topUpOrder",
            [(target, label) for label, target in ORDERS],
            "Adaptive: the items chosen from the ratings collected so far, where the "
            "ranking is least settled (the first round is never adaptive)",
        )
        self.items = QSpinBox()
        self.items.setObjectName("topUpItems")
        self.items.setRange(0, 1_000_000)
        self.items.setSpecialValueText("all")
        order_row = QHBoxLayout()
        order_row.addWidget(QLabel("Items"))
        order_row.addWidget(self.order, 1)
        order_row.addWidget(QLabel("at most"))
        order_row.addWidget(self.items)
        self.status = QLabel()
        self.status.setObjectName("topUpStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.make_button = QPushButton("Make kits")
        self.make_button.setDefault(True)
        self.make_button.clicked.connect(self.start)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.make_button)
        buttons.addWidget(close)

        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(QLabel("Raters"))
        layout.addWidget(self.raters, 1)
        layout.addLayout(order_row)
        layout.addLayout(folder_row)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.resize(500, 340)
        self.show_figures(figures)

    def show_figures(self, figures: Campaign) -> None:
        """The short items and each rater's progress as the page now reads them (after a
        top-up, the raters' queues have grown); the ticks the lead set stay."""
        short = len(figures.short)
        self.intro.setText(
            f"{counted(short, 'item')} {'is' if short == 1 else 'are'} short of k = "
            f"{figures.k} {'rating' if figures.k == 1 else 'ratings'}. Each goes to as many of the raters below as it lacks, never "
            "to a rater who rated it or already has it in their queue. Each chosen rater gets "
            "one kit file; the raters who finished their queue are ticked."
        )
        ticked = {
            str(item.data(Qt.ItemDataRole.UserRole)): item.checkState()
            for item in (self.raters.item(row) for row in range(self.raters.count()))
        }
        self.raters.blockSignals(True)
        self.raters.clear()
        for r in figures.raters:
            item = _rater_item(r)
            if r.rater in ticked:
                item.setCheckState(ticked[r.rater])
            self.raters.addItem(item)
        self.raters.blockSignals(False)
        self._update_button()

    def chosen(self) -> list[str]:
        out = []
        for row in range(self.raters.count()):
            item = self.raters.item(row)
            if item.checkState() == Qt.CheckState.Checked:
                out.append(str(item.data(Qt.ItemDataRole.UserRole)))
        return out

    def set_chosen(self, names: list[str]) -> None:
        for row in range(self.raters.count()):
            item = self.raters.item(row)
            on = item.data(Qt.ItemDataRole.UserRole) in names
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def choice(self) -> TopUpChoice:
        """Which short items and how many, as chosen (`kit --adaptive`, `--items`)."""
        target = self.order.currentData()
        return TopUpChoice(target, self.items.value() or None)

    def _update_button(self) -> None:
        ready = bool(self.chosen()) and bool(self.folder.text().strip()) and self.job is None
        self.make_button.setEnabled(ready)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder for the kits", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def start(self) -> JobHandle | None:
        raters, text = self.chosen(), self.folder.text().strip()
        if not raters or not text or self.job is not None:
            return None
        out = Path(text).expanduser()
        self.status.setText(f"Making top-up kits for {', '.join(raters)}…")
        self.job = self.context.runner.start(
            top_up_job(self.study_path, raters, out, self.choice()),
            title="Making top-up kits",
            on_result=self._on_result,
            on_failed=self._on_failed,
        )
        self.job.finished.connect(self._on_finished)
        self._update_button()
        return self.job

    def _on_result(self, made: list[MadeKit]) -> None:
        self.made = made
        folder = made[0].path.parent if made else Path(self.folder.text())
        lines = [f"{m.path.name}: {m.rater}, {counted(m.items, 'item')}" for m in made]
        self.status.setText(
            f"Wrote {counted(len(made), 'top-up kit')} to {folder}:\n"
            + "\n".join(lines)
            + "\nSend each rater their file, then collect the returned files."
        )

    def _on_failed(self, failure: JobFailure) -> None:
        self.status.setText(f"No kit was made: {in_dialog_terms(failure.message, KIT_TERMS)}")

    def _on_finished(self) -> None:
        self.job = None
        self._update_button()
