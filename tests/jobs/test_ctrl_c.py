"""Ctrl+C ends the real `meaningbench score` process at every phase, keeps what was
committed, and a second Ctrl+C ends it at once.

Each test starts the command in a subprocess, waits until it is in the phase (a progress
line, a file the test metric writes when it starts waiting, a library such as SQLite's or
torch's mapped into the process), sends SIGINT and waits for the process. The command promises to end within
5 s (meaningbench.commands.score.STOP_LIMIT_S); on a busy machine a clean stop can take
longer than on an idle one, so a test fails only past HANG_S, which a hang always reaches.
The measured time is printed, and appended to the file named by TIMES_ENV when set.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from meaningbench.db.study import Study
from tests.jobs.conftest import make_rows
from tests.jobs.gate import DEAF_ENV, GATE_ENV, PHASE_ENV
from tests.jobs.studydata import add_items

ROOT = Path(__file__).resolve().parents[2]
# More than the first chunk (32 items) and the largest (2000): chunks are always left.
ITEMS = 4000
HANG_S = 60.0
START_S = 180.0  # a busy machine may take long to import everything
# What the `meaningbench` console script runs.
CONSOLE_SCRIPT = "import sys\nfrom meaningbench.cli import main\nsys.exit(main())\n"
TIMES_ENV = "MEANINGBENCH_TEST_CTRL_C_TIMES"
PROGRAM = (
    "import sys, tests.jobs.phase_metric\n"
    "from meaningbench.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


@dataclass
class Ended:
    code: int
    err: str
    after_s: float  # from the first SIGINT to the end of the process


def _default_sigint() -> None:
    # A process started in the background by a non-interactive shell (a CI step, `cmd &`)
    # inherits SIGINT ignored, and so would the command: it is the user's Ctrl+C we test.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Score:
    """`meaningbench score` running in a subprocess."""

    def __init__(
        self,
        study: Path,
        tmp: Path,
        *args: str,
        phase: str = "",
        deaf: bool = False,
        command: tuple[str, ...] = ("-c", PROGRAM),
    ) -> None:
        self.study = study
        self.gate = tmp / "gate"
        self.err_path = tmp / "stderr.txt"
        env = {**os.environ, GATE_ENV: str(self.gate), PHASE_ENV: phase}
        if deaf:
            env[DEAF_ENV] = "1"
        self._err = self.err_path.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, *command, "score", str(study), *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self._err,
            text=True,
            preexec_fn=_default_sigint,
        )
        self.first_sigint: float | None = None

    def err(self) -> str:
        return self.err_path.read_text(errors="replace")

    def waiting_at(self) -> str:
        at = self.gate.with_name(self.gate.name + ".at")
        return at.read_text() if at.exists() else ""

    def wait_until(self, what: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + START_S
        while not ready():
            assert self.proc.poll() is None, f"ended before {what}: {self.err()}"
            assert time.monotonic() < deadline, f"never reached {what}: {self.err()}"
            time.sleep(0.02)

    def interrupt(self) -> None:
        if self.first_sigint is None:
            self.first_sigint = time.monotonic()
        self.proc.send_signal(signal.SIGINT)

    def ended(self, phase: str) -> Ended:
        assert self.first_sigint is not None
        try:
            code = self.proc.wait(timeout=HANG_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"{phase}: still running {HANG_S:g} s after Ctrl+C: {self.err()}")
        after = time.monotonic() - self.first_sigint
        self._err.close()
        print(f"{phase}: ended {after:.2f} s after Ctrl+C (exit {code})")
        if os.environ.get(TIMES_ENV):
            with open(os.environ[TIMES_ENV], "a") as f:
                f.write(json.dumps({"phase": phase, "exit_s": round(after, 3), "code": code}))
                f.write("\n")
        return Ended(code, self.err(), after)

    def scores(self) -> int:
        with sqlite3.connect(self.study) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM score").fetchone()[0])

    def runs(self) -> list[tuple[str, int]]:
        with sqlite3.connect(self.study) as conn:
            return [
                (str(s), int(n)) for s, n in conn.execute("SELECT status, n_items FROM metric_run")
            ]


@pytest.fixture
def study_path(new_study: Study) -> Path:
    add_items(new_study, make_rows(ITEMS))
    return new_study.path


def _maps(pid: int) -> str:
    """The files mapped into a process: which libraries it has loaded so far."""
    if not Path("/proc/self/maps").exists():
        pytest.skip("needs /proc to see which libraries a process loaded")
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


def phase_score(study: Path, tmp: Path, phase: str, *, deaf: bool = False) -> Score:
    return Score(study, tmp, "--metrics", "phase_gated", "--workers", "1", phase=phase, deaf=deaf)


def test_ctrl_c_while_the_command_starts(study_path: Path, tmp_path: Path) -> None:
    score = Score(study_path, tmp_path, "--metrics", "compression", command=("-c", CONSOLE_SCRIPT))
    # SQLite's library loads when the command opens the study, after the commands were
    # imported: the program's own handler is in place (before it, in the interpreter's
    # first moments, Ctrl+C is Python's: a KeyboardInterrupt traceback).
    score.wait_until("the study opening", lambda: "_sqlite3" in _maps(score.proc.pid))
    score.interrupt()
    ended = score.ended("starting")
    assert ended.code == 130, ended.err
    assert "Traceback" not in ended.err, ended.err
    assert score.scores() == 0


def test_ctrl_c_while_checking_cached_scores(study_path: Path, tmp_path: Path) -> None:
    score = phase_score(study_path, tmp_path, "prepare")
    score.wait_until(
        "the cache check",
        lambda: score.waiting_at() == "prepare" and "Checking cached scores" in score.err(),
    )
    score.interrupt()
    ended = score.ended("checking cached scores")
    assert ended.code == 130, ended.err
    assert "meaningbench score: cancelled" in ended.err, ended.err
    assert "Traceback" not in ended.err, ended.err
    # Nothing was claimed yet: no run is left open.
    assert score.scores() == 0 and score.runs() == []


def test_ctrl_c_keeps_finished_batches_and_marks_the_run(study_path: Path, tmp_path: Path) -> None:
    # The second batch waits at a gate that stays shut: only the interrupt ends it, and it
    # lands after the first batch is committed and before the last.
    score = phase_score(study_path, tmp_path, "batch")
    score.wait_until("the second batch", lambda: score.waiting_at() == "batch")
    assert score.scores() > 0
    score.interrupt()
    ended = score.ended("between batches")
    assert ended.code == 130, ended.err
    assert "cancelled" in ended.err
    [(status, n_items)] = score.runs()
    n_scores = score.scores()
    assert status == "cancelled"
    # n_items counts the batches the job saw committed (an interrupt can fall in between)
    assert 0 < n_scores < ITEMS and 0 < n_items <= n_scores


def test_ctrl_c_lost_in_a_weakref_callback_still_stops_the_run(
    study_path: Path, tmp_path: Path
) -> None:
    # The KeyboardInterrupt is raised inside a weakref callback, where Python prints
    # "Exception ignored" and drops it (SQLAlchemy runs such callbacks after every commit).
    # The run must stop anyway, as cancelled, keeping its committed batches.
    score = phase_score(study_path, tmp_path, "finalizer")
    score.wait_until("the second batch", lambda: score.waiting_at() == "finalizer")
    score.interrupt()
    ended = score.ended("KeyboardInterrupt lost")
    assert ended.code == 130, ended.err
    assert "Exception ignored" in ended.err  # the interrupt was indeed lost
    [(status, _)] = score.runs()
    assert status == "cancelled"
    assert 0 < score.scores() < ITEMS


def test_a_job_deaf_to_ctrl_c_is_ended_and_resumes(study_path: Path, tmp_path: Path) -> None:
    # Lost, and the metric does not look at the cancel token either: the command still
    # ends within its limit, keeping what was committed; the run it could not close
    # counts as interrupted and the next `score` resumes it.
    score = phase_score(study_path, tmp_path, "finalizer", deaf=True)
    score.wait_until("the second batch", lambda: score.waiting_at() == "finalizer")
    kept = score.scores()
    score.interrupt()
    ended = score.ended("deaf job")
    assert ended.code == 130, ended.err
    assert "still stopping after" in ended.err and "Finished work was kept" in ended.err
    assert score.scores() >= kept > 0
    (tmp_path / "again").mkdir()
    again = Score(study_path, tmp_path / "again", "--metrics", "phase_gated", "--workers", "1")
    assert again.proc.wait(timeout=START_S) == 0, again.err()
    assert score.scores() == ITEMS
    statuses = [status for status, _ in score.runs()]
    assert statuses == ["done"], statuses  # the interrupted run was resumed and finished


def test_ctrl_c_while_compiled_code_holds_the_interpreter(study_path: Path, tmp_path: Path) -> None:
    # No Python code runs in the process: a process outside it keeps the promise, by
    # SIGKILL; what was committed stays and the next `score` resumes the run.
    score = phase_score(study_path, tmp_path, "compiled")
    score.wait_until("the second batch", lambda: score.waiting_at() == "compiled")
    kept = score.scores()
    score.interrupt()
    ended = score.ended("compiled code")
    assert ended.code == -signal.SIGKILL, ended.err
    assert "still stopping after 4.5 s; killed" in ended.err
    assert score.scores() >= kept > 0
    (tmp_path / "again").mkdir()
    again = Score(study_path, tmp_path / "again", "--metrics", "phase_gated", "--workers", "1")
    assert again.proc.wait(timeout=START_S) == 0, again.err()
    assert score.scores() == ITEMS


def test_a_second_ctrl_c_exits_at_once(study_path: Path, tmp_path: Path) -> None:
    score = phase_score(study_path, tmp_path, "finalizer", deaf=True)
    score.wait_until("the second batch", lambda: score.waiting_at() == "finalizer")
    score.interrupt()
    time.sleep(0.2)
    score.interrupt()
    ended = score.ended("second Ctrl+C")
    assert ended.code == 130, ended.err
    # Ended by the second Ctrl+C, not by the limit of the first.
    assert "meaningbench score: interrupted" in ended.err, ended.err
    assert "still stopping" not in ended.err, ended.err
    assert score.scores() > 0


def test_ctrl_c_while_a_model_loads(study_path: Path, tmp_path: Path) -> None:
    score = Score(study_path, tmp_path, "--metrics", "sbert_cosine", "--workers", "1")
    score.wait_until("torch loading", lambda: "libtorch" in _maps(score.proc.pid))
    score.interrupt()
    ended = score.ended("model load")
    assert ended.code == 130, ended.err
    assert "Traceback" not in ended.err, ended.err
