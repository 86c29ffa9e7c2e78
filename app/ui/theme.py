"""Light and dark themes (Fusion + palettes + a small style sheet) and the app-wide text size.

Both themes are built from explicit palettes rather than left to the platform, so they look
the same on every desktop and under Xvfb. "system" follows the platform's colour scheme
(`QStyleHints.colorScheme()`) and changes with it while the app runs.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from meaningbench.settings import resources_dir

THEMES = ("system", "light", "dark")
MIN_SCALE, MAX_SCALE, SCALE_STEP = 0.7, 2.0, 0.1

_LIGHT = {
    "window": "#f4f5f7",
    "base": "#ffffff",
    "alt": "#f7f8fa",
    "text": "#1d2127",
    "mid": "#c9ced6",
    "button": "#eceef1",
    "highlight": "#2f6fd0",
    "highlighted_text": "#ffffff",
    "link": "#2261c2",
    "tooltip_base": "#ffffe9",
    "tooltip_text": "#1d2127",
    "placeholder": "#6b7280",  # 4.8:1 on white (WCAG AA)
    "disabled": "#9aa1ab",
}
_DARK = {
    "window": "#23262b",
    "base": "#1b1d21",
    "alt": "#24272c",
    "text": "#e3e6ea",
    "mid": "#3c4149",
    "button": "#2d3137",
    "highlight": "#2f6fd0",  # white on it at 4.9:1 (#3d7ee0 was 4.0:1)
    "highlighted_text": "#ffffff",
    "link": "#7fb0ff",
    "tooltip_base": "#2d3137",
    "tooltip_text": "#e3e6ea",
    "placeholder": "#8a919b",
    "disabled": "#6b717a",
}


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def resolve_theme(choice: str, system_dark: bool) -> str:
    """'light' or 'dark' for a preference of system / light / dark."""
    if choice in ("light", "dark"):
        return choice
    return "dark" if system_dark else "light"


def build_palette(kind: str) -> QPalette:
    c = _DARK if kind == "dark" else _LIGHT
    pal = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    pal.setColor(role.Window, QColor(c["window"]))
    pal.setColor(role.WindowText, QColor(c["text"]))
    pal.setColor(role.Base, QColor(c["base"]))
    pal.setColor(role.AlternateBase, QColor(c["alt"]))
    pal.setColor(role.Text, QColor(c["text"]))
    pal.setColor(role.Button, QColor(c["button"]))
    pal.setColor(role.ButtonText, QColor(c["text"]))
    pal.setColor(role.BrightText, QColor("#ff5555"))
    pal.setColor(role.Highlight, QColor(c["highlight"]))
    pal.setColor(role.HighlightedText, QColor(c["highlighted_text"]))
    pal.setColor(role.Link, QColor(c["link"]))
    pal.setColor(role.ToolTipBase, QColor(c["tooltip_base"]))
    pal.setColor(role.ToolTipText, QColor(c["tooltip_text"]))
    pal.setColor(role.PlaceholderText, QColor(c["placeholder"]))
    pal.setColor(role.Mid, QColor(c["mid"]))
    pal.setColor(role.Midlight, QColor(c["mid"]).lighter(115))
    pal.setColor(role.Dark, QColor(c["mid"]).darker(140))
    pal.setColor(role.Light, QColor(c["base"]).lighter(110))
    for r in (role.WindowText, role.Text, role.ButtonText):
        pal.setColor(group.Disabled, r, QColor(c["disabled"]))
    pal.setColor(group.Disabled, role.Highlight, QColor(c["mid"]))
    return pal


def style_sheet(kind: str) -> str:
    folder = resources_dir() / "style"
    try:
        text = (folder / f"{kind}.qss").read_text(encoding="utf-8")
    except OSError:
        return ""  # a missing style sheet leaves the palette alone: still usable
    # Images (the check box's tick) beside the sheet: Qt reads a relative url() against
    # the working directory, not the sheet's folder.
    return text.replace("@STYLE_DIR@", folder.as_posix())


class ThemeManager:
    """Applies the chosen theme and text scale; remembers the platform's base font size."""

    def __init__(self, app: QApplication) -> None:
        self.app = app
        self.choice = "system"
        self.scale = 1.0
        self.current = "light"
        # Platforms without a colour scheme (Xvfb, offscreen) report Unknown: light.
        self.system_dark = system_is_dark()
        self._base_point_size = app.font().pointSizeF() if app.font().pointSizeF() > 0 else 10.0
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.connect(self._on_system_scheme_changed)

    def apply(self, choice: str | None = None, scale: float | None = None) -> None:
        if choice is not None:
            self.choice = choice if choice in THEMES else "system"
        if scale is not None:
            self.scale = clamp_scale(scale)
        self.current = resolve_theme(self.choice, self.system_dark)
        self.app.setStyle("Fusion")
        self.app.setPalette(build_palette(self.current))
        font = QFont(self.app.font())
        font.setPointSizeF(self._base_point_size * self.scale)
        self.app.setFont(font)
        self.app.setStyleSheet(style_sheet(self.current))

    def point_size(self) -> float:
        return self._base_point_size * self.scale

    def _on_system_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        self.system_dark = scheme == Qt.ColorScheme.Dark
        if self.choice == "system":
            self.apply()


def clamp_scale(scale: float) -> float:
    return round(min(MAX_SCALE, max(MIN_SCALE, scale)), 2)
