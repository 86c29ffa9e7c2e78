"""Messages that used to say something else than what happened: a dangling link, an empty
file, and a run cut short by a full disk."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.db.study import create_study
from tests.fault_tools import assert_one_line_error, cli, files_in, unprivileged, write_pairs


def test_importing_into_a_dangling_link_says_so(tmp_path: Path) -> None:
    data = write_pairs(tmp_path / "p.csv", 5)
    link = tmp_path / "s.mbstudy"
    link.symlink_to(tmp_path / "gone" / "s.mbstudy")
    done = cli("import", link, data)
    line = assert_one_line_error(done, str(link), "symbolic link", "does not exist")
    assert "another program" not in line
    assert files_in(tmp_path) == ["p.csv", "s.mbstudy"] and link.is_symlink()


def test_an_empty_file_is_not_called_missing(tmp_path: Path) -> None:
    empty = tmp_path / "s.mbstudy"
    empty.touch()
    for args in (("info", empty), ("import", empty, write_pairs(tmp_path / "p.csv", 5))):
        line = assert_one_line_error(cli(*args), str(empty), "empty (0 bytes)")
        assert "no such study" not in line
    assert empty.stat().st_size == 0


def test_info_counts_the_scores_of_a_run_whose_end_could_not_be_written(tmp_path: Path) -> None:
    """A scorer killed on a full disk: its run still says `running`, with the count it
    stores at the end (0), and `info` cannot store that it was cut short."""
    from meaningbench.datasets.importer import import_file

    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    import_file(study, write_pairs(tmp_path / "p.csv", 300))
    study.close()
    assert cli("score", path, "--metrics", "chrf").returncode == 0
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
    try:
        with conn:
            conn.execute(
                "UPDATE metric_run SET status = 'running', n_items = 0, finished_at = NULL, "
                "owner_pid = ?, owner_host = ?, owner_started = NULL",
                (int(gone.stdout), socket.gethostname()),
            )
        held = dict(conn.execute("SELECT run_id, COUNT(*) FROM score GROUP BY run_id"))
    finally:
        conn.close()
    assert held == {1: 300}
    as_user = unprivileged()
    if as_user is None and os.geteuid() == 0:
        pytest.skip("cannot make a study read-only for root here")
    path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    try:
        shown = cli("info", path, "--json", preexec=as_user)
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert shown.returncode == 0, shown.stderr
    [run] = json.loads(shown.stdout)["metric_runs"]
    assert (run["status"], run["n_items"]) == ("interrupted", 300)
