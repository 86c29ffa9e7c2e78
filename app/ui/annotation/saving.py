"""How the rating screens write: each write is an op run at once through the app's runner
(which tells every screen what it changed), and a write that fails is answered one way.

A rater's mistake (`UserError`) is said in the screen's hint line; a full disk or a
read-only medium gets a message box that says so. Either way the screen stays as it was,
with the values the rater set, so nothing already submitted is lost and the same key
tries again once there is room. Anything else is a bug and goes on to the crash handler.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from PySide6.QtWidgets import QWidget

from meaningbench.errors import UserError
from meaningbench.runtime import Job
from meaningbench.runtime.changes import Wrote
from meaningbench.ui.workers import JobRunner

T = TypeVar("T")


@dataclass(frozen=True)
class Saved(Generic[T]):
    """A write that went through, with the value its job returned."""

    value: T


class ScreenWrites:
    """A screen's writes: run on the GUI thread (a key press must not wait for a thread)."""

    def __init__(self, screen: QWidget, runner: JobRunner, notice: Callable[[str], None]) -> None:
        self.screen = screen
        self.runner = runner
        self.notice = notice

    @overload
    def save(self, title: str, job: Job[Wrote[T]]) -> Saved[T] | None: ...

    @overload
    def save(self, title: str, job: Job[T]) -> Saved[T] | None: ...

    def save(self, title: str, job: Job[Any]) -> Saved[Any] | None:
        """Run the write; None when it failed and the screen has said why (`title` heads
        the message box of a full or read-only disk: "Rating not saved")."""
        try:
            return Saved(self.runner.run_now(job))
        except UserError as exc:
            self.notice(str(exc))
            return None
        except Exception as exc:
            from meaningbench.ui.dialogs.errors import show_error, user_fault

            fault = user_fault(exc)
            if fault is None:
                raise
            show_error(self.screen, title, str(fault))
            return None
