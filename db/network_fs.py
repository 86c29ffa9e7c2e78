"""Study files on network file systems: SQLite's locking is not safe there.

SQLite's own documentation warns that its file locks are broken on many network file
systems (NFS, SMB/CIFS, sshfs): two computers writing one study file there can corrupt it.
The mount a file lives on is read from /proc/self/mountinfo (Linux): the mount whose
mount point is the longest prefix of the file's real path, the last one listed where one
is mounted over another.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
# File system types (the mountinfo name) whose locking SQLite cannot rely on.
NETWORK_TYPES = {
    "nfs": "NFS",
    "nfs4": "NFS",
    "cifs": "SMB/CIFS",
    "smb3": "SMB/CIFS",
    "smbfs": "SMB/CIFS",
    "fuse.sshfs": "sshfs",
    "sshfs": "sshfs",
    "fuse.smbnetfs": "SMB/CIFS",
    "davfs": "WebDAV",
    "9p": "9P",
    "afs": "AFS",
}


@dataclass(frozen=True)
class Mount:
    mount_point: str
    fstype: str
    source: str


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash in paths as octal escapes.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[Mount]:
    """The mounts of a mountinfo text, in its order; malformed lines are left out."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        dash = fields.index("-")
        if dash < 5 or len(fields) < dash + 3:
            continue
        mounts.append(Mount(_unescape(fields[4]), fields[dash + 1], _unescape(fields[dash + 2])))
    return mounts


def mount_of(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount holding `path` (an absolute, resolved path)."""
    best: Mount | None = None
    for m in mounts:
        point = m.mount_point.rstrip("/") or "/"
        inside = point == "/" or path == point or path.startswith(point + "/")
        if inside and (best is None or len(point) >= len(best.mount_point.rstrip("/") or "/")):
            best = m
    return best


def network_fs_of(path: Path, mountinfo: str | None = None) -> str | None:
    """The network file system `path` lives on, in words ("NFS"); None for a local disk
    or where the mounts cannot be read (not Linux)."""
    if mountinfo is None:
        try:
            mountinfo = MOUNTINFO.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    found = mount_of(os.path.realpath(path), parse_mountinfo(mountinfo))
    return NETWORK_TYPES.get(found.fstype) if found is not None else None


def network_warning(path: Path, mountinfo: str | None = None) -> str | None:
    """The one-line warning for a study on a network file system; None elsewhere."""
    kind = network_fs_of(path, mountinfo)
    if kind is None:
        return None
    return (
        f"warning: {path} is on a network file system ({kind}), where SQLite's file locking "
        "is not safe: two computers writing it at once can damage the study. Keep the study "
        "on a local disk and send raters kits instead (`meaningbench kit`)."
    )
