"""The training options, as `meaningbench train` has them, turned into a `TrainRequest`.

The form starts from a default `TrainRequest`, so the dialog and the command line train
the same recipe unless the user changes something. For a resume the settings that decide
the weights are filled from the saved request and locked; only the runtime ones (device,
threads, model name) stay editable, as `--resume` allows on the command line.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from meaningbench.errors import UserError
from meaningbench.queries.training import (
    AUGMENTATIONS,
    BETWEEN_EXACT,
    BI_ENCODER,
    CROSS_ENCODER,
    DEFAULT_AUGMENT_BY_KIND,
    MIN_RATED_SHARE,
    TrainRequest,
)
from meaningbench.settings import DEVICE_CHOICES
from meaningbench.ui.training.fields import (
    FolderField,
    LabelMapField,
    LearningRateSpin,
    ModelPicker,
    parse_seeds,
)

AUGMENT_TIPS = {
    "identical": "Add (text, same text) pairs rated 100",
    "unrelated": "Add (text, unrelated sentence of another source) pairs rated 0",
    "swap": "Add every pair in both orders, (output, source) too",
}
IDENTICAL_SHARE_TIP = (
    "The share of the training examples that the identical pairs make up. At the minimum: "
    "one identical and one unrelated pair per source, as models trained before this option "
    "learned"
)
UNRELATED_SHARE_TIP = "The share of the training examples that the unrelated pairs make up"
PER_SOURCE_LABEL = "one per source"
TARGETS = (
    (False, "Mean rating"),
    (True, "Per-rater z-scores (re-expressed on 0–100)"),
)
KIND_LABELS = (
    (CROSS_ENCODER, "Cross-encoder (MeaningBERT)"),
    (BI_ENCODER, "Bi-encoder (Sentence-BERT)"),
)
KIND_TIPS = {
    CROSS_ENCODER: "Reads the (source, output) pair together; its output is the 0–100 score. "
    "The battery runs it as meaningbert@NAME",
    BI_ENCODER: "Embeds each text alone (mean pooling) and learns the cosine of the two; "
    "the battery runs it as sbert_cosine@NAME and as the basis of bertscore@NAME",
}


def _share_spin(prefix: str, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setDecimals(2)
    box.setRange(0.0, 1.0 - MIN_RATED_SHARE)
    box.setSingleStep(0.05)
    box.setPrefix(prefix)
    box.setToolTip(tip)
    return box


def _spin(low: int, high: int, value: int, special: str | None = None) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    if special is not None:
        box.setSpecialValueText(special)  # shown at the minimum, which means "not set"
    return box


class TrainingForm(QWidget):
    out_dir_changed = Signal(str)

    def __init__(self, dimensions: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trainingForm")
        defaults = TrainRequest(study=Path(), out_dir=Path())
        self._locked = False

        augment_row = self._build_data_fields(dimensions, defaults)
        self._build_training_fields(defaults)
        self._build_output_fields()
        self._build_advanced_fields(defaults)
        data, training, output = self._build_groups(augment_row)
        self._build_more_options()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for group in (data, training, output):
            layout.addWidget(group)
        layout.addWidget(self.more, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.advanced)
        layout.addStretch(1)
        self._learning_widgets: list[QWidget] = [
            self.kind, self.label_map, self.dimension, self.target, *self.augment.values(),
            self.identical_share, self.unrelated_share, self.base, self.epochs,
            self.lr, self.batch, self.folds, self.seeds, self.max_length, self.eval_steps,
            self.checkpoint_steps, self.max_steps, self.split_seed,
        ]  # fmt: skip
        self.set_request(defaults)

    def _build_data_fields(self, dimensions: list[str], defaults: TrainRequest) -> QHBoxLayout:
        self.kind = QComboBox()
        self.kind.setObjectName("modelKindCombo")
        for kind, label in KIND_LABELS:
            self.kind.addItem(label, kind)
            self.kind.setItemData(
                self.kind.count() - 1, KIND_TIPS[kind], Qt.ItemDataRole.ToolTipRole
            )
        self.kind.currentIndexChanged.connect(lambda _i: self._on_kind())
        self.label_map = LabelMapField()
        self.dimension = QComboBox()
        self.dimension.setObjectName("dimensionCombo")
        self.dimension.addItems(dimensions or [defaults.dimension])
        self.target = QComboBox()
        for z, label in TARGETS:
            self.target.addItem(label, z)
        self.target.setToolTip(
            "Learn the per-item mean rating, or the mean of each rater's z-scores (which "
            "removes raters' habits of rating high or low), mapped back onto 0–100"
        )
        self.augment = {name: QCheckBox(name) for name in AUGMENTATIONS}
        augment_row = QHBoxLayout()
        augment_row.setContentsMargins(0, 0, 0, 0)
        for name, box in self.augment.items():
            box.setToolTip(AUGMENT_TIPS[name])
            augment_row.addWidget(box)
            box.toggled.connect(lambda _on: self._show_share())
        self.identical_share = _share_spin("identical ", IDENTICAL_SHARE_TIP)
        self.identical_share.setObjectName("identicalShareSpin")
        # The minimum is the rule of one pair per source, for both kinds of pair.
        self.identical_share.setSpecialValueText(PER_SOURCE_LABEL)
        self.unrelated_share = _share_spin("unrelated ", UNRELATED_SHARE_TIP)
        self.unrelated_share.setObjectName("unrelatedShareSpin")
        self.identical_share.valueChanged.connect(lambda _v: self._show_share())
        augment_row.addWidget(QLabel("  shares:"))
        augment_row.addWidget(self.identical_share)
        augment_row.addWidget(self.unrelated_share)
        augment_row.addStretch(1)
        return augment_row

    def _build_training_fields(self, defaults: TrainRequest) -> None:
        self.base = ModelPicker()
        self.epochs = _spin(1, 1000, defaults.epochs)
        self.lr = LearningRateSpin(defaults.learning_rate)
        self.lr.setObjectName("learningRateSpin")
        self.batch = _spin(1, 4096, defaults.batch_size)
        self.folds = _spin(1, 50, 1, "none (hold-out split)")
        self.folds.setToolTip("k-fold cross-validation by source group; every item is tested once")
        self.seeds = QLineEdit("0")
        self.seeds.setToolTip("One run per seed, e.g. 0 1 2; the run with the best validation wins")
        self.device = QComboBox()
        for d in DEVICE_CHOICES:
            self.device.addItem(d, d)

    def _build_output_fields(self) -> None:
        self.out_dir = FolderField("Output folder for the model")
        self.out_dir.edit.textChanged.connect(self._on_out_dir)
        self.name = QLineEdit()
        self.name.setObjectName("modelNameEdit")

    def _build_advanced_fields(self, defaults: TrainRequest) -> None:
        self.max_length = _spin(8, 8192, defaults.max_length)
        self.eval_steps = _spin(0, 1_000_000, 0, "at each epoch's end")
        self.eval_steps.setToolTip("Also validate every N steps: a denser validation curve")
        self.checkpoint_steps = _spin(1, 1_000_000, defaults.checkpoint_steps)
        self.max_steps = _spin(0, 10_000_000, 0, "all epochs")
        self.max_steps.setToolTip("Stop each run after N optimizer steps (a quick look)")
        self.split_seed = _spin(0, 1_000_000, defaults.split_seed)
        self.threads = _spin(0, 256, 0, "automatic")
        self.keep = QCheckBox("Keep every run's checkpoints")

    def _build_groups(self, augment_row: QHBoxLayout) -> tuple[QGroupBox, QGroupBox, QGroupBox]:
        data = QGroupBox("Data")
        form = QFormLayout(data)
        form.addRow("Model", self.kind)
        form.addRow("Dimension", self.dimension)
        form.addRow("Target", self.target)
        form.addRow("Rating → cosine", self.label_map)
        self.label_map_label = form.labelForField(self.label_map)
        form.addRow("Augmentation", augment_row)
        training = QGroupBox("Training")
        form = QFormLayout(training)
        form.addRow("Base model", self.base)
        form.addRow("Epochs", self.epochs)
        form.addRow("Learning rate", self.lr)
        form.addRow("Batch size", self.batch)
        form.addRow("Folds", self.folds)
        form.addRow("Seeds", self.seeds)
        form.addRow("Device", self.device)
        output = QGroupBox("Output")
        form = QFormLayout(output)
        form.addRow("Folder", self.out_dir)
        form.addRow("Model name", self.name)
        return data, training, output

    def _build_more_options(self) -> None:
        """The advanced fields, folded away behind a "More options" button."""
        self.more = QToolButton()
        self.more.setObjectName("moreOptionsButton")
        self.more.setText("More options")
        self.more.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.more.setArrowType(Qt.ArrowType.RightArrow)
        self.more.setAutoRaise(True)
        self.advanced = QWidget()
        form = QFormLayout(self.advanced)
        form.setContentsMargins(12, 0, 0, 0)
        form.addRow("Tokens per pair (text)", self.max_length)
        form.addRow("Validate every", self.eval_steps)
        form.addRow("Checkpoint every", self.checkpoint_steps)
        form.addRow("Stop after", self.max_steps)
        form.addRow("Split seed", self.split_seed)
        form.addRow("CPU threads", self.threads)
        form.addRow("", self.keep)
        self.advanced.setVisible(False)
        self.more.clicked.connect(lambda: self.show_more(not self.advanced.isVisibleTo(self)))

    # -- values -------------------------------------------------------------------------

    def set_request(self, request: TrainRequest) -> None:
        """Show a request's settings (the defaults, or a saved training's for a resume)."""
        self.kind.blockSignals(True)  # the request's own augmentation, not the kind's default
        self.kind.setCurrentIndex(max(0, self.kind.findData(request.kind)))
        self.kind.blockSignals(False)
        self._show_kind()
        self.label_map.set_value(request.label_map, request.label_between)
        if self.dimension.findText(request.dimension) < 0:
            self.dimension.addItem(request.dimension)
        self.dimension.setCurrentText(request.dimension)
        self.target.setCurrentIndex(1 if request.z_scores else 0)
        for name, box in self.augment.items():
            box.setChecked(name in (request.augment or ()))
        identical, unrelated = request.sanity_share or (0.0, 0.0)
        self.identical_share.setValue(identical)
        self.unrelated_share.setValue(unrelated)
        self.base.set_value(request.base_model)
        self.epochs.setValue(request.epochs)
        self.lr.setValue(request.learning_rate)
        self.batch.setValue(request.batch_size)
        self.folds.setValue(request.folds or 1)
        self.seeds.setText(" ".join(str(s) for s in request.seeds))
        self.device.setCurrentIndex(max(0, self.device.findData(request.device)))
        self.max_length.setValue(request.max_length)
        self.eval_steps.setValue(request.eval_steps or 0)
        self.checkpoint_steps.setValue(request.checkpoint_steps)
        self.max_steps.setValue(request.max_steps or 0)
        self.split_seed.setValue(request.split_seed)
        self.threads.setValue(request.threads or 0)
        self.keep.setChecked(request.keep_checkpoints)
        if request.name:
            self.name.setText(request.name)

    def request(self, study: Path, *, resume: bool = False) -> TrainRequest:
        """The request the form describes; UserError when a field cannot be read."""
        out = self.out_dir.text()
        if not out:
            raise UserError("choose an output folder for the model")
        name = self.name.text().strip() or None
        kind = str(self.kind.currentData())
        request = TrainRequest(
            study=study,
            out_dir=Path(out).expanduser(),
            kind=kind,
            label_map=self.label_map.value() if kind == BI_ENCODER else None,
            label_between=self.label_map.between() if kind == BI_ENCODER else BETWEEN_EXACT,
            base_model=self.base.value(),
            dimension=self.dimension.currentText(),
            z_scores=bool(self.target.currentData()),
            epochs=self.epochs.value(),
            learning_rate=self.lr.value(),
            batch_size=self.batch.value(),
            max_length=self.max_length.value(),
            augment=tuple(n for n, box in self.augment.items() if box.isChecked()),
            sanity_share=self._sanity_share(),
            folds=self.folds.value() if self.folds.value() >= 2 else None,
            seeds=parse_seeds(self.seeds.text()),
            split_seed=self.split_seed.value(),
            eval_steps=self.eval_steps.value() or None,
            checkpoint_steps=self.checkpoint_steps.value(),
            max_steps=self.max_steps.value() or None,
            device=str(self.device.currentData()),
            threads=self.threads.value() or None,
            resume=resume,
            name=name,
            keep_checkpoints=self.keep.isChecked(),
        )
        request.validate()
        return request

    def apply_saved(self, saved: TrainRequest, *, resume: bool) -> TrainRequest:
        """For a resume: the saved training's settings with this form's runtime choices."""
        return saved.with_changes(
            resume=resume,
            device=str(self.device.currentData()),
            threads=self.threads.value() or None,
            name=self.name.text().strip() or saved.name,
            out_dir=Path(self.out_dir.text()).expanduser(),
        )

    # -- state --------------------------------------------------------------------------

    def set_locked(self, locked: bool) -> None:
        """Lock what decides the weights (a resume must keep a checkpoint's settings)."""
        self._locked = locked
        for widget in self._learning_widgets:
            widget.setEnabled(not locked)
        self._show_share()

    def _sanity_share(self) -> tuple[float, float] | None:
        if self.identical_share.value() == self.identical_share.minimum():
            return None
        return (self.identical_share.value(), self.unrelated_share.value())

    def _show_share(self) -> None:
        """A share counts its kind of pair: it means nothing without them (and the unrelated
        share nothing under the rule of one pair per source)."""
        editable = not self._locked
        identical = self.augment["identical"].isChecked()
        unrelated = self.augment["unrelated"].isChecked()
        self.identical_share.setEnabled(editable and (identical or unrelated))
        per_source = self._sanity_share() is None
        self.unrelated_share.setEnabled(editable and unrelated and not per_source)

    def set_running(self, running: bool) -> None:
        self.setEnabled(not running)

    @property
    def locked(self) -> bool:
        return self._locked

    def show_more(self, shown: bool) -> None:
        self.advanced.setVisible(shown)
        self.more.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)

    def _on_kind(self) -> None:
        """A new kind brings its own augmentation default, as `--kind` does on the command line."""
        kind = str(self.kind.currentData())
        for name, box in self.augment.items():
            box.setChecked(name in DEFAULT_AUGMENT_BY_KIND[kind])
        self._show_kind()

    def _show_kind(self) -> None:
        kind = str(self.kind.currentData())
        bi = kind == BI_ENCODER
        self.kind.setToolTip(KIND_TIPS[kind])
        self.label_map.setVisible(bi)
        if self.label_map_label is not None:
            self.label_map_label.setVisible(bi)
        metrics = "sbert_cosine@NAME and bertscore@NAME" if bi else "meaningbert@NAME"
        self.name.setToolTip(f"The model's name in the battery: {metrics}")

    def _on_out_dir(self, text: str) -> None:
        from meaningbench.queries.training import default_model_name

        self.name.setPlaceholderText(default_model_name(Path(text)) if text.strip() else "")
        self.out_dir_changed.emit(text)
