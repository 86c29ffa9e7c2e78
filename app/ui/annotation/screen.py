"""The rating screen: one pair, one scale per dimension, keyboard first, saved at once.

What it shares with the side-by-side screen (the writes, each an op of `meaningbench.ops`;
skip, undo, flag, back and forth; the keys both read) is `RatingScreen`'s; the screen holds
only what is on display.
Every key the screen uses is claimed through ShortcutOverride while it has focus, so menu
shortcuts of the window around it (an Edit ▸ Undo on Ctrl+Z, say) cannot take them away.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.rate import open_rating, submit_rating, undo_rating
from meaningbench.ops.skip import skip_item
from meaningbench.queries.annotation import ShownItem
from meaningbench.queries.files import StudyHandle
from meaningbench.queries.rating_cursor import ItemCursor
from meaningbench.runtime import Job
from meaningbench.runtime.changes import StudyChanges, Wrote
from meaningbench.ui.annotation import keys
from meaningbench.ui.annotation.pair_view import PairView
from meaningbench.ui.annotation.panels import GuidelinesPanel, KeymapOverlay, toggles_keymap
from meaningbench.ui.annotation.rating_screen import RatingScreen, Words
from meaningbench.ui.annotation.rows import DimensionRow
from meaningbench.ui.annotation.scales import PAGE_KEYS, RatingScale, blend
from meaningbench.ui.annotation.span_editor import SpanEditor
from meaningbench.ui.wording import counted

K = Qt.Key
HINT_UNSET = "Move the slider or type a number (7 5 → 75), then press Enter."
HINT_READY = "Press Enter to submit and go on.   ? shows every key."
HINT_BLOCKED = "Not submitted: every scale needs a value first — move the slider or type a number."
HINT_SPANS = (
    "Mark meaning errors: ← → move, Shift+← → stretch, 1 minor, 2 major, Del removes; "
    "Tab goes on to the score."
)
HINT_PROPOSALS = (
    "{n} to decide: A keeps, 1 / 2 changes the severity, Del deletes, "
    "N goes to the next; left as they are, they count as kept."
)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _button(text: str, tip: str, primary: bool = False) -> QPushButton:
    b = QPushButton(text)
    b.setToolTip(tip)
    b.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys stay with the scales
    b.setObjectName("primaryButton" if primary else "")
    b.setMinimumHeight(34)
    return b


class AnnotationScreen(RatingScreen[ShownItem]):
    WORDS = Words(
        skip_refused="Only unrated items can be skipped.",
        skipped="Skipped — that item comes back later.",
        no_earlier="No earlier rated item.",
        nothing_after="This is the next unrated item; nothing after it is rated yet.",
        undone_back="Undone: your earlier rating of this item is back.",
        undone_open="Undone: this item is open again.",
    )
    queue: ItemCursor

    def _open(self, study: StudyHandle, annotator_name: str) -> None:
        self.queue = self.runner.run_now(open_rating(study, annotator_name))

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.setObjectName("annotationScreen")
        self._restyling = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 18, 24, 18)
        outer.setSpacing(14)

        header = self._build_header()
        outer.addLayout(header)

        self.stack = QStackedWidget()
        outer.addWidget(self.stack, 1)

        rating = self._build_rating_page()
        self._build_pages(rating)
        self._build_footer(outer)
        self._style()
        self.keymap = KeymapOverlay(self)

    def _first(self) -> ShownItem | None:
        return self.queue.current()

    def _build_header(self) -> QHBoxLayout:
        header = QHBoxLayout()
        name = self.queue.annotator_name
        # Who is rating stays on screen: a rating under the wrong name is hard to find later.
        who = QLabel(f"Rating as <b>{_html(name)}</b>")
        who.setObjectName("currentRater")
        who.setToolTip(f"Every rating on this screen is saved under {name!r}.")
        self.who_label = who
        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setFixedHeight(8)
        self.progress_bar.setMaximumWidth(320)
        # The bar takes only what the counter and the saved stamp leave: on a 1024 px
        # laptop it narrows before either of them is cut.
        self.progress_bar.setMinimumWidth(24)
        self.progress_bar.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("progressLabel")
        self.guidelines_button = _button("Guidelines  G", "Show or hide the guidelines (G)")
        self.keys_button = _button("Keys  ?", "Show every key (? or F1)")
        self.layout_button = _button("Layout  L", "Side by side or stacked (L)")
        self.link_button = _button(
            "Scroll together  T",
            "Scroll the original and the simplified text together or each on its own (T); "
            "Shift+Page Up / Page Down scroll both",
        )
        self.link_button.setCheckable(True)
        self.link_button.setChecked(True)
        self.link_button.toggled.connect(self._set_linked)
        self.link_button.hide()  # until a text needs scrolling
        self.guidelines_button.clicked.connect(self.toggle_guidelines)
        self.keys_button.clicked.connect(self.toggle_keymap)
        self.layout_button.clicked.connect(self.toggle_layout)
        header.addWidget(who)
        header.addSpacing(12)
        header.addWidget(self.progress_bar, 3)  # most of the room the labels leave
        header.addWidget(self.progress_label)
        # Proof that the last rating reached the study file, with the time it did.
        self.saved_label = QLabel()
        self.saved_label.setObjectName("savedStamp")
        self.saved_label.setToolTip(
            "Each rating is written to the study file the moment you submit it."
        )
        # Shown only after a first rating: it must not widen the screen past a 1024 px
        # laptop's window then (a label's minimum is otherwise its whole text).
        self.saved_label.setMinimumWidth(1)
        header.addSpacing(8)
        header.addWidget(self.saved_label)
        header.addStretch(1)
        for b in (self.link_button, self.guidelines_button, self.keys_button, self.layout_button):
            b.setFlat(True)
            header.addWidget(b)
        return header

    def _build_rating_page(self) -> QWidget:
        """The pair, its scales and, for error span annotation, the span editors."""
        rating = QWidget()
        col = QVBoxLayout(rating)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(14)
        self.banner = QLabel()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.hide()
        self.pair = PairView()
        self.pair.highlight = bool(self.queue.settings.diff_highlighting)
        for panel in (self.pair.source, self.pair.output):
            panel.scroll_range_changed.connect(self._show_link_button)
        # Error span annotation: the texts themselves take the keys that mark spans.
        self.span_editors: list[SpanEditor] = []
        if self.queue.protocol == "esa":
            self.pair.highlight = False  # the span tints are the only marks on the texts
            sides = [("output", self.pair.output)]
            if self.queue.settings.esa_source_spans:
                sides.append(("source", self.pair.source))
            for side, panel in sides:
                editor = SpanEditor(side)
                panel.use_text_widget(editor)
                editor.focused.connect(self._refresh_hint)
                editor.spansChanged.connect(self._refresh_hint)
                self.span_editors.append(editor)
        hidden = bool(self.queue.settings.hidden_number)
        self.rows = [DimensionRow(sc, hidden_number=hidden) for sc in self.queue.scales]
        for row in self.rows:
            row.scale.valueChanged.connect(self._value_changed)
        scales_box = QFrame()
        scales_box.setObjectName("scalesBox")
        sb = QVBoxLayout(scales_box)
        sb.setContentsMargins(8, 4, 8, 4)
        sb.setSpacing(26)
        for row in self.rows:
            sb.addWidget(row)
        # The pair and its scales sit a little above the middle of the free height.
        col.addStretch(1)
        col.addWidget(self.banner)
        col.addWidget(self.pair)
        self.prefill_legend: QLabel | None = None
        if self.span_editors:
            col.addWidget(self._span_legend())
        col.addSpacing(18)
        col.addWidget(scales_box)
        col.addStretch(2)
        return rating

    def _build_pages(self, rating: QWidget) -> None:
        self.guidelines = GuidelinesPanel(self.queue.settings.guidelines)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(rating)
        self.splitter.addWidget(self.guidelines)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.stack.addWidget(self.splitter)

        self.stack.addWidget(self._make_end_screen())

    def _build_footer(self, outer: QVBoxLayout) -> None:
        footer = QHBoxLayout()
        self.hint = QLabel(HINT_UNSET)
        self.hint.setObjectName("hint")
        self.flag_chip = QLabel("⚑ Flagged")
        self.flag_chip.setObjectName("flagChip")
        self.flag_chip.hide()
        self.prev_button = _button("←  Previous", "Previous rated item (Alt+←)")
        self.next_button = _button("Next  →", "Next rated item (Alt+→)")
        self.skip_button = _button("Skip  S", "Skip; the item comes back later (S)")
        self.flag_button = _button("Flag  F", "Flag with a comment (F)")
        self.undo_button = _button("Undo  Ctrl+Z", "Undo the last submission (Ctrl+Z)")
        self.submit_button = _button("Submit  ⏎", "Submit and show the next item (Enter)", True)
        self.prev_button.clicked.connect(self.go_previous)
        self.next_button.clicked.connect(self.go_following)
        self.skip_button.clicked.connect(self.skip_current)
        self.flag_button.clicked.connect(self.flag_current)
        self.undo_button.clicked.connect(self.undo_last)
        self.submit_button.clicked.connect(self.submit_current)
        # The hint has a line of its own: beside six buttons it would set the screen's
        # minimum width past a laptop's 1024 px.
        self.hint.setWordWrap(True)
        hint_row = QHBoxLayout()
        hint_row.addWidget(self.hint, 1)
        hint_row.addWidget(self.flag_chip)
        outer.addLayout(hint_row)
        footer.addStretch(1)
        for b in (self.prev_button, self.next_button, self.skip_button, self.flag_button):
            footer.addWidget(b)
        footer.addSpacing(12)
        footer.addWidget(self.undo_button)
        footer.addWidget(self.submit_button)
        outer.addLayout(footer)

    def _span_legend(self) -> QWidget:
        """What the marks mean and how to make them, always in sight under the texts; what
        a proposal is, on items that have proposals."""
        from meaningbench.ui.annotation.span_editor import (
            MAJOR_TINT,
            MINOR_TINT,
            PROPOSED,
            SOLID,
        )

        base = self.palette().color(QPalette.ColorRole.Base)
        chip = '<span style="background-color:{};">&nbsp;{}&nbsp;</span>'
        where = "the simplified text" + (
            " (omissions: in the original)" if len(self.span_editors) > 1 else ""
        )
        legend = QLabel(
            f"Mark meaning errors in {where}: "
            + chip.format(blend(base, MINOR_TINT, SOLID["minor"]).name(), "minor  1")
            + " "
            + chip.format(blend(base, MAJOR_TINT, SOLID["major"]).name(), "<b>major  2</b>")
            + " — ← → move, Shift+← → select words, Del removes, Tab goes to the score."
        )
        legend.setObjectName("spanLegend")
        legend.setWordWrap(True)
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(legend)
        prefill = self.queue.settings.esa_prefill
        if prefill is not None:
            proposed = chip.format(blend(base, MINOR_TINT, PROPOSED["minor"]).name(), "proposed")
            # Shown only on an item with proposals (see `_show`): a judge that found no
            # error in an output, or a revised rating, has none to explain.
            self.prefill_legend = QLabel(
                f"Pre-marked by {html.escape(prefill.model)} "
                + f"({html.escape(prefill.template)}): {proposed} (paler, in a dashed frame) "
                + "until you decide — <b>A</b> keeps, <b>1</b> / <b>2</b> set its severity "
                + "(after Shift+← →: a new extent), <b>Del</b> deletes, <b>N</b> next proposal."
            )
            self.prefill_legend.setObjectName("prefillLegend")
            self.prefill_legend.setWordWrap(True)
            column.addWidget(self.prefill_legend)
        return box

    def _style(self) -> None:
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.WindowText)
        window = pal.color(QPalette.ColorRole.Window)
        accent = pal.color(QPalette.ColorRole.Highlight)
        muted = blend(text, window, 0.4).name()
        soft = blend(window, accent, 0.16).name()
        self.setStyleSheet(
            f"#hint {{ color: {muted}; }}"
            f"#progressLabel {{ color: {muted}; }}"
            f"#savedStamp {{ color: {muted}; }}"
            f"#banner {{ background: {soft}; border-radius: 8px; padding: 8px 14px; }}"
            f"#flagChip {{ color: {'#ff8a7a' if window.lightness() < 128 else '#b3261e'}; "
            "font-weight: 600; padding: 0 10px; }"
            f"QPushButton#primaryButton {{ background: {accent.name()}; "
            f"color: {pal.color(QPalette.ColorRole.HighlightedText).name()}; border: none; "
            "border-radius: 6px; padding: 6px 18px; font-weight: 600; }"
            # Disabled, it looks like any disabled button: a pale accent read as ready.
            "QPushButton#primaryButton:disabled { "
            f"background: {pal.color(QPalette.ColorRole.Button).name()}; "
            f"color: {pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText).name()}; "
            f"border: 1px solid {pal.color(QPalette.ColorRole.Mid).name()}; font-weight: normal; }}"
        )
        self.pair.style_panels(pal)

    # -- what is shown -------------------------------------------------------------------

    def current_item(self) -> ShownItem | None:
        return self._shown

    def _show(self, item: ShownItem | None) -> None:
        self._shown = item
        progress = self._show_standing(0 if item is None else 1).progress
        self.progress_bar.setMaximum(max(1, progress.total))
        self.progress_bar.setValue(progress.rated)
        if item is None:
            self.stack.setCurrentIndex(1)
            for b in (self.skip_button, self.flag_button, self.submit_button, self.next_button):
                b.setEnabled(False)
            self.prev_button.setEnabled(progress.rated > 0)
            self.banner.hide()
            self.flag_chip.hide()
            self.hint.setText("")
            self.setFocus()
            self._done_shown()
            return
        self._finished_sent = False
        self.stack.setCurrentIndex(0)
        self.pair.set_pair(item.source, item.output)
        for editor in self.span_editors:
            editor.load(
                item.output if editor.side == "output" else item.source,
                item.spans,
                item.proposals,
                item.fates,
            )
        if self.prefill_legend is not None:
            self.prefill_legend.setVisible(bool(item.proposals))
        for row in self.rows:
            row.scale.reset(item.values.get(row.name))
        if item.reviewing:
            self.banner.setText(
                "Revising an earlier rating. Enter saves a change and moves on; "
                "Alt+→ moves on without changing it."
            )
            self.banner.show()
        else:
            self.banner.hide()
        self.flag_chip.setVisible(item.flagged)
        self.prev_button.setEnabled(progress.rated > 0)
        self.next_button.setEnabled(item.reviewing)
        self.skip_button.setEnabled(not item.reviewing)
        self.flag_button.setEnabled(True)
        self._notice_timer.stop()
        self.focus_chain()[0].setFocus(Qt.FocusReason.OtherFocusReason)
        self._refresh_hint()

    def focus_chain(self) -> list[QWidget]:
        """What Tab cycles through: the span editors (error span annotation), then the scales."""
        return [*self.span_editors, *(row.scale for row in self.rows)]

    def scales(self) -> list[RatingScale]:
        return [row.scale for row in self.rows]

    def _refresh_hint(self, *_args: object) -> None:
        if self._shown is None:
            return
        ready = all(row.scale.is_set() for row in self.rows)
        # Submit looks as ready as Enter is, even while a notice holds the hint line.
        self.submit_button.setEnabled(ready)
        if self._notice_timer.isActive():
            return
        pending = sum(editor.pending() for editor in self.span_editors)
        if pending and QApplication.focusWidget() in self.span_editors:
            self.hint.setText(HINT_PROPOSALS.format(n=counted(pending, "proposed span")))
        elif not ready and QApplication.focusWidget() in self.span_editors:
            self.hint.setText(HINT_SPANS)
        else:
            self.hint.setText(HINT_READY if ready else HINT_UNSET)

    # -- actions -------------------------------------------------------------------------

    def submit_current(self) -> bool:
        item = self._shown
        if item is None:
            return False
        if not all(row.scale.is_set() for row in self.rows):
            self.notice(HINT_BLOCKED)
            return False
        # A side without an editor (source spans turned off after this item was rated)
        # keeps what the item holds there: a plain Enter must not drop the rater's spans.
        edited = {editor.side for editor in self.span_editors}
        kept = [s for s in item.spans if s.side not in edited]
        spans = tuple(sorted([*kept, *(s for editor in self.span_editors for s in editor.spans())]))
        fates = tuple(
            [f for f in item.fates if f.proposal.span.side not in edited]
            + [f for editor in self.span_editors for f in editor.fates()]
        )
        spans_changed = spans != tuple(sorted(item.spans)) or set(fates) != set(item.fates)
        if (
            item.reviewing
            and not spans_changed
            and not any(row.scale.touched() for row in self.rows)
        ):
            self._show(self.queue.advance())  # nothing changed: no new rating row
            return True
        values = {row.name: row.scale.value() for row in self.rows}
        starts = {row.name: row.scale.start_value() for row in self.rows}
        job = submit_rating(
            self.queue,
            item.item_id,
            values,  # type: ignore[arg-type]
            starts,
            item.shown_at,
            spans=spans,
            proposals=fates,
        )
        return self._submit(item, job)

    def _skip_job(self, shown: ShownItem) -> Job[StudyChanges]:
        return skip_item(self.queue, shown.item_id)

    def _undo_job(self) -> Job[Wrote[ShownItem | None]]:
        return undo_rating(self.queue)

    def _flag_target(self) -> ShownItem | None:
        return self._shown

    def _flag_saved(self, item_id: int) -> None:
        self._shown = self.queue.current()
        self.flag_chip.setVisible(bool(self._shown and self._shown.flagged))

    def toggle_guidelines(self) -> None:
        self.guidelines.setVisible(not self.guidelines.isVisible())

    def toggle_keymap(self) -> None:
        self.keymap.toggle()

    def toggle_layout(self) -> None:
        self.pair.set_stacked(not self.pair.stacked)

    def toggle_linked(self) -> None:
        self.link_button.setChecked(not self.link_button.isChecked())

    def _set_linked(self, linked: bool) -> None:
        self.pair.linked = linked
        self.notice("The texts scroll together." if linked else "Each text scrolls on its own.")

    def page_texts(self, pages: int) -> None:
        self.pair.page(pages)

    def _show_link_button(self) -> None:
        # Only a text that needs scrolling makes the scrolling switch worth a place on screen.
        self.link_button.setVisible(self._shown is not None and self.pair.overflows())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        # The host switches between light and dark: the palette-derived tints follow.
        # The children get the new palette after this event: restyle once they have it.
        if event.type() == QEvent.Type.PaletteChange and not self._restyling:
            self._restyling = True
            QTimer.singleShot(0, self._restyle)

    def _restyle(self) -> None:
        try:
            self._style()
            for row in self.rows:
                row.restyle(self.palette())
            if self._shown is not None:
                self.pair.set_pair(self._shown.source, self._shown.output)  # diff tints
        finally:
            self._restyling = False

    # -- keys ------------------------------------------------------------------------------

    def _action_for(self, event: QKeyEvent) -> keys.Action | None:
        if toggles_keymap(event):
            return self.toggle_keymap
        if event.key() == K.Key_Escape:
            return self._escape
        if self.keymap.isVisible():
            return None
        return super()._action_for(event)

    def _own_key(self, key: int, mods: Qt.KeyboardModifier) -> keys.Action | None:
        if key in PAGE_KEYS and mods & Qt.KeyboardModifier.ShiftModifier:
            return lambda: self.page_texts(-1 if key == K.Key_PageUp else 1)
        plain: dict[int, keys.Action] = {
            K.Key_G: self.toggle_guidelines,
            K.Key_L: self.toggle_layout,
            K.Key_T: self.toggle_linked,
        }
        return plain.get(key) or super()._own_key(key, mods)

    def _escape(self) -> None:
        if self.keymap.isVisible():
            self.keymap.hide()
        elif self.guidelines.isVisible():
            self.guidelines.hide()

    def _types_digits(self) -> bool:
        return super()._types_digits() and not self.keymap.isVisible()
