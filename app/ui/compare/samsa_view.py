"""SAMSA's explanation drawn (`SceneScores`): each scene, the output sentence it was matched
to, what was found of it."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

FOUND, LOST, NEUTRAL = "#1b7a35", "#b3261e", "#7a828e"
FOUND_DARK, LOST_DARK = "#7ddc95", "#ff8a80"


def _mark(found: bool | None, dark: bool) -> str:
    if found is None:
        return f'<span style="color:{NEUTRAL}">○ implicit (½)</span>'
    colour = (FOUND_DARK if dark else FOUND) if found else (LOST_DARK if dark else LOST)
    return f'<span style="color:{colour}"><b>{"✓ found" if found else "✗ lost"}</b></span>'


def _part_row(part: Mapping[str, Any], dark: bool) -> str:
    text = html.escape(part.get("text") or "")
    centre = html.escape(part.get("centre") or "")
    label = f"{text} <i>[{centre}]</i>" if centre and centre != text else text
    if part.get("remote"):
        label += ' <span style="color:gray">(remote)</span>'
    matches = ", ".join(html.escape(m) for m in part.get("matches", []))
    return (
        f'<tr><td style="padding:2px 10px 2px 24px; color:gray">{part.get("role", "")}</td>'
        f'<td style="padding:2px 10px">{label or "—"}</td>'
        f'<td style="padding:2px 10px">{_mark(part.get("found"), dark)}</td>'
        f'<td style="padding:2px 10px; color:gray">{matches}</td></tr>'
    )


def samsa_html(details: Mapping[str, Any], *, source_note: str = "", dark: bool = False) -> str:
    n_in, n_out = details["n_scenes"], details["n_sentences"]
    total = sum(s["score"] for s in details["scenes"])
    head = (
        f'<p style="font-size:large"><b>SAMSA {100 * details["samsa"]:.1f}</b> · '
        f"SAMSA_abl {100 * details['samsa_abl']:.1f}</p>"
        f"<p>{n_in} scene(s) in the source, {n_out} sentence(s) in the output. "
    )
    if details.get("penalised"):
        head += "SAMSA is 0: the output has more sentences than the source has scenes. "
    else:
        head += (
            f"SAMSA = ({n_out} / {n_in}²) × {total:.3f} = {100 * details['samsa']:.1f}; "
            f"SAMSA_abl = {total:.3f} / {n_in} = {100 * details['samsa_abl']:.1f}. "
        )
    head += "</p>"
    if source_note:
        head += f'<p style="color:gray">{html.escape(source_note)}</p>'
    sentences = details.get("sentences", [])
    body = []
    for k, scene in enumerate(details["scenes"], 1):
        j = scene.get("sentence")
        where = (
            f"sentence {j + 1}: “{html.escape(sentences[j])}”"
            if j is not None and 0 <= j < len(sentences)
            else '<span style="color:gray">no output sentence aligns with it</span>'
        )
        rows = _part_row(scene["main_relation"], dark) + "".join(
            _part_row(p, dark) for p in scene["participants"]
        )
        body.append(
            f'<p style="margin-top:10px"><b>Scene {k}</b> — score {scene["score"]:.3f} → '
            f"{where}</p>"
            f'<table cellspacing="0">{rows}</table>'
        )
    return head + "".join(body)


class SamsaView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.details: dict[str, Any] | None = None
        self.browser = QTextBrowser()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)

    def show_details(self, details: Mapping[str, Any], note: str = "") -> None:
        self.details = dict(details)
        dark = self.palette().base().color().lightness() < 128
        self.browser.setHtml(samsa_html(details, source_note=note, dark=dark))

    def clear(self, message: str = "") -> None:
        self.details = None
        self.browser.setHtml(f'<p style="color:gray">{html.escape(message)}</p>')
