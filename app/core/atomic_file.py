"""Write a file whole or not at all, leaving nothing behind when the writer is killed.

The new content goes to a file without a name where the system allows it (Linux's
O_TMPFILE: killed at any point, the kernel frees it), given the target's name only once it
is complete. Elsewhere, or on file systems without O_TMPFILE, it goes to a hidden file named
`.<target>.<pid>.mbpart` beside the target; a writer that dies leaves that behind, and the
next write into the same folder removes those whose writing process is gone.

A set of files that belong together (a dataset folder) is written into a hidden folder
`.<folder>.<pid>.mbpart` beside the target and moved in only once every file is complete.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from meaningbench.db.partials import PART_SUFFIX, part_path, remove_stale_parts

__all__ = [
    "PART_SUFFIX",
    "files_in_place",
    "part_path",
    "remove_stale_parts",
    "replace_atomically",
    "write_text_atomically",
]

# File systems that cannot make an unnamed file answer with one of these.
_NO_TMPFILE = {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT}


def _unnamed_file(folder: Path) -> int | None:
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not Path("/proc/self/fd").is_dir():
        return None
    try:
        return os.open(folder, flag | os.O_RDWR, 0o666)
    except OSError as exc:
        if exc.errno in _NO_TMPFILE:
            return None
        raise


def _give_name(fd: int, part: Path) -> None:
    """Link the unnamed file `fd` to `part` (copied there where linking is refused)."""
    part.unlink(missing_ok=True)
    folder = os.open(part.parent, os.O_RDONLY)
    try:
        # A directory fd makes os.link call linkat(), which follows the /proc link to the
        # open file; plain link() would try to link the /proc entry itself.
        os.link(f"/proc/self/fd/{fd}", part.name, dst_dir_fd=folder, follow_symlinks=True)
        return
    except OSError:
        pass
    finally:
        os.close(folder)
    os.lseek(fd, 0, os.SEEK_SET)
    with open(part, "wb") as out:
        while chunk := os.read(fd, 1 << 20):
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())


@contextlib.contextmanager
def replace_atomically(target: Path, *, encoding: str = "utf-8") -> Iterator[IO[str]]:
    """A text stream whose content becomes `target` when the block ends without an error.

    On an error the target is left as it was and the partial content is dropped.
    """
    folder = target.parent if str(target.parent) else Path(".")
    remove_stale_parts(folder)
    part = part_path(target)
    fd = _unnamed_file(folder)
    named = fd is None
    if fd is None:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        with open(fd, "w", encoding=encoding, newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
            if not named:
                # Name the finished file (a kill here leaves a `.mbpart` the next write
                # removes), then move it over the target in one step.
                named = True
                _give_name(fd, part)
        os.replace(part, target)
    finally:
        if named:
            part.unlink(missing_ok=True)


def write_text_atomically(target: Path, text: str) -> None:
    """`target` holds `text` when this returns; on an error it is as it was."""
    with replace_atomically(target) as fh:
        fh.write(text)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def files_in_place(folder: Path, *, replaces: tuple[str, ...] = ()) -> Iterator[Path]:
    """A staging folder whose files all take their place in `folder` when the block ends
    without an error; on an error `folder` is left exactly as it was.

    Every file is complete before the first one moves, and a move within one file system
    needs no space, so a full disk never leaves half a set. `replaces` names files of an
    earlier set that this set may not write again (they are removed, so that the folder
    never mixes two sets).
    """
    parent = folder.parent if str(folder.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such folder", str(parent))
    remove_stale_parts(parent)
    staging = part_path(folder)
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    try:
        yield staging
        names = sorted(os.listdir(staging))
        for name in names:
            _fsync_file(staging / name)
        if not folder.exists():
            os.replace(staging, folder)  # a new folder appears whole
            return
        for name in names:
            os.replace(staging / name, folder / name)
        for name in replaces:
            if name not in names:
                (folder / name).unlink(missing_ok=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
