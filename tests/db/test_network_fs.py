"""A study on a network file system: the mount type read from mountinfo, and one warning
per open (logged for the app, printed by the command line)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.db import network_fs
from meaningbench.db.network_fs import mount_of, network_fs_of, network_warning, parse_mountinfo
from meaningbench.db.study import create_study, open_study

# Lines as Linux writes them (proc(5)), a local root, NFS, SMB, sshfs and a space in a path.
MOUNTINFO = """\
22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro
25 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
74 22 0:44 / /srv/lab rw,relatime shared:40 - nfs4 fileserver:/export/lab rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.5,local_lock=none,addr=10.0.0.2
80 22 0:50 / /mnt/nas\\040share rw,relatime shared:45 - cifs //nas/share rw,vers=3.1.1,cache=strict,username=ana,uid=1000,noforceuid,gid=1000,noforcegid,addr=10.0.0.3,file_mode=0755,dir_mode=0755,soft,nounix,serverino,mapposix,rsize=4194304,wsize=4194304,bsize=1048576,echo_interval=60,actimeo=1
90 22 0:52 / /home/ana/remote rw,nosuid,nodev,relatime shared:50 - fuse.sshfs ana@cluster:/data rw,user_id=1000,group_id=1000
95 74 259:3 / /srv/lab/scratch rw,relatime shared:52 - ext4 /dev/nvme1n1 rw
"""


def test_mountinfo_lines_are_parsed() -> None:
    mounts = parse_mountinfo(MOUNTINFO + "garbage line\n")
    assert [m.fstype for m in mounts] == ["ext4", "sysfs", "nfs4", "cifs", "fuse.sshfs", "ext4"]
    assert mounts[3].mount_point == "/mnt/nas share"
    assert mounts[2].source == "fileserver:/export/lab"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/srv/lab/study.mbstudy", "NFS"),
        ("/srv/lab/scratch/study.mbstudy", None),  # a local disk mounted inside the share
        ("/srv/laboratory/study.mbstudy", None),  # a prefix of the name, not of the path
        ("/mnt/nas share/s.mbstudy", "SMB/CIFS"),
        ("/home/ana/remote/s.mbstudy", "sshfs"),
        ("/home/ana/s.mbstudy", None),
    ],
)
def test_the_mount_type_of_a_path(path: str, kind: str | None) -> None:
    found = mount_of(path, parse_mountinfo(MOUNTINFO))
    assert found is not None
    assert network_fs.NETWORK_TYPES.get(found.fstype) == kind


def test_this_machines_own_mountinfo_is_read(tmp_path: Path) -> None:
    # The test folder is on whatever this machine mounts there; the call must not fail.
    if not network_fs.MOUNTINFO.exists():
        pytest.skip("no /proc/self/mountinfo here")
    kind = network_fs_of(tmp_path)
    assert kind is None or kind in set(network_fs.NETWORK_TYPES.values())


def _on_nfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's mount table, with the test folder mounted from NFS."""
    table = tmp_path / "mountinfo"
    folder = os.path.realpath(tmp_path)
    table.write_text(
        MOUNTINFO + f"99 22 0:60 / {folder} rw,relatime - nfs fs:/x rw,vers=3\n", encoding="utf-8"
    )
    monkeypatch.setattr(network_fs, "MOUNTINFO", table)


def test_a_study_on_nfs_is_opened_with_one_warning_per_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    create_study(tmp_path / "s.mbstudy").close()
    caplog.set_level(logging.WARNING, logger="meaningbench.db")
    study = open_study(tmp_path / "s.mbstudy")
    study.close()
    assert study.network_warning is None and not caplog.records  # a local disk: silent
    _on_nfs(tmp_path, monkeypatch)
    for opened in (1, 2):
        study = open_study(tmp_path / "s.mbstudy")
        study.close()
        warnings = [r.getMessage() for r in caplog.records]
        assert len(warnings) == opened
    assert "network file system (NFS)" in warnings[0] and "meaningbench kit" in warnings[0]
    assert study.network_warning == warnings[0]
    assert network_warning(tmp_path / "s.mbstudy") == warnings[0]


def test_the_command_line_prints_the_warning_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In a process of its own, as a user runs it: no test logging handlers in the way.
    create_study(tmp_path / "s.mbstudy").close()
    _on_nfs(tmp_path, monkeypatch)
    script = (
        "import sys; from pathlib import Path; import meaningbench.db.network_fs as n; "
        f"n.MOUNTINFO = Path({str(network_fs.MOUNTINFO)!r}); from meaningbench.cli import main; "
        f"sys.exit(main(['info', {str(tmp_path / 's.mbstudy')!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("SQLite's file locking is not safe") == 1
    assert "SQLite's file locking" not in done.stdout
