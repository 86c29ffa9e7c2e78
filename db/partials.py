"""Hidden partial files (`.<name>.<pid>.mbpart`, with a study's companions): written
beside their target and named only when complete, so a killed writer never leaves a
half-made file under the user's name. What a writer that died left behind is removed by
the next write into the folder and the next study opened in it: a killed import's four
files (the study built aside, its `-wal`, `-shm` and `-writer`) do not outlive the next use
of that folder.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
from pathlib import Path

# The files beside a study that belong to it: SQLite's write-ahead log, shared memory and
# journal, and the name of its long writer (see meaningbench.db.writers).
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal", "-writer")

PART_SUFFIX = ".mbpart"
# With a study's companions: a study built aside (an import into a new study) has them.
_PART_NAME = re.compile(
    r"\..+\.(\d+)\.mbpart(?:" + "|".join(map(re.escape, COMPANION_SUFFIXES)) + ")?"
)


def part_path(target: Path, pid: int | None = None) -> Path:
    return target.with_name(f".{target.name}.{os.getpid() if pid is None else pid}{PART_SUFFIX}")


def _process_gone(pid: int) -> bool:
    if sys.platform == "win32":
        return True  # there, a file a live process still writes cannot be removed anyway
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's
    return False


def remove_stale_parts(folder: Path) -> list[Path]:
    """Remove the partial files of writers that died in `folder`; returns those removed."""
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = _PART_NAME.fullmatch(name)
        if m is None or int(m.group(1)) == os.getpid() or not _process_gone(int(m.group(1))):
            continue
        path = folder / name
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)  # a set of files a killed writer staged together
            else:
                path.unlink()
            removed.append(path)
    return removed
