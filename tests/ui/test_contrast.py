"""WCAG AA contrast in both themes: text 4.5:1, the outline of a control 3:1."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QCheckBox, QLabel, QRadioButton, QVBoxLayout, QWidget

from meaningbench.ui.dashboard.plots import PlotColors
from meaningbench.ui.dashboard.tables import status_color

Role = QPalette.ColorRole


def luminance(c: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def best_ring_contrast(widget: QWidget, background: QColor) -> float:
    """The strongest contrast any pixel of the indicator (left of the text) has against
    the window: an outline that is barely there scores low."""
    image = widget.grab().toImage()
    h = image.height()
    return max(
        contrast(image.pixelColor(x, y), background) for x in range(min(h, 22)) for y in range(h)
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_text_and_controls_meet_wcag_aa(window, qtbot, theme) -> None:
    window.set_theme(theme)
    pal = window.palette()
    pairs = {
        "window text": (Role.WindowText, Role.Window),
        "text": (Role.Text, Role.Base),
        "button text": (Role.ButtonText, Role.Button),
        "placeholder": (Role.PlaceholderText, Role.Base),
        "tooltip": (Role.ToolTipText, Role.ToolTipBase),
        "selection": (Role.HighlightedText, Role.Highlight),
    }
    for name, (fg, bg) in pairs.items():
        assert contrast(pal.color(fg), pal.color(bg)) >= 4.5, (theme, name)

    host = QWidget()
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    muted = QLabel("muted")
    muted.setObjectName("mutedLabel")
    error = QLabel("error")
    error.setProperty("role", "error")
    radio, radio_on = QRadioButton("radio"), QRadioButton("radio, chosen")
    check = QCheckBox("check")
    for w in (muted, error, radio, radio_on, check):
        layout.addWidget(w)
    host.show()
    radio_on.setChecked(True)
    qtbot.waitExposed(host)
    background = pal.color(Role.Window)
    for label in (muted, error):
        fg = label.palette().color(Role.WindowText)
        assert contrast(fg, background) >= 4.5, (theme, label.text(), fg.name())
    for control in (radio, radio_on, check):
        assert best_ring_contrast(control, background) >= 3.0, (theme, control.text())
    dark = theme == "dark"
    for status in ("pass", "fail"):
        assert contrast(status_color(status, dark), pal.color(Role.Base)) >= 4.5, (theme, status)

    # Plot text: axis labels, the key and the human-ceiling label.
    colors = PlotColors.from_palette(pal)
    for name in ("text", "muted", "accent"):
        assert contrast(getattr(colors, name), colors.background) >= 4.5, (theme, name)
