"""The study file under everything at once, killed at random: the app's own scoring job (its
child process, as the window starts it), a rater submitting ratings, and `meaningbench`
commands (score, import, export, merge) on one study, with seeded random SIGKILLs.

After every round: `PRAGMA integrity_check` is ok, every rating the rater saw committed is
in the study, no item has two scores of one metric configuration (no duplicated run), and
no process of the round is left running. MB_STRESS_ROUNDS sets the rounds (default 6 in
the test suite; the figures in resources/docs/scoring.md come from 200), MB_STRESS_SEED the
seed.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.jobs.procs import ROOT

ROUNDS = int(os.environ.get("MB_STRESS_ROUNDS", "6"))
SEED = int(os.environ.get("MB_STRESS_SEED", "20261125"))
METRICS = "bleu,chrf,ter,rouge1"

RATER = """
import random, sys
from meaningbench.annotation.session import AnnotationSession
from meaningbench.db.study import open_study
path, name, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
study = open_study(path)
session = AnnotationSession(study, name)
while True:
    shown = session.next_item()
    if shown is None:
        break
    value = round(rng.uniform(0, 100), 3)
    session.submit(shown.item_id, {"meaning": value})
    print(f"COMMITTED {shown.item_id} {value}", flush=True)
"""

APP_JOB = """
import sys
from pathlib import Path
from meaningbench.runtime import JobContext
from meaningbench.ops.score import score_job
from meaningbench.ops.child_process import in_child_process
job = in_child_process(score_job, Path(sys.argv[1]), sys.argv[2].split(","), {})
job(JobContext())
print("APP JOB DONE", flush=True)
"""


def _pairs(tag: str, n: int) -> str:
    rows = ["source\toutput\tsystem\tannotator\tmeaning"]
    for k in range(n):
        source = f"The {tag} report number {k} was published by the committee after review."
        rows.append(f"{source}\tThe {tag} report {k} came out.\tsys{k % 3}\timporter\t{k % 100}")
    return "\n".join(rows) + "\n"


def _run(argv: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def _integrity(path: Path) -> str:
    conn = sqlite3.connect(path, timeout=60)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def _marked(token: str) -> list[int]:
    """Live processes started by this test (their environment carries the token)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"MB_STRESS_MARK={token}".encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.xdist_group("stress")
def test_everything_at_once_killed_at_random(tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MB_STRESS_MARK": token,
        "QT_QPA_PLATFORM": "offscreen",
    }
    cli = [sys.executable, "-m", "meaningbench.cli"]
    study = tmp_path / "s.mbstudy"
    other = tmp_path / "other.mbstudy"
    (tmp_path / "base.tsv").write_text(_pairs("base", 120))
    _run([*cli, "import", str(study), str(tmp_path / "base.tsv")], env)
    _run([*cli, "import", str(other), str(tmp_path / "base.tsv")], env)
    _run([sys.executable, "-c", RATER, str(other), "merger", "1"], env)

    rng = random.Random(SEED)
    committed: dict[tuple[str, int], float] = {}
    kills = 0
    for round_ in range(ROUNDS):
        (tmp_path / f"new{round_}.tsv").write_text(_pairs(f"round{round_}", 40))
        actors = {
            "app": [sys.executable, "-c", APP_JOB, str(study), METRICS],
            "rater": [sys.executable, "-c", RATER, str(study), f"rater{round_ % 3}", str(round_)],
            "score": [*cli, "score", str(study), "--metrics", METRICS],
            "import": [
                *cli,
                "import",
                str(study),
                str(tmp_path / f"new{round_}.tsv"),
                "--same-raters",
            ],
            "export": [*cli, "export", str(study), str(tmp_path / f"out{round_}.csv")],
            "merge": [*cli, "merge", str(study), str(other)],
        }
        names = sorted(actors)
        chosen = rng.sample(names, rng.randint(2, len(names)))
        procs = {
            name: subprocess.Popen(
                actors[name], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, start_new_session=True,
            )
            for name in chosen
        }  # fmt: skip
        time.sleep(rng.uniform(0.3, 4.0))
        victims = {name for name in chosen if rng.random() < 0.6}
        for name in victims:
            os.killpg(procs[name].pid, signal.SIGKILL)  # the command and all it started
        kills += len(victims)
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=300)
            if name == "rater":
                for line in out.splitlines():
                    if line.startswith("COMMITTED "):
                        _, item, value = line.split()
                        committed[(f"rater{round_ % 3}", int(item))] = float(value)
            if name not in victims:
                assert "Traceback" not in err, (round_, name, err)
                assert proc.returncode in (0, 1), (round_, name, proc.returncode, err)

        assert _integrity(study) == "ok", round_
        conn = sqlite3.connect(f"{study.resolve().as_uri()}?mode=ro", uri=True, timeout=60)
        try:
            stored = {
                (name, item, round(value, 3))
                for name, item, value in conn.execute(
                    "SELECT a.name, r.item_id, r.value FROM rating r "
                    "JOIN annotator a ON a.id = r.annotator_id"
                )
            }
            twice = conn.execute(
                "SELECT s.item_id, m.metric, m.config_hash, COUNT(*) FROM score s "
                "JOIN metric_run m ON m.id = s.run_id "
                "GROUP BY s.item_id, m.metric, m.config_hash HAVING COUNT(*) > 1 LIMIT 5"
            ).fetchall()
        finally:
            conn.close()
        missing = [k for k, v in committed.items() if (k[0], k[1], round(v, 3)) not in stored]
        assert not missing, (round_, missing[:5])
        assert not twice, (round_, twice)
        deadline = time.monotonic() + 30
        while (left := _marked(token)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left, (round_, left)

    print(f"{ROUNDS} rounds, {kills} processes killed, {len(committed)} ratings committed")
    assert kills > 0 and committed
