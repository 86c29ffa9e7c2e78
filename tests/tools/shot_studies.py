"""The set-ups the campaign's screenshot programs share: the lead's study of the kit shots,
the main window opened on a study at one page, each theme at each window size, and a dialog
over the window as a screen of that size leaves it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tests.tools.screenshots import wait

# The window sizes of the shots: a common laptop, and the smallest screen the app supports.
SIZES = [(1280, 720), (1024, 640)]
THEMES = ("light", "dark")
Practice = tuple[str, str, float, float, str]


def lead_study(home: Path, practice: Sequence[Practice] = ()) -> Path:
    """The demo study as a lead's, with an overlap of 2 of 3 and the practice items given."""
    from meaningbench.annotation.practice import add_practice
    from meaningbench.annotation.settings import load_settings, save_settings
    from meaningbench.datasets.demo import build_demo_study
    from meaningbench.db.study import open_study

    path = build_demo_study(home / "lab.mbstudy")
    study = open_study(path)
    try:
        with study.session(write=True) as s:
            cfg = load_settings(s)
            cfg.overlap_k, cfg.pool_size = 2, 3
            save_settings(s, cfg)
        if practice:
            add_practice(study, list(practice))
    finally:
        study.close()
    return path


def window_on(path: Path, page: str | None = None) -> tuple[Any, Any]:
    """(app, window): the main window at the screen's corner on `path`, at `page` when
    given, light."""
    from PySide6.QtCore import QPoint

    from meaningbench.ui.launch import create_application, start

    app = create_application()
    window = start([str(path)])
    window.move(QPoint(0, 0))
    window.set_theme("light")
    wait(app, 60, lambda: window.context.study is not None)
    if page is not None:
        window.show_page(page)
    return app, window


def looks(
    app: Any, window: Any, sizes: Sequence[tuple[int, int]] = SIZES, themes: Sequence[str] = THEMES
) -> Iterator[tuple[int, str]]:
    """The window in each theme at each size, as (width, theme); light again after."""
    for theme in themes:
        window.set_theme(theme)
        for width, height in sizes:
            window.resize(width, height)
            wait(app, 0.3)
            window.resize(width, height)  # once more: the first can land before the layout
            yield width, theme
    window.set_theme("light")


def over_window(app: Any, window: Any, dialog: Any, wanted: tuple[int, int]) -> None:
    """`dialog` centred on the window, as large as a screen of the window's size lets
    it open (`meaningbench.ui.window_state.fitted_size`): its size on such a laptop."""
    from PySide6.QtCore import QSize

    from meaningbench.ui.window_state import fitted_size

    dialog.resize(fitted_size(QSize(*wanted), window.size()))
    dialog.move(window.frameGeometry().center() - dialog.rect().center())
    wait(app, 0.5)
