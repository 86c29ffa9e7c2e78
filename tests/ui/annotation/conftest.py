"""A study with a few items and a shown rating screen over it, offscreen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.study import Study, create_study
from tests.annotation.factories import add_items


def configure(study: Study, **changes) -> None:
    with study.session() as s:
        st = load_settings(s)
        for key, value in changes.items():
            setattr(st, key, value)
        save_settings(s, st)


def activate(study: Study, name: str, scale: str) -> None:
    with study.session() as s:
        st = load_settings(s)
        for d in st.dimensions:
            if d.name == name:
                d.active, d.scale = True, scale
        save_settings(s, st)


@pytest.fixture
def study(tmp_path: Path):
    st = create_study(tmp_path / "ui.mbstudy")
    add_items(st, 6, 2)
    configure(st, seed=21, qc_enabled=False)
    yield st
    st.close()


def shown(qtbot, screen: QWidget, size: tuple[int, int] | None = (1200, 800)) -> QWidget:
    """`screen` shown and active, as a rater's window is."""
    qtbot.addWidget(screen)
    if size is not None:
        screen.resize(*size)
    with qtbot.waitActive(screen):
        screen.show()
        screen.activateWindow()
    return screen


@pytest.fixture
def make_screen(qtbot, study) -> Callable[..., object]:
    from meaningbench.ui.annotation.screen import AnnotationScreen

    def make(name: str = "alice", target: Study | None = None):
        return shown(qtbot, AnnotationScreen(target or study, name))

    return make


@pytest.fixture
def make_sxs(qtbot, study) -> Callable[..., object]:
    """A side-by-side screen on the study, whose protocol it sets to sxs."""
    from meaningbench.annotation.protocols import set_protocol
    from meaningbench.ui.annotation.side_by_side import SideBySideScreen

    set_protocol(study, "sxs")

    def make(name: str = "alice"):
        return shown(qtbot, SideBySideScreen(study, name), (1400, 800))

    return make


def press(qtbot, screen: QWidget, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """A key press where the user's key goes: the focused widget (or the screen)."""
    target = QApplication.focusWidget() or screen
    qtbot.keyClick(target, key, modifier)


def type_text(qtbot, screen: QWidget, text: str) -> None:
    target = QApplication.focusWidget() or screen
    qtbot.keyClicks(target, text)
