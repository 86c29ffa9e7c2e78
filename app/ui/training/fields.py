"""Small input widgets of the training form: a learning-rate box, a model picker, seeds."""

from __future__ import annotations

import math
import re

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from meaningbench.errors import UserError
from meaningbench.queries.training import (
    BETWEEN_EXACT,
    BETWEEN_LINEAR,
    EMBEDDED_LABEL,
    OPUSPARCUS,
    LabelMap,
    describe_between,
    format_label_map,
    parse_label_map,
)
from meaningbench.ui.wording import counted

# Learning rates span orders of magnitude: the arrows walk a 1-2-5 ladder, as one tunes them.
_LADDER = sorted(m * 10.0**e for e in range(-9, 1) for m in (1, 2, 5))


class LearningRateSpin(QDoubleSpinBox):
    """A spin box showing `5e-05` rather than `0.00005000`, stepping 1 → 2 → 5 → 10."""

    def __init__(self, value: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDecimals(12)  # the box must not round what the user typed
        self.setRange(1e-9, 1.0)
        self.setValue(value)
        self.setKeyboardTracking(False)

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt override
        return f"{value:g}"

    def valueFromText(self, text: str) -> float:  # noqa: N802 - Qt override
        try:
            return float(text.strip())
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        stripped = text.strip()
        try:
            value = float(stripped)
        except ValueError:
            # "5e-" or "0." on the way to a number are fine while typing.
            partial = re.fullmatch(r"[0-9]*\.?[0-9]*(e[-+]?[0-9]*)?", stripped, re.IGNORECASE)
            state = QValidator.State.Intermediate if partial else QValidator.State.Invalid
            return state, text, pos
        ok = self.minimum() <= value <= self.maximum() and math.isfinite(value)
        return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate), text, pos

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt override
        value = self.value()
        for _ in range(abs(steps)):
            if steps > 0:
                value = next((v for v in _LADDER if v > value * (1 + 1e-9)), value)
            else:
                value = next((v for v in reversed(_LADDER) if v < value * (1 - 1e-9)), value)
        self.setValue(value)


class ModelPicker(QWidget):
    """The base encoder: the embedded MiniLM, a hub id typed in, or a local model folder."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QComboBox()
        self.combo.setObjectName("baseModelCombo")
        self.combo.setEditable(True)
        self.combo.addItem(EMBEDDED_LABEL)
        self.combo.setToolTip(
            "The encoder to fine-tune: the embedded MiniLM (works offline), a local model "
            "folder, or a Hugging Face id already in the local cache"
        )
        self.combo.setMinimumContentsLength(18)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.browse = QPushButton("Folder…")
        self.browse.setToolTip("Choose a local model folder (with a config.json)")
        self.browse.clicked.connect(self._browse)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.combo, 1)
        row.addWidget(self.browse)

    def value(self) -> str | None:
        """None for the embedded encoder (the request's own default)."""
        text = self.combo.currentText().strip()
        return None if text in ("", EMBEDDED_LABEL) else text

    def set_value(self, base: str | None) -> None:
        self.combo.setCurrentText(EMBEDDED_LABEL if base is None else base)
        line = self.combo.lineEdit()
        if line is not None:
            line.setCursorPosition(0)  # the start of a long name says more than its end

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Base model folder")
        if folder:
            self.set_value(folder)


class FolderField(QWidget):
    """A folder path with a picker; the picker may name a folder that does not exist yet."""

    def __init__(self, caption: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption = caption
        self.edit = QLineEdit()
        self.edit.setObjectName("outDirEdit")
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self._browse)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.browse)

    def text(self) -> str:
        return self.edit.text().strip()

    def set_text(self, text: str) -> None:
        self.edit.setText(text)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.caption, self.text())
        if folder:
            self.set_text(folder)


