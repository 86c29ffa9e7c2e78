"""An export killed with SIGKILL half way leaves the folder as it was: no partial file a
user must find and delete, and the previous export, if any, untouched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.core.atomic_file import PART_SUFFIX, part_path
from meaningbench.datasets.exporters import export_study
from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study, open_study

ROOT = Path(__file__).resolve().parents[2]
ITEMS = 30_000

# Exports the study and stops, after the first 10,000 rows, until its stdin closes: the
# test kills it there. With "named" it writes as on systems without unnamed files.
WRITER = """
import sys
from meaningbench.core import atomic_file
from meaningbench.datasets.exporters import export_study
from meaningbench.db.study import open_study

if sys.argv[3] == "named":
    atomic_file._unnamed_file = lambda folder: None
study = open_study(sys.argv[1])

def progress(rows):
    print("writing", rows, flush=True)
    sys.stdin.read()

export_study(study, sys.argv[2], ratings=True, progress=progress)
"""


@pytest.fixture(scope="module")
def big_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("big")
    data = folder / "big.csv"
    with data.open("w", encoding="utf-8") as fh:
        fh.write("source,output,annotator,meaning\n")
        for i in range(ITEMS):
            fh.write(
                f"The source sentence number {i} is long enough.,Output {i}.,r{i % 7},{i % 101}\n"
            )
    study = create_study(folder / "big.mbstudy")
    import_file(study, data)
    study.close()
    return folder / "big.mbstudy"


def _kill_mid_export(study: Path, out: Path, mode: str) -> tuple[int, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(study), str(out), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the export is half way: rows written, file open
    assert line.startswith("writing"), line
    during = sorted(os.listdir(out.parent))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    return proc.pid, during


@pytest.mark.parametrize("mode", ["unnamed", "named"])
def test_a_killed_export_leaves_nothing_behind(big_study: Path, tmp_path: Path, mode: str) -> None:
    out = tmp_path / "ratings.csv"
    out.write_text("the previous export\n", encoding="utf-8")
    pid, during = _kill_mid_export(big_study, out, mode)
    left = sorted(os.listdir(tmp_path))
    assert out.read_text(encoding="utf-8") == "the previous export\n"
    part = part_path(out, pid)
    if mode == "unnamed":
        # The half-written rows live in a file without a name: nothing to see, nothing left.
        assert during == left == ["ratings.csv"]
    else:
        assert part.name in during and part.stat().st_size > 100_000
        # The next export into the folder removes what the dead writer left.
        study = open_study(big_study)
        try:
            report = export_study(study, tmp_path / "other.csv")
        finally:
            study.close()
        assert report.items == ITEMS
        assert sorted(os.listdir(tmp_path)) == ["other.csv", "ratings.csv"]
    assert not [n for n in os.listdir(tmp_path) if n.endswith(PART_SUFFIX)]


def test_a_live_writers_part_is_kept(tmp_path: Path) -> None:
    from meaningbench.core.atomic_file import remove_stale_parts

    live = part_path(tmp_path / "a.csv", os.getppid())  # a process that is surely alive
    live.write_text("being written", encoding="utf-8")
    dead = part_path(tmp_path / "b.csv", _a_dead_pid())
    dead.write_text("left by a killed writer", encoding="utf-8")
    unrelated = tmp_path / ".notes.123.txt"
    unrelated.write_text("not ours", encoding="utf-8")
    assert remove_stale_parts(tmp_path) == [dead]
    assert live.exists() and unrelated.exists() and not dead.exists()


def _a_dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(proc.stdout)


def test_a_failed_export_keeps_the_previous_file(big_study: Path, tmp_path: Path) -> None:
    out = tmp_path / "items.csv"
    out.write_text("the previous export\n", encoding="utf-8")
    study = open_study(big_study)

    def fail(rows: int) -> None:
        raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            export_study(study, out, progress=fail)
    finally:
        study.close()
    assert sorted(os.listdir(tmp_path)) == ["items.csv"]
    assert out.read_text(encoding="utf-8") == "the previous export\n"


def test_a_target_that_cannot_be_written_is_a_message(
    big_study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from meaningbench.cli import main

    (tmp_path / "a-file").write_text("in the way", encoding="utf-8")
    (tmp_path / "a-folder.csv").mkdir()
    for target in (tmp_path / "a-file" / "x.csv", tmp_path / "a-folder.csv"):
        assert main(["export", str(big_study), str(target)]) == 2
        err = capsys.readouterr().err
        assert f"{target}: cannot write the export (" in err and "nothing was written" in err
        assert "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["a-file", "a-folder.csv"]
    assert os.listdir(tmp_path / "a-folder.csv") == []
