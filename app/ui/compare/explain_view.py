"""The Explain tab: one score of the selected output taken apart by its metric's `explain`
hook, drawn by the widget for the kind of explanation it returns.

The tab knows explanation kinds, never metric names: a metric installed from another
package that returns `TokenMatching`, `NgramMatches`, `SceneScores` or `NoExplanation` is
drawn like the battery's own.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries import compare as compare_queries
from meaningbench.queries.compare import ExplainChoice
from meaningbench.queries.explanations import (
    Explanation,
    NgramMatches,
    NoExplanation,
    SariExplanation,
    SceneScores,
    TokenMatching,
)
from meaningbench.ui.compare.matching_view import MatchingScroll, MatchingView
from meaningbench.ui.compare.ngram_view import ngram_html
from meaningbench.ui.compare.samsa_view import SamsaView
from meaningbench.ui.compare.sari_view import SariView


class ExplainView(QWidget):
    """A menu of the output's explainable scores and the explanation of the chosen one."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.study: Any = None
        self.item_id: int | None = None
        self.choices: list[ExplainChoice] = []
        self.explanation: Explanation | None = None
        self._wanted: str | None = None  # the choice to keep while browsing outputs

        self.runs = QComboBox()
        self.runs.setObjectName("explainRuns")
        self.runs.currentIndexChanged.connect(self._on_choice)
        self.note = QLabel()
        self.note.setWordWrap(True)

        self.message = QTextBrowser()
        self.ngrams = QTextBrowser()
        self.matching = MatchingView()
        scroll = MatchingScroll(self.matching)
        self.matching_scroll = scroll
        self.sari = SariView()
        self.scenes = SamsaView()
        self.stack = QStackedWidget()
        for page in (self.message, self.ngrams, scroll, self.sari, self.scenes):
            self.stack.addWidget(page)

        top = QHBoxLayout()
        top.addWidget(QLabel("Score"))
        top.addWidget(self.runs, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.note)
        layout.addWidget(self.stack, 1)

    def set_item(self, study: Any, item_id: int | None) -> None:
        """Offer the explainable scores of one output, keeping the chosen one if it has it."""
        self.study, self.item_id = study, item_id
        self.choices = (
            compare_queries.explain_choices(study, item_id)
            if study is not None and item_id is not None
            else []
        )
        keys = [c.key for c in self.choices]
        wanted = self._wanted if self._wanted in keys else None
        self.runs.blockSignals(True)
        self.runs.clear()
        for choice in self.choices:
            self.runs.addItem(choice.label, choice.key)
        self.runs.setCurrentIndex(keys.index(wanted) if wanted is not None else 0)
        self.runs.blockSignals(False)
        self._show_current()

    def choose(self, key: str) -> None:
        """Explain the score named `key` (a run's name, or a metric's for a live one)."""
        self._wanted = key
        index = self.runs.findData(key)
        if index >= 0:
            self.runs.setCurrentIndex(index)

    def _on_choice(self, index: int) -> None:
        if 0 <= index < len(self.choices):
            self._wanted = self.choices[index].key
        self._show_current()

    def _show_current(self) -> None:
        index = self.runs.currentIndex()
        if self.study is None or self.item_id is None:
            self._show(Explanation(NoExplanation("Select an output.")))
        elif not 0 <= index < len(self.choices):
            self._show(
                Explanation(
                    NoExplanation(
                        "No score of this output can be explained yet: run metrics from the "
                        "metric battery."
                    )
                )
            )
        else:
            self._show(compare_queries.explain_score(self.study, self.item_id, self.choices[index]))

    def _show(self, explanation: Explanation) -> None:
        self.explanation = explanation
        body = explanation.body
        dark = self.palette().base().color().lightness() < 128
        self.note.setText(explanation.note)
        self.note.setVisible(bool(explanation.note) and not isinstance(body, SariExplanation))
        self.matching.set_alignment(None)
        if isinstance(body, TokenMatching):
            self.matching.set_alignment(body.alignment, ref_label=body.against)
            self.stack.setCurrentWidget(self.matching_scroll)
        elif isinstance(body, SariExplanation):
            self.sari.show_explanation(body, explanation.note)
            self.stack.setCurrentWidget(self.sari)
        elif isinstance(body, SceneScores):
            self.scenes.show_details(body.details)
            self.stack.setCurrentWidget(self.scenes)
        elif isinstance(body, NgramMatches):
            self.ngrams.setHtml(ngram_html(body, dark=dark))
            self.stack.setCurrentWidget(self.ngrams)
        else:
            reason = body.reason if isinstance(body, NoExplanation) else str(body)
            self.message.setHtml(f'<p style="color:gray">{html.escape(reason)}</p>')
            self.stack.setCurrentWidget(self.message)
