"""Ctrl+C during `meaningbench judge` against a local fake endpoint: every answer received
before it is kept, the message says so, and the rerun asks only for the others."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from meaningbench.cli import main
from tests.jobs.studydata import add_items
from tests.metrics.neural.judge_endpoint import fake_endpoint, slow

ITEMS = 30
ANSWER_S = 0.3
BEFORE_CTRL_C = 5  # answers sent before the Ctrl+C
START_S = 180.0  # a busy machine may take long to import everything
HANG_S = 60.0
PROGRAM = "import sys\nfrom meaningbench.cli import main\nsys.exit(main())\n"


def _default_sigint() -> None:
    # A process started in the background inherits SIGINT ignored: it is Ctrl+C we test.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _judge_args(path: Path, url: str) -> list[str]:
    return ["judge", str(path), "--backend", url, "--model", "judge", "--as-rater", "endpoint"]


def _asked(requests: list[dict]) -> int:
    return sum(r["method"] == "POST" for r in requests)


def _scores(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM score").fetchone()[0])
    finally:
        conn.close()


def _wait_for(answered: Callable[[], bool], proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_S
    while not answered():
        assert proc.poll() is None, "the judge ended before the Ctrl+C"
        assert time.monotonic() < deadline, "the judge asked nothing in time"
        time.sleep(0.02)


def test_ctrl_c_keeps_every_answer_received_and_the_rerun_asks_only_for_the_rest(
    new_study, tmp_path, capsys
):
    add_items(
        new_study, [(f"Source sentence {i}.", f"Output {i}.", (), None) for i in range(ITEMS)]
    )
    path = new_study.path
    new_study.close()
    with fake_endpoint(slow(ANSWER_S)) as server:
        proc = subprocess.Popen(
            [sys.executable, "-c", PROGRAM, *_judge_args(path, server.url)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_default_sigint,
        )
        _wait_for(lambda: server.answered >= BEFORE_CTRL_C, proc)
        answered = server.answered
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=HANG_S)
        kept = _scores(path)
        # The answer under way when Ctrl+C came may be lost, none before it.
        assert answered - 1 <= kept < ITEMS
        assert proc.returncode == 130
        assert "finished work was kept" in err.decode()
        asked_before = _asked(server.requests)
        assert main(_judge_args(path, server.url)) == 0
        asked_again = _asked(server.requests) - asked_before
    assert asked_again == ITEMS - kept
    assert _scores(path) == ITEMS
    assert f"endpoint [machine]: {ITEMS} items rated" in capsys.readouterr().out
