"""The dark theme's controls, measured: icons stand out from the window at 3:1 or more
whenever they were made (an icon made in the light theme, or before the theme applied,
was drawn dark on dark), a disabled Submit looks disabled, and the dialogs' Close
buttons carry no icon drawn for another theme."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QIcon, QImage, QPalette
from PySide6.QtWidgets import QDialogButtonBox, QProxyStyle, QPushButton, QStyle

from tests.ui.conftest import open_in
from tests.ui.test_contrast import contrast

Role = QPalette.ColorRole


def ink(image: QImage) -> list[QColor]:
    """The icon's drawn pixels (mostly opaque ones: the antialiased edge is left out)."""
    return [
        image.pixelColor(x, y)
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y).alpha() > 200
    ]


def icon_contrast(icon: QIcon, background: QColor, mode: QIcon.Mode = QIcon.Mode.Normal) -> float:
    pixels = ink(icon.pixmap(24, mode).toImage())
    assert pixels, "the icon draws something"
    return min(contrast(p, background) for p in pixels)


@pytest.mark.parametrize(("made_in", "shown_in"), [("light", "dark"), ("dark", "light")])
def test_icons_made_in_one_theme_stand_out_in_the_other(
    window, qtbot, study_with_facts, made_in: str, shown_in: str
) -> None:
    path, _facts = study_with_facts
    window.set_theme(made_in)
    window.show()
    open_in(window, path, qtbot)
    assert window.show_page("dashboard")  # its panels' export buttons are made now
    dashboard = window.page("dashboard")
    window.set_theme(shown_in)
    qtbot.wait(20)
    background = window.palette().color(Role.Window)
    buttons = [b for b in dashboard.findChildren(QPushButton) if not b.icon().isNull()]
    assert buttons, "the dashboard has icon buttons (export)"
    for button in buttons:
        assert icon_contrast(button.icon(), background) >= 3.0, (shown_in, button.text())
    for action in window.actions_.needs_study:
        if not action.icon().isNull():
            assert icon_contrast(action.icon(), background) >= 3.0, action.text()
    # A disabled control's icon is drawn in the disabled colour, not as an enabled one.
    icon = buttons[0].icon()
    normal = ink(icon.pixmap(24).toImage())[0]
    disabled = ink(icon.pixmap(24, QIcon.Mode.Disabled).toImage())[0]
    assert contrast(normal, disabled) > 1.5


def test_a_disabled_submit_looks_disabled_in_both_themes(window, qtbot, study_with_facts) -> None:
    path, _facts = study_with_facts
    window.show()
    open_in(window, path, qtbot)
    assert window.show_page("annotate")
    page = window.page("annotate")
    assert page.start("ann1")
    submit = page.screen.submit_button
    for theme in ("dark", "light", "dark"):
        window.set_theme(theme)
        qtbot.wait(20)
        submit.setEnabled(True)
        on = submit.grab().toImage()
        submit.setEnabled(False)
        off = submit.grab().toImage()
        centre = on.width() // 2, on.height() // 2
        fill_on, fill_off = on.pixelColor(8, centre[1]), off.pixelColor(8, centre[1])
        window_colour = window.palette().color(Role.Window)
        accent = window.palette().color(Role.Highlight)
        assert fill_on.name() == accent.name(), theme
        # Disabled: the accent is gone (a pale accent read as ready), the fill is close to
        # the window's, and the words are in the disabled text colour, not bold white.
        assert contrast(fill_off, accent) > 1.5, (theme, fill_off.name())
        assert contrast(fill_off, window_colour) < 1.5, (theme, fill_off.name())
        words = submit.palette().color(QPalette.ColorGroup.Disabled, Role.ButtonText)
        drawn = {c.name() for c in ink(off)}
        assert QColor("#ffffff").name() not in drawn, theme
        assert contrast(words, fill_off) >= 2.0, theme


class IconsOnButtons(QProxyStyle):
    """A platform that puts its icons on dialog buttons, as GNOME's theme does."""

    def styleHint(self, hint, option=None, widget=None, data=None):  # noqa: ANN001, ANN201, N802
        if hint == QStyle.StyleHint.SH_DialogButtonBox_ButtonsHaveIcons:
            return 1
        return super().styleHint(hint, option, widget, data)


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_the_dialogs_close_buttons_carry_no_icon_of_another_theme(
    window, qtbot, theme: str
) -> None:
    """The platform's dialog-button icons are drawn for a light window (a dark ✕ on the
    dark theme): the themes leave them out."""
    window.set_theme(theme)
    box = QDialogButtonBox()
    qtbot.addWidget(box)
    box.setStyle(IconsOnButtons("Fusion"))
    box.setStandardButtons(QDialogButtonBox.StandardButton.Close)
    assert box.button(QDialogButtonBox.StandardButton.Close).icon().isNull()
