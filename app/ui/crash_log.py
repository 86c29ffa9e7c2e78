"""A log file for what goes wrong in the desktop app, whose path the user is shown.

Each run of the app has a session log in `<data dir>/logs`. Two kinds of failure go to it:
- a Python exception escaping a slot (Qt calls slots from C++, so it reaches
  `sys.excepthook`): its traceback is written, and a message box names the file and says
  that the study is intact — ratings and imports are committed when they are made, so an
  error in a screen never takes saved work with it; the window stays open on the study;
- a hard crash (a fault in a native library): `faulthandler` writes the stacks to the same
  file before the process dies; the next start finds that file and names it.
A session that ends normally with nothing logged removes its file. A log with an error in
it is a crash log, `crash-*.log`, from the moment the error is written, so the name a
message box shows is the name the file keeps (`kept_name` is that one rule).
"""

from __future__ import annotations

import faulthandler
import os
import sys
import time
import traceback
from pathlib import Path
from types import TracebackType
from typing import IO

from PySide6.QtWidgets import QWidget

from meaningbench import __version__
from meaningbench.settings import data_dir

SESSION_PREFIX = "session-"
SESSION_GLOB = SESSION_PREFIX + "*.log"
CRASH_PREFIX = "crash-"
UNEXPECTED_TITLE = "Unexpected error"

_window: QWidget | None = None
_previous = sys.excepthook
_log: IO[str] | None = None
_log_path: Path | None = None
_faulthandler_ours = False


def logs_dir() -> Path:
    path = data_dir() / "logs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def session_log_path() -> Path | None:
    """This session's log file (None before `install_crash_log`)."""
    return _log_path


def _open_session_log() -> Path:
    global _log, _log_path
    folder = logs_dir()
    if _log is not None and _log_path is not None:
        if _log_path.parent == folder and _log_path.exists():
            return _log_path
        close_session_log()  # the data folder changed (MEANINGBENCH_HOME), or it was removed
    stamp = time.strftime("%Y%m%d-%H%M%S")
    _log_path = folder / f"{SESSION_PREFIX}{stamp}-{os.getpid()}.log"
    _log = _log_path.open("a", encoding="utf-8")
    # Where fatal errors already go somewhere (PYTHONFAULTHANDLER, a test runner), they stay.
    global _faulthandler_ours
    if not faulthandler.is_enabled():
        faulthandler.enable(file=_log, all_threads=True)
        _faulthandler_ours = True
    return _log_path


def kept_name(path: Path) -> Path:
    """The name a session log with an error in it keeps: `crash-…` for `session-…`."""
    if not path.name.startswith(SESSION_PREFIX):
        return path
    return path.with_name(CRASH_PREFIX + path.name[len(SESSION_PREFIX) :])


def _keep_as_crash_log() -> Path:
    """Give this session's log its kept name now that it holds an error. The open file goes
    on under the new name (faulthandler too); where it cannot be renamed it keeps its name
    for good, so whatever name was shown stays true."""
    global _log_path
    assert _log_path is not None
    kept = kept_name(_log_path)
    if kept != _log_path:
        try:
            _log_path.rename(kept)
            _log_path = kept
        except OSError:
            pass
    return _log_path


def close_session_log() -> None:
    """At a normal end: remove an empty log; one with an error already has its kept name."""
    global _log, _log_path, _faulthandler_ours
    if _log is None or _log_path is None:
        return
    if _faulthandler_ours:
        faulthandler.disable()
        _faulthandler_ours = False
    _log.close()
    try:
        if _log_path.stat().st_size == 0:
            _log_path.unlink()
    except OSError:
        pass  # another instance tidied it meanwhile
    _log = _log_path = None


def earlier_crash_logs() -> list[Path]:
    """Logs left by sessions that did not end normally (newest first), now kept as crash logs.

    A session log still being written by another running instance is empty unless it has
    an error, which that instance has already shown; it is left alone while empty."""
    found = []
    for path in logs_dir().glob(SESSION_GLOB):
        if path == _log_path:
            continue
        try:
            if path.stat().st_size == 0:
                continue
            kept = kept_name(path)
            path.rename(kept)
        except OSError:
            continue
        found.append(kept)
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def _write(kind: type[BaseException], exc: BaseException, trace: TracebackType | None) -> Path:
    _open_session_log()
    assert _log is not None
    study = _study_path()
    _log.write(
        f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} MeaningBench {__version__}, "
        f"Python {sys.version.split()[0]} on {sys.platform}\n"
        f"study: {study or '(none open)'}\n"
    )
    _log.write("".join(traceback.format_exception(kind, exc, trace)))
    _log.write("\n")
    _log.flush()
    return _keep_as_crash_log()


def _study_path() -> Path | None:
    try:
        context = getattr(_window, "context", None)
        path = getattr(context, "path", None)
    except RuntimeError:  # that window is gone
        return None
    return path if isinstance(path, Path) else None


def unexpected_error_text(exc: BaseException, log: Path, study: Path | None) -> str:
    kept = (
        f"The study {study.name} is intact: every rating and import was saved when it was "
        "made, and it stays open."
        if study is not None
        else "No study was open."
    )
    return (
        f"Something went wrong in MeaningBench: {exc}\n\n{kept}\n\n"
        f"The details were written to\n{log}\nPlease attach that file when reporting it."
    )


def _hook(kind: type[BaseException], exc: BaseException, trace: TracebackType | None) -> None:
    try:
        log = _write(kind, exc, trace)
        from meaningbench.ui.dialogs.errors import show_error

        try:
            parent = _window if _window is not None and _window.isVisible() else None
        except RuntimeError:
            parent = None
        text = unexpected_error_text(exc, log, _study_path())
        details = "".join(traceback.format_exception(kind, exc, trace))
        show_error(parent, UNEXPECTED_TITLE, text, details)
    finally:
        _previous(kind, exc, trace)


def install_crash_log(window: QWidget) -> Path:
    """Open this session's log and route exceptions that escape slots to it.

    Installed before the message hook for full disks (`fault_hook`), which passes every
    other exception on to this one. A window made later in the same process (tests make
    many) finds that chain in place and only becomes the window the messages go to."""
    global _window, _previous
    _window = window
    path = _open_session_log()
    top = sys.excepthook
    if top is not _hook and not getattr(top, "__module__", "").startswith("meaningbench.ui"):
        _previous = top
        sys.excepthook = _hook
    return path


def report_earlier_crash(window: QWidget) -> Path | None:
    """After a hard crash: say where its log is (once; the file is then kept as crash-*.log)."""
    logs = earlier_crash_logs()
    if not logs:
        return None
    from meaningbench.ui.dialogs.errors import show_error

    show_error(
        window,
        "MeaningBench ended unexpectedly",
        "The last session of MeaningBench ended unexpectedly. Studies keep every rating and "
        "import made before that moment.\n\n"
        f"What happened was written to\n{logs[0]}\nPlease attach that file when reporting it.",
    )
    return logs[0]
