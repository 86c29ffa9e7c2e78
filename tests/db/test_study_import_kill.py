"""`meaningbench import` into a new study killed with SIGKILL half way: no study appears
under the name the user gave, and what the killed process left is removed by the next
import into that folder, or the next study opened there, so nothing is left that a user
must find and delete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fault_tools import ROOT, cli, env, files_in, study_state, write_pairs

ROWS = 300_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_pairs(tmp_path_factory.mktemp("data") / "big.csv", ROWS)


def _growing_log(folder: Path) -> bool:
    for name in os.listdir(folder):
        if name.endswith("-wal"):
            try:
                if (folder / name).stat().st_size > 1 << 20:
                    return True
            except FileNotFoundError:
                pass
    return False


def _kill_when_writing(folder: Path, target: Path, data: Path) -> int:
    proc = subprocess.Popen(
        [sys.executable, "-m", "meaningbench.cli", "import", str(target), str(data)],
        env=env(),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # Half way: the write-ahead log of the study being built (`.<name>.<pid>.mbpart-wal`)
    # has grown past a megabyte.
    deadline = time.monotonic() + 120
    while not _growing_log(folder):
        assert proc.poll() is None, "the import ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    return proc.pid


def test_a_killed_import_into_a_new_study_leaves_no_study(big_csv: Path, tmp_path: Path) -> None:
    folder = tmp_path / "studies"
    folder.mkdir()
    target = folder / "new.mbstudy"
    pid = _kill_when_writing(folder, target, big_csv)
    left = files_in(folder)
    assert "new.mbstudy" not in left  # no empty or half-made study under the user's name
    assert all(name.startswith(f".new.mbstudy.{pid}.mbpart") for name in left), left

    small = write_pairs(tmp_path / "small.csv", 10)
    done = cli("import", target, small)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert files_in(folder) == ["new.mbstudy"]  # the dead import's partials are gone
    assert study_state(target)[:2] == ("ok", 10)


def test_opening_any_study_in_the_folder_removes_what_a_killed_import_left(
    big_csv: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "studies"
    folder.mkdir()
    other = folder / "other.mbstudy"
    assert cli("import", other, write_pairs(tmp_path / "small.csv", 10)).returncode == 0
    pid = _kill_when_writing(folder, folder / "new.mbstudy", big_csv)
    left = [n for n in files_in(folder) if n.startswith(f".new.mbstudy.{pid}.mbpart")]
    assert len(left) == 4, left  # the study built aside, its -wal, -shm and -writer
    done = cli("info", other)  # no import: a command that only reads another study
    assert done.returncode == 0, done.stderr
    assert files_in(folder) == ["other.mbstudy"]


def test_an_import_into_a_new_study_names_it_only_when_done(tmp_path: Path) -> None:
    folder = tmp_path / "studies"
    folder.mkdir()
    bad = tmp_path / "bad.csv"
    bad.write_text("source,output,annotator,meaning\nS.,O.,r1,50\nS2.,O2.,r1,500\n", "utf-8")
    done = cli("import", folder / "n.mbstudy", bad)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert files_in(folder) == []
    good = write_pairs(tmp_path / "good.csv", 3)
    assert cli("import", folder / "n.mbstudy", good).returncode == 0
    assert files_in(folder) == ["n.mbstudy"] and not os.path.exists(f"{folder}/n.mbstudy-wal")
