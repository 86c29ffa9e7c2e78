"""Pages of the main window's navigation, and the slot other features plug pages into.

A page is any QWidget made by a factory that receives the StudyContext; it refreshes
itself from the context's `study_changed`. Optional hooks the window calls when present:
`page_shown()`, `save_state() -> dict`, `restore_state(dict)`, `shutdown()`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from meaningbench.ui.context import StudyContext

PageFactory = Callable[["StudyContext"], QWidget]


@dataclass
class PageSpec:
    key: str
    title: str
    factory: PageFactory
    icon: str | None = None  # a name in resources/icons/
    needs_study: bool = True
