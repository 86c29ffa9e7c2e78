"""The Annotate page: pick an annotator, then host the annotation screen.

The screen itself lives in `app.ui.annotation`; it is imported when the user starts
annotating, so the window starts without it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QPushButton,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from app.ui.icons import themed_icon
from app.ui.widgets import HeadingLabel

if TYPE_CHECKING:
    from app.ui.context import StudyContext

SCREEN = ("app.ui.annotation.screen", "AnnotationScreen")
PICKER = ("app.ui.annotation.picker", "AnnotatorPicker")


@dataclass(frozen=True)
class AnnotationParts:
    screen: Any  # AnnotationScreen(study, annotator_name, parent)
    picker: Any  # AnnotatorPicker(study, parent), a dialog


def annotation_parts() -> tuple[AnnotationParts | None, str]:
    """The rating screen and the annotator picker, or why they cannot be used."""
    found = []
    for module_name, class_name in (SCREEN, PICKER):
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            return None, f"The annotation screen is not available ({exc})."
        cls = getattr(module, class_name, None)
        if cls is None:
            return None, f"The annotation screen is incomplete (no {class_name})."
        found.append(cls)
    return AnnotationParts(*found), ""


def picked_name(picker: Any) -> str | None:
    """The annotator a picker dialog settled on, whatever it calls the accessor."""
    for attr in ("annotator_name", "selected_name", "name", "annotator"):
        value = getattr(picker, attr, None)
        if callable(value):
            value = value()
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


class AnnotatePage(QWidget):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("annotatePage")
        self.context = context
        self.screen: QWidget | None = None
        self.annotator: str | None = None

        self.intro = QWidget()
        heading = HeadingLabel("Rate items", 1.6)
        heading.setObjectName("pageHeading")
        self.message = QLabel(
            "Each annotator has their own queue. Choose who is rating, then use the keyboard: "
            "arrows or digits set the slider, Enter submits, S skips, F flags, Ctrl+Z undoes."
        )
        self.message.setObjectName("mutedLabel")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.start_button = QPushButton(themed_icon("annotate"), "Choose annotator and start")
        self.start_button.setObjectName("startAnnotation")
        self.start_button.setMinimumHeight(36)
        # clicked(bool) would pass its `checked` flag as the annotator's name.
        self.start_button.clicked.connect(lambda _checked=False: self.start())
        box = QVBoxLayout(self.intro)
        box.addStretch(1)
        for w in (heading, self.message):
            w.setAlignment(Qt.AlignmentFlag.AlignCenter)
            box.addWidget(w)
        box.addSpacing(12)
        box.addWidget(self.start_button, 0, Qt.AlignmentFlag.AlignCenter)
        box.addStretch(2)

        self.stack = QStackedLayout(self)
        self.stack.addWidget(self.intro)
        _parts, reason = annotation_parts()
        if reason:
            self.start_button.setEnabled(False)
            self.start_button.setToolTip(reason)
        context.study_closed.connect(self.stop)

    def start(self, annotator: str | None = None) -> bool:
        """Ask who is rating (unless given) and open their queue."""
        parts, reason = annotation_parts()
        study = self.context.study
        if parts is None or study is None:
            if reason:
                self.message.setText(reason)
            return False
        if annotator is not None and not isinstance(annotator, str):
            raise TypeError(f"an annotator is a name, not {annotator!r}")
        if annotator is None:
            picker = parts.picker(study, self)
            if picker.exec() != QDialog.DialogCode.Accepted:
                return False
            annotator = picked_name(picker)
            if annotator is None:
                return False
        self.stop()
        screen = parts.screen(study, annotator, self)
        screen.submitted.connect(lambda item_id: self.context.ratings_changed.emit([int(item_id)]))
        screen.undone.connect(lambda item_id: self.context.ratings_changed.emit([int(item_id)]))
        screen.finished.connect(self._on_finished)
        self.screen, self.annotator = screen, annotator
        self.stack.addWidget(screen)
        self.stack.setCurrentWidget(screen)
        screen.setFocus()
        return True

    def stop(self) -> None:
        if self.screen is not None:
            self.stack.removeWidget(self.screen)
            self.screen.deleteLater()
            self.screen = None
        self.stack.setCurrentWidget(self.intro)

    def _on_finished(self) -> None:
        who = self.annotator or "This annotator"
        self.stop()
        self.message.setText(f"{who} has rated every item in their queue. Thank you!")
        self.context.ratings_changed.emit([])

    def page_shown(self) -> None:
        if self.screen is not None:
            self.screen.setFocus()