def parse_seeds(text: str) -> tuple[int, ...]:
    """`0`, `0 1 2` or `0, 1, 2` → (0, 1, 2); UserError for anything else."""
    parts = [p for p in re.split(r"[\s,;]+", text.strip()) if p]
    if not parts:
        raise UserError("give at least one seed (a whole number, e.g. 0)")
    try:
        seeds = tuple(int(p) for p in parts)
    except ValueError:
        raise UserError(f"seeds are whole numbers separated by spaces, not {text!r}") from None
    if len(set(seeds)) != len(seeds):
        raise UserError("the seeds must differ from each other")
    return seeds


class LabelMapField(QWidget):
    """The bi-encoder's rating mapping table as `--label-map` writes it, with the
    `--label-between` choice beside it, checked as it is typed: the line below says what the
    map does, or what is wrong with it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = QLineEdit()
        self.edit.setObjectName("labelMapEdit")
        self.edit.setPlaceholderText("linear")
        self.edit.setToolTip(
            "Which cosine (0–1) each rating means, as SCORE=TARGET entries, e.g. the "
            f"Opusparcus mapping {OPUSPARCUS}. Empty or 'linear': the dimension's scale "
            "rescaled to 0–1. A rating the table does not list stops the training and names "
            "its item, unless 'Linear between' is ticked."
        )
        self.linear_between = QCheckBox("Linear between")
        self.linear_between.setObjectName("labelBetweenCheck")
        self.linear_between.setToolTip(
            "Read the table piecewise-linearly: a rating between two listed ones gets the "
            "cosine on the straight line between theirs (e.g. 62.5 halfway between 50=0.4 and "
            "75=0.7 → 0.55). For continuous scores such as CSMD's 0–100 means, which no table "
            "can list. A rating outside the listed range still stops the training. Unticked, "
            "the table is exact: every rating must be listed."
        )
        self.opusparcus = QPushButton("Opusparcus")
        self.opusparcus.setToolTip(f"Fill in the Opusparcus mapping: {OPUSPARCUS}")
        self.opusparcus.clicked.connect(lambda: self.edit.setText(OPUSPARCUS))
        self.status = QLabel("")
        self.status.setObjectName("labelMapStatus")
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.linear_between)
        row.addWidget(self.opusparcus)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addLayout(row)
        box.addWidget(self.status)
        self.edit.textChanged.connect(lambda _t: self._check())
        self.linear_between.toggled.connect(lambda _b: self._check())
        self._check()

    def value(self) -> LabelMap | None:
        """The table, or None for linear rescaling; UserError for a map that cannot be read."""
        return parse_label_map(self.edit.text())

    def between(self) -> str:
        """How the table reads a rating it does not list; a table is needed to read between."""
        try:
            table = self.value()
        except UserError:
            table = None
        linear = self.linear_between.isChecked() and table is not None
        return BETWEEN_LINEAR if linear else BETWEEN_EXACT

    def set_value(self, label_map: LabelMap | None, between: str = BETWEEN_EXACT) -> None:
        self.linear_between.setChecked(between == BETWEEN_LINEAR)
        self.edit.setText("" if label_map is None else format_label_map(label_map))

    def error(self) -> str | None:
        try:
            self.value()
        except UserError as exc:
            return str(exc)
        return None

    def _check(self) -> None:
        error = self.error()
        rows = None if error is not None else self.value()
        # Only a table has rows to read between; linear rescaling is linear throughout.
        self.linear_between.setEnabled(rows is not None)
        if error is not None:
            self.status.setObjectName("labelMapStatus")
            self.status.setProperty("role", "error")
            self.status.setText(error)
        else:
            self.status.setObjectName("mutedLabel")
            self.status.setProperty("role", "")
            self.status.setText(
                "Linear: scale minimum → 0, maximum → 1"
                if rows is None
                else f"{counted(len(rows), 'rating')} mapped ({describe_between(self.between())}): "
                + ", ".join(f"{s:g} → {t:g}" for s, t in rows)
            )
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)
