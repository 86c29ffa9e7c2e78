"""Rounds of two `score` processes on one study, one of them killed (kill -9) at a seeded
random point of the work: the study stays sound, nothing is computed twice, no process is
left behind, and a last `score` completes exactly what was missing."""

from __future__ import annotations

import json
import os
import random
import signal
from pathlib import Path

import pytest

from meaningbench.db.study import create_study
from tests.jobs.conftest import make_rows
from tests.jobs.procs import Command, in_group, query, wait_until
from tests.jobs.studydata import add_items

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc"),
]

METRICS = ["compression", "fkgl", "bleu", "sari"]
N_ITEMS = 2500
ROUNDS = 4
SEED = 20261125


def _n_scores(path: Path) -> int:
    return query(path, "SELECT COUNT(*) FROM score")[0][0]


def _check(path: Path) -> None:
    assert query(path, "PRAGMA integrity_check") == [("ok",)]
    # Killed runs are resumed in place: still one run per (metric, config).
    assert (
        query(path, "SELECT metric, config_hash FROM metric_run GROUP BY 1, 2 HAVING COUNT(*) > 1")
        == []
    )
    assert (
        query(
            path,
            "SELECT r.metric, s.item_id FROM score s JOIN metric_run r ON r.id = s.run_id "
            "GROUP BY r.metric, r.config_hash, s.item_id HAVING COUNT(*) > 1",
        )
        == []
    )


@pytest.mark.parametrize("round_no", range(ROUNDS))
def test_two_scores_and_a_kill(tmp_path: Path, round_no: int) -> None:
    rng = random.Random(SEED + round_no)
    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    add_items(study, make_rows(N_ITEMS, with_refs=True))
    study.close()
    total = len(METRICS) * N_ITEMS
    threshold = rng.randrange(1, total)
    victim = rng.randrange(2)
    base = ["score", str(path), "--metrics", ",".join(METRICS), "--quiet"]
    commands = [
        Command([*base, "--workers", str(rng.choice([1, 2]))]),
        Command([*base, "--workers", str(rng.choice([1, 2]))]),
    ]
    killed = commands[victim]
    try:
        wait_until(
            lambda: _n_scores(path) >= threshold or killed.proc.poll() is not None,
            f"{threshold} scores",
            120,
        )
        if killed.proc.poll() is None:
            os.kill(killed.pid, signal.SIGKILL)
        print(f"round {round_no}: killed at {_n_scores(path)} of {total} scores")
        killed.proc.wait(timeout=30)
        code, _, err = commands[1 - victim].finish()
        assert code == 0, err
        assert "Traceback" not in err and "database is locked" not in err, err
        # Nothing of the killed command lives on (its forked workers included).
        wait_until(lambda: not in_group(killed.pid), "the killed command's processes", 30)
        _check(path)
    finally:
        for command in commands:
            command.kill()
    code, out, err = Command([*base, "--workers", "1", "--json"]).finish()
    assert code == 0, err
    runs = json.loads(out)["runs"]
    # The last run completes the battery: what the killed process had claimed and not
    # written is scored now, in the run it had started.
    assert sum(r["scored"] + r["cached"] for r in runs) == total
    assert _n_scores(path) == total
    assert query(path, "SELECT DISTINCT status FROM metric_run") == [("done",)]
    _check(path)
