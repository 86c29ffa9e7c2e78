"""Opening and creating study files, and telling the user's problems from bugs.

The screens hold an open study as a `StudyHandle` that they pass back to the queries: it
tells where the file is and whether it may be written, and nothing more, so no screen
opens a session or reaches the ORM; the queries take the open study behind it. Opening
one loads SQLAlchemy and Alembic, so those imports wait for the first call: the window is
drawn before they load.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from meaningbench.db.errors import StudyFileError
from meaningbench.db.faults import describe_fault
from meaningbench.errors import UserError

if TYPE_CHECKING:
    from meaningbench.db.study import Study

__all__ = [
    "StudyFileError",
    "StudyHandle",
    "create_study",
    "demo_available",
    "describe_fault",
    "is_user_error",
    "open_study",
    "work_as_guest",
]


class StudyHandle(Protocol):
    """An open study as the screens hold it: its file, whether it is read-only and why,
    and closing it. Everything else is asked of the queries, which take the handle."""

    @property
    def path(self) -> Path: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def read_only_reason(self) -> str: ...

    def close(self) -> None: ...


def study_of(handle: StudyHandle) -> Study:
    """The open study behind a handle, for the queries' own use (never the screens')."""
    from meaningbench.db.study import Study

    if not isinstance(handle, Study):
        raise TypeError(f"not an open study: {handle!r}")
    return handle


def work_as_guest() -> None:
    """A job's child process: its study connections leave the log to the app that holds the
    study open (see `meaningbench.db.study_files.work_as_guest`)."""
    from meaningbench.db.study_files import work_as_guest as guest

    guest()


def open_study(path: str | Path, *, allow_read_only: bool = False) -> Study:
    """Open an existing study (upgrading an older schema); see `meaningbench.db.study`.

    The window keeps it as a `StudyHandle`; a job run in a process of its own works on it."""
    from meaningbench.db.study import open_study as open_file

    return open_file(path, allow_read_only=allow_read_only)


def create_study(path: str | Path) -> Study:
    """Create a new, empty study at `path` (an existing file is refused)."""
    from meaningbench.db.study import create_study as create_file

    return create_file(path)


def is_user_error(exc: BaseException) -> bool:
    """Bad input or a study file problem: the user's to fix, never a bug to report."""
    return isinstance(exc, (UserError, StudyFileError))


def demo_available() -> tuple[bool, str]:
    """Whether the demo study can be built here, found without importing the importer."""
    import importlib.util

    if importlib.util.find_spec("meaningbench.datasets.demo") is None:
        return False, "The demo study is not part of this installation."
    return True, ""
