"""SARI's explanation drawn: what the output added, kept and deleted, and what the references
say.

Sentence SARI (the HF `evaluate` variant the battery scores per item) is the mean of three
operation scores, each averaged over n-gram orders 1–4: add F1, keep F1 and deletion
precision. The view prints the formula with the numbers, then per order the n-grams of each
operation, those the references support in colour, the rest struck or greyed.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from meaningbench.queries.explanations import NgramOperations, SariExplanation

SUPPORTED = "background:#d7f0dc; color:#0f5c22;"
UNSUPPORTED = "background:#f6d9d7; color:#8c1d18;"
SUPPORTED_DARK = "background:#1f4a2a; color:#bdf0c8;"
UNSUPPORTED_DARK = "background:#4a2320; color:#ffb4ab;"


def _chips(grams: Sequence[str], supported: Sequence[str], dark: bool, limit: int = 40) -> str:
    if not grams:
        return '<span style="color:gray">none</span>'
    good = set(supported)
    ok_style = SUPPORTED_DARK if dark else SUPPORTED
    bad_style = UNSUPPORTED_DARK if dark else UNSUPPORTED
    shown = sorted(grams, key=lambda g: (g not in good, g))[:limit]
    parts = [
        f'<span style="{ok_style if g in good else bad_style}">&nbsp;{html.escape(g)}&nbsp;</span>'
        for g in shown
    ]
    more = (
        f' <span style="color:gray">… {len(grams) - limit} more</span>'
        if len(grams) > limit
        else ""
    )
    return " ".join(parts) + more


def _order_rows(o: NgramOperations, dark: bool) -> str:
    def score(label: str, p: float, r: float | None, f: float | None) -> str:
        bits = [f"P {p:.2f}"]
        if r is not None:
            bits.append(f"R {r:.2f}")
        if f is not None:
            bits.append(f"<b>F1 {f:.2f}</b>")
        return (
            f'<td style="white-space:nowrap; padding:4px 8px">{label}<br/>{" · ".join(bits)}</td>'
        )

    return (
        f'<tr><td rowspan="3" style="padding:4px 8px; vertical-align:top; '
        f'border-top:1px solid gray"><b>{o.n}-grams</b></td>'
        f'<td style="padding:4px 8px">added</td>'
        f'<td style="padding:4px 8px">{_chips(o.added, o.added_supported, dark)}</td>'
        f"{score('add', o.add_precision, o.add_recall, o.add_f1)}</tr>"
        f'<tr><td style="padding:4px 8px">kept</td>'
        f'<td style="padding:4px 8px">{_chips(o.kept, o.kept_supported, dark)}</td>'
        f"{score('keep', o.keep_precision, o.keep_recall, o.keep_f1)}</tr>"
        f'<tr><td style="padding:4px 8px">deleted</td>'
        f'<td style="padding:4px 8px">{_chips(o.deleted, o.deleted_supported, dark)}</td>'
        f'<td style="white-space:nowrap; padding:4px 8px">delete<br/><b>P {o.delete_precision:.2f}</b></td></tr>'
    )


def _summary_table(exp: SariExplanation) -> str:
    """Operation × n-gram order: the twelve numbers the total is the mean of."""
    cell = 'style="padding:3px 12px" align="right"'
    head = "".join(f"<th {cell}>n = {o.n}</th>" for o in exp.ngrams)
    rows = []
    for label, values, total in (
        ("add (F1)", [o.add_f1 for o in exp.ngrams], exp.add),
        ("keep (F1)", [o.keep_f1 for o in exp.ngrams], exp.keep),
        ("delete (precision)", [o.delete_precision for o in exp.ngrams], exp.delete),
    ):
        nums = "".join(f"<td {cell}>{100 * v:.2f}</td>" for v in values)
        rows.append(
            f'<tr><td style="padding:3px 12px">{label}</td>{nums}'
            f"<td {cell}><b>{total:.2f}</b></td></tr>"
        )
    return (
        '<table cellspacing="0" style="margin:6px 0 10px 0">'
        f'<tr><th style="padding:3px 12px" align="left">operation</th>{head}'
        f"<th {cell}>mean</th></tr>{''.join(rows)}</table>"
    )


def explanation_html(exp: SariExplanation, *, references_note: str = "", dark: bool = False) -> str:
    ok_style = SUPPORTED_DARK if dark else SUPPORTED
    bad_style = UNSUPPORTED_DARK if dark else UNSUPPORTED
    head = (
        f'<p style="font-size:large"><b>SARI {exp.sari:.2f}</b> = '
        f"(add {exp.add:.2f} + keep {exp.keep:.2f} + delete {exp.delete:.2f}) / 3</p>"
    )
    if references_note:
        head += f'<p style="color:gray">{html.escape(references_note)}</p>'
    head += _summary_table(exp)
    head += (
        f"<p>Below, per order, the n-grams of each operation. "
        f'<span style="{ok_style}">&nbsp;supported&nbsp;</span> ones agree with the '
        f"references (an added n-gram a reference contains, a kept one the references keep, "
        f'a deleted one they delete); <span style="{bad_style}">&nbsp;unsupported&nbsp;</span> '
        f"ones do not.</p>"
    )
    rows = "".join(_order_rows(o, dark) for o in exp.ngrams)
    th = 'style="padding:4px 8px; border-bottom:1px solid gray" align="left"'
    table = (
        '<table cellspacing="0" width="100%">'
        f"<tr><th {th}>order</th><th {th}>operation</th><th {th}>n-grams</th>"
        f"<th {th}>score</th></tr>{rows}</table>"
    )
    return head + table


class SariView(QWidget):
    """Draws the sentence SARI explanation of one output against its references."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.explanation: SariExplanation | None = None
        self.note = ""
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)

    def show_explanation(self, explanation: SariExplanation, note: str = "") -> None:
        self.explanation = explanation
        self.set_note(note)

    def set_note(self, note: str) -> None:
        """Redraw the explanation with a line saying which references and which run."""
        if self.explanation is None:
            return
        self.note = note
        dark = self.palette().base().color().lightness() < 128
        self.browser.setHtml(explanation_html(self.explanation, references_note=note, dark=dark))

    def clear(self, message: str = "") -> None:
        self.explanation = None
        self.browser.setHtml(f'<p style="color:gray">{html.escape(message)}</p>')
