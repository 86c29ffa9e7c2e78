"""kill -9 after N submissions through the screen: reopening the study shows all N."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from sqlalchemy import select

from meaningbench.db.models import Annotator, Rating
from meaningbench.db.study import open_study
from tests.annotation.factories import add_items

ROOT = Path(__file__).resolve().parents[3]
N = 30


def test_every_submission_survives_sigkill(study) -> None:
    add_items(study, 15, 2, dataset="more", seed=5)  # 42 items: more than N
    path = study.path
    study.close()  # the driver is the only writer
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.ui.annotation.durable_driver", str(path), str(N)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    reported: list[int] = []
    finished = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("submitted "):
                reported.append(int(line.split()[1]))
            elif line.strip() == "done":
                finished.set()
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert finished.wait(120), (
            f"driver did not finish: {proc.stderr.read() if proc.poll() is not None else ''}"
        )
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    assert len(reported) == N
    # The driver never closed its connection: the WAL was not checkpointed by a clean exit.
    reopened = open_study(path)
    try:
        with reopened.session() as s:
            rows = s.execute(
                select(Rating.item_id, Rating.value, Rating.state)
                .join(Annotator, Annotator.id == Rating.annotator_id)
                .where(Annotator.name == "durable")
                .order_by(Rating.id)
            ).all()
    finally:
        reopened.close()
    assert [r.item_id for r in rows] == reported
    assert all(r.state == "current" for r in rows)
    assert [r.value for r in rows] == [10.0 * (1 + i % 9) for i in range(N)]
