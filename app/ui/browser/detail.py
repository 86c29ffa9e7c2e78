"""The item detail pane: the texts, every current rating and every metric's newest score.

Rendered as rich text in one read-only QTextBrowser: selectable and copyable as a whole,
and it follows the application font, so the text size setting applies here too.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from meaningbench.queries.browser import BrowserReader, name_and_options
from meaningbench.queries.item_detail import ItemDetail, RatingLine
from meaningbench.queries.raters import MACHINE_MARK, MACHINE_TAG
from meaningbench.ui.browser.model import EMPTY_OUTPUT_TIP
from meaningbench.ui.wording import counted


def _esc(text: object) -> str:
    return html.escape(str(text)).replace("\n", "<br>")


def _attribute(text: str) -> str:
    """`text` inside a double-quoted attribute. Not html.escape(quote=True): Qt's rich text
    leaves its `&#x27;` for an apostrophe as it is, and the tooltip showed it."""
    return (
        text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def _fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _details_text(details: dict[str, object]) -> str:
    parts = []
    for key, value in list(details.items())[:6]:
        if isinstance(value, float):
            parts.append(f"{key} {value:.3g}")
        elif isinstance(value, (int, str)) and len(str(value)) < 30:
            parts.append(f"{key} {value}")
    return ", ".join(parts) if parts else (json.dumps(details)[:60] if details else "")


class DetailPane(QWidget):
    """Shows one item; `column_name` maps (metric, config hash) to the browser's column name."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("detailPane")
        self.view = QTextBrowser(self)
        self.view.setObjectName("detailView")
        self.view.setOpenLinks(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.item_id: int | None = None
        self.detail: ItemDetail | None = None
        # The browser's reader, asked for at each use: it is replaced when another study is
        # opened under the browser.
        self._reader: Callable[[], BrowserReader | None] = lambda: None
        self.column_name: Callable[[str, str], str | None] = lambda _m, _h: None
        self.show_empty()

    def set_reader(self, reader: Callable[[], BrowserReader | None]) -> None:
        self._reader = reader
        self.item_id = None
        self.detail = None
        self.show_empty()

    def show_empty(self) -> None:
        muted = self.palette().color(QPalette.ColorRole.PlaceholderText).name()
        self.view.setHtml(
            f"<p style='color:{muted}'>Select an item to see its texts, ratings and scores.</p>"
        )

    def show_item(self, item_id: int | None) -> None:
        self.item_id = item_id
        reader = self._reader() if item_id is not None else None
        if item_id is None or reader is None:
            self.detail = None
            self.show_empty()
            return
        self.detail = reader.detail(item_id)
        self.render()

    def refresh(self) -> None:
        if self.item_id is not None:
            self.show_item(self.item_id)

    # The item's text again; QWidget.render (painting into a device) is never used here.
    def render(self) -> None:  # type: ignore[override]
        d = self.detail
        if d is None:
            self.show_empty()
            return
        pal = self.palette()
        muted = pal.color(QPalette.ColorRole.PlaceholderText).name()
        rule = pal.color(QPalette.ColorRole.Mid).name()
        cell = f"style='padding:2px 10px 2px 0; border-bottom:1px solid {rule}'"
        parts = [
            *_texts_html(d, muted),
            *_ratings_html(d, muted, cell),
            *self._scores_html(d, muted, cell),
            *_notes_html(d),
        ]
        scroll = self.view.verticalScrollBar().value()
        self.view.setHtml("".join(parts))
        self.view.verticalScrollBar().setValue(scroll)

    def _scores_html(self, d: ItemDetail, muted: str, cell: str) -> list[str]:
        parts = [f"<h3>Scores <span style='color:{muted}'>({len(d.scores)})</span></h3>"]
        if d.scores:
            rows = []
            for s in d.scores:
                name = self.column_name(s.metric, s.config_hash) or s.label or s.metric
                if s.error:
                    value = "<span style='color:#d04040'>error</span>"
                    info = _esc(s.error[:120])
                elif s.not_computed:
                    value = f"<span style='color:{muted}'>not computed</span>"
                    info = _esc(s.not_computed)
                else:
                    value = f"<b>{_fmt(s.value)}</b>"
                    raw = "" if s.raw is None else f"raw {s.raw:.4g}"
                    info = ", ".join(x for x in (raw, _esc(_details_text(s.details))) if x)
                head, options = name_and_options(name)
                if options:  # on a line of its own, rather than broken anywhere
                    head = f"{_esc(head)}<br><span style='color:{muted}'>{_esc(options)}</span>"
                else:
                    head = _esc(head)
                rows.append(
                    f"<tr><td {cell}>{head}</td><td {cell} align='right'>{value}</td>"
                    f"<td {cell}><span style='color:{muted}'>{info}</span></td></tr>"
                )
            parts.append(f"<table cellspacing='0'>{''.join(rows)}</table>")
        else:
            parts.append(f"<p style='color:{muted}'>No scores yet: Study ▸ Run metrics…</p>")
        return parts


def _texts_html(d: ItemDetail, muted: str) -> list[str]:
    """The item's identity line, its source, output and references."""
    parts: list[str] = []
    meta = [f"item {d.item_id}", _esc(d.dataset)]
    if d.system:
        meta.append(f"system {_esc(d.system)}")
    if d.kind != "regular":
        meta.append(f"<b>{_esc(d.kind)}</b>")
        if d.parent_id is not None:
            meta.append(f"from item {d.parent_id}")
    if d.external_id:
        meta.append(f"id {_esc(d.external_id)}")
    parts.append(f"<p style='color:{muted}'>{' · '.join(meta)}</p>")
    parts.append(f"<h3>Source</h3><p>{_esc(d.source)}</p>")
    output = _esc(d.output) if d.output else f"<i>{_esc(EMPTY_OUTPUT_TIP)}</i>"
    parts.append(f"<h3>Output</h3><p>{output}</p>")
    if d.references:
        refs = "".join(f"<li>{_esc(r)}</li>" for r in d.references)
        parts.append(f"<h3>References</h3><ol>{refs}</ol>")
    return parts


def _ratings_html(d: ItemDetail, muted: str, cell: str) -> list[str]:
    parts = [f"<h3>Ratings <span style='color:{muted}'>({len(d.ratings)})</span></h3>"]
    if d.ratings:
        rows = []
        for r in d.ratings:
            who = _esc(r.annotator)
            if r.annotator_kind == "aggregate":
                n = f", {counted(r.n_raters, 'rater')}" if r.n_raters else ""
                who += f" <span style='color:{muted}'>(mean{n})</span>"
            elif r.machine:
                who += " " + _machine_tag(r)
            extra = []
            if r.duration_ms is not None:
                extra.append(f"{r.duration_ms / 1000:.1f} s")
            if r.flagged:
                extra.append("⚑ flagged")
            if r.comment:
                extra.append(_esc(r.comment))
            rows.append(
                f"<tr><td {cell}>{who}</td><td {cell}>{_esc(r.dimension)}</td>"
                f"<td {cell} align='right'><b>{_fmt(r.value)}</b></td>"
                f"<td {cell}>{'; '.join(extra)}</td></tr>"
            )
        parts.append(f"<table cellspacing='0'>{''.join(rows)}</table>")
        machines = [r for r in d.ratings if r.machine]
        if machines:
            models = sorted({r.model or r.judge or r.annotator for r in machines})
            parts.append(
                f"<p style='color:{muted}'>{MACHINE_MARK} {MACHINE_TAG}: a model's rating "
                f"({_esc(', '.join(models))}), never part of the item's human score.</p>"
            )
    else:
        parts.append(f"<p style='color:{muted}'>No ratings yet.</p>")
    return parts


def _machine_tag(r: RatingLine) -> str:
    """The mark of a machine rater's rating; hovering it names the judge and its model."""
    return (
        f'<span title="{_attribute(r.machine_tooltip)}" '
        "style='background-color:#6a4fb3; color:#ffffff; font-size:small'>"
        f"&nbsp;{MACHINE_MARK}&nbsp;{MACHINE_TAG}&nbsp;</span>"
    )


def _notes_html(d: ItemDetail) -> list[str]:
    if not d.notes:
        return []
    notes = "".join(
        f"<li>{'⚑ ' if n.flagged else ''}{_esc(n.annotator or 'someone')}"
        f"{': ' + _esc(n.comment) if n.comment else ''}</li>"
        for n in d.notes
    )
    return [f"<h3>Notes</h3><ul>{notes}</ul>"]
