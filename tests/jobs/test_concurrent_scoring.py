"""Two `meaningbench score` processes on one study, a long import beside a score, and kills.

Every test drives real processes. Gated test metrics hold a process at a known point (a
batch waiting for a gate file), so the overlaps are certain, not likely.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
from pathlib import Path

import pytest

from meaningbench.db.study import Study
from tests.jobs.conftest import make_rows
from tests.jobs.gate import GATE_ENV
from tests.jobs.procs import (
    Command,
    children,
    in_group,
    query,
    running,
    wait_until,
)
from tests.jobs.studydata import add_items

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

GATED = "tests.jobs.gated_metric"
POOLED = "tests.jobs.pooled_metric"
LEXICAL = ["bleu", "sari", "compression", "rouge1", "rougel", "chrf", "fkgl", "edit_similarity"]


def _scores(path: Path, metric: str) -> int:
    return query(
        path,
        "SELECT COUNT(*) FROM score s JOIN metric_run r ON r.id = s.run_id WHERE r.metric = ?",
        (metric,),
    )[0][0]


def _no_duplicates(path: Path) -> None:
    """One run per (metric, config), one score per (metric, config, item)."""
    assert (
        query(path, "SELECT metric, config_hash FROM metric_run GROUP BY 1, 2 HAVING COUNT(*) > 1")
        == []
    )
    assert (
        query(
            path,
            "SELECT r.metric, r.config_hash, s.item_id FROM score s JOIN metric_run r "
            "ON r.id = s.run_id GROUP BY 1, 2, 3 HAVING COUNT(*) > 1",
        )
        == []
    )
    assert query(path, "PRAGMA integrity_check") == [("ok",)]


def _clean(err: str) -> None:
    assert "Traceback" not in err, err
    assert "database is locked" not in err, err


def _runs(out: str) -> dict[str, dict]:
    return {r["metric"]: r for r in json.loads(out)["runs"]}


def _gated_study(
    study: Study, tmp_path: Path, n: int
) -> tuple[Path, Path, dict[str, str], list[str]]:
    """`n` items in `study`; its path, the gate file (shut), and the environment and
    arguments of a `score` of the gated metric."""
    add_items(study, make_rows(n))
    path, gate = study.path, tmp_path / "gate"
    env = {GATE_ENV: str(gate)}
    args = ["score", str(path), "--metrics", "gated", "--workers", "1", "--json"]
    return path, gate, env, args


def test_two_processes_score_each_metric_once(new_study: Study) -> None:
    """The issue's measurement, smaller: 8 lexical metrics, two processes started at once."""
    n = 1500
    add_items(new_study, make_rows(n, with_refs=True))
    path = new_study.path
    args = ["score", str(path), "--metrics", ",".join(LEXICAL), "--workers", "1", "--json"]
    first, second = Command(args), Command(args)
    results = [first.finish(), second.finish()]
    for code, _, err in results:
        assert code == 0, err
        _clean(err)
    _no_duplicates(path)
    for metric in LEXICAL:
        assert _scores(path, metric) == n, metric
        # Exactly one process scored it; the other found it done.
        scored = [_runs(out)[metric]["scored"] for _, out, _ in results]
        assert sorted(scored) == [0, n], (metric, scored)
    assert query(path, "SELECT COUNT(*) FROM metric_run") == [(len(LEXICAL),)]


def test_a_second_process_scores_other_metrics_then_waits(new_study: Study, tmp_path: Path) -> None:
    n = 4000
    path, gate, env, args = _gated_study(new_study, tmp_path, n)
    # The first process claims `gated` and stops at its second batch, the gate being shut.
    first = Command(args, modules=[GATED], env=env)
    try:
        wait_until(lambda: _scores(path, "gated") > 0, "the first batch of gated")
        second = Command(
            ["score", str(path), "--metrics", "gated,compression", "--workers", "1", "--json"],
            modules=[GATED],
            env=env,
        )
        line = second.wait_for_line("gated: another job")
        assert f"pid {first.pid}" in line and "scoring the other metrics first" in line
        second.wait_for_line("waiting for gated")
        # It scored compression while gated was taken, and it has not touched gated.
        assert _scores(path, "compression") == n
        assert query(path, "SELECT COUNT(*) FROM metric_run WHERE metric = 'gated'") == [(1,)]
        gate.touch()
        code, out, err = second.finish()
        assert code == 0, err
        _clean(err)
        assert _runs(out)["gated"]["status"] == "cached"
        assert _runs(out)["gated"]["cached"] == n and _runs(out)["gated"]["scored"] == 0
        assert _runs(out)["compression"]["scored"] == n
        code, out, err = first.finish()
        assert code == 0, err
        assert _runs(out)["gated"]["scored"] == n
    finally:
        gate.touch()
        first.kill()
    _no_duplicates(path)
    assert _scores(path, "gated") == n


def test_a_waiting_process_resumes_a_run_whose_owner_was_killed(
    new_study: Study, tmp_path: Path
) -> None:
    n = 4000
    path, gate, env, args = _gated_study(new_study, tmp_path, n)
    first = Command(args, modules=[GATED], env=env)
    try:
        wait_until(lambda: _scores(path, "gated") > 0, "the first batch of gated")
        # Its second batch waits at the gate: what it wrote stays as it is now.
        done_before = _scores(path, "gated")
        second = Command(args, modules=[GATED], env=env)
        second.wait_for_line("waiting for gated")
        os.kill(first.pid, signal.SIGKILL)
        first.proc.wait(timeout=30)
        gate.touch()
        code, out, err = second.finish()
    finally:
        gate.touch()
        first.kill()
    assert code == 0, err
    _clean(err)
    run = _runs(out)["gated"]
    assert (run["status"], run["cached"], run["scored"]) == ("done", done_before, n - done_before)
    # The killed process's run was taken over, not duplicated.
    assert query(path, "SELECT status, n_items, owner_pid FROM metric_run") == [
        ("done", n, second.pid)
    ]
    _no_duplicates(path)
    assert _scores(path, "gated") == n


def test_a_killed_run_is_shown_interrupted_and_resumed(new_study: Study, tmp_path: Path) -> None:
    n = 4000
    path, gate, env, args = _gated_study(new_study, tmp_path, n)
    first = Command(args, modules=[GATED], env=env)
    try:
        wait_until(lambda: _scores(path, "gated") > 0, "the first batch of gated")
        os.kill(first.pid, signal.SIGKILL)
        first.proc.wait(timeout=30)
    finally:
        first.kill()
    done_before = _scores(path, "gated")
    assert query(path, "SELECT status FROM metric_run") == [("running",)]

    # While the study cannot be written, `info` shows the run interrupted all the same.
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        code, out, err = Command(["info", str(path)]).finish()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 0 and "Traceback" not in err, err
    assert "gated: interrupted" in out
    assert query(path, "SELECT status FROM metric_run") == [("running",)]

    code, out, err = Command(["info", str(path)]).finish()
    assert code == 0, err
    assert "gated: interrupted" in out
    [(status, n_items, error)] = query(path, "SELECT status, n_items, error FROM metric_run")
    assert (status, n_items) == ("interrupted", done_before)
    assert f"pid {first.pid}" in error

    gate.touch()
    code, out, err = Command(args, modules=[GATED], env=env).finish()
    assert code == 0, err
    _clean(err)
    run = _runs(out)["gated"]
    assert (run["status"], run["cached"], run["scored"]) == ("done", done_before, n - done_before)
    assert query(path, "SELECT status, n_items FROM metric_run") == [("done", n)]
    _no_duplicates(path)
    assert _scores(path, "gated") == n


def test_kill_9_of_score_takes_its_worker_processes_along(new_study: Study, tmp_path: Path) -> None:
    add_items(new_study, make_rows(5000))
    path, gate = new_study.path, tmp_path / "gate"
    command = Command(
        ["score", str(path), "--metrics", "pooled", "--workers", "2"],
        modules=[POOLED],
        env={GATE_ENV: str(gate)},  # shut: the workers wait in their first chunk
    )
    try:
        wait_until(lambda: len(children(command.pid)) >= 2, "the worker processes")
        workers = children(command.pid)
        os.kill(command.pid, signal.SIGKILL)
        command.proc.wait(timeout=30)
        wait_until(lambda: not running(workers), "the workers to end with their parent", 30)
        wait_until(lambda: not in_group(command.pid), "every process of the command to end", 30)
    finally:
        gate.touch()
        command.kill()
    assert query(path, "PRAGMA integrity_check") == [("ok",)]


def _write_pairs(path: Path, n: int) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["source", "output", "system"])
        for i in range(n):
            writer.writerow([f"Source sentence number {i} of the import.", f"Output {i}.", "imp"])


def _write_lock_held(path: Path) -> bool:
    conn = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return True
    finally:
        conn.close()
    return False


def _writer_waits_for_a_held_import(path: Path, data: Path, waiter: list[str]) -> None:
    """Start an import of `data`; once it holds the write lock, stop it there (a writer that
    holds the lock as long as the test likes: a slow disk, a huge file), start `waiter`,
    which must say whom it waits for, then let the import go on; both must succeed."""
    importer = Command(["import", str(path), str(data), "--json"])
    try:
        named = Path(f"{path}-writer")  # an import names itself first, then takes the lock
        wait_until(
            lambda: named.exists() and f'"pid": {importer.pid}' in named.read_text(),
            "the import to take the write lock",
        )
        os.kill(importer.pid, signal.SIGSTOP)
        assert _write_lock_held(path), "the import finished before it could be held"
        other = Command(waiter)
        other.wait_for_line(f"waiting for the study (held by import, pid {importer.pid})")
        os.kill(importer.pid, signal.SIGCONT)
        code, _, err = other.finish()
        assert code == 0, err
        _clean(err)
        code, _, err = importer.finish()
        assert code == 0, err
    finally:
        if importer.proc.poll() is None:
            os.kill(importer.pid, signal.SIGCONT)
        importer.kill()
    assert not Path(f"{path}-writer").exists()


def test_score_waits_for_a_long_import_and_says_who_holds_the_study(
    new_study: Study, tmp_path: Path
) -> None:
    n = 200
    add_items(new_study, make_rows(n))
    path = new_study.path
    data = tmp_path / "big.csv"
    _write_pairs(data, 60_000)
    score = ["score", str(path), "--metrics", "compression", "--workers", "1"]
    _writer_waits_for_a_held_import(path, data, score)
    assert _scores(path, "compression") == n
    assert query(path, "SELECT COUNT(*) FROM item") == [(n + 60_000,)]


def test_a_run_left_open_by_this_process_is_resumed_not_waited_for(new_study: Study) -> None:
    """A job whose last write failed leaves its run `running` under this live process:
    the next job here must take it over, not wait for itself."""
    import threading

    from meaningbench.db.processes import this_process
    from meaningbench.jobs.score_claims import Claimed, release, try_claim
    from meaningbench.jobs.score_store import CacheKey
    from meaningbench.jobs.scoring import ScoreRequest, score_study
    from meaningbench.metrics.registry import get_metric_class
    from meaningbench.runtime import JobContext

    add_items(new_study, make_rows(40))
    metric = get_metric_class("compression")()
    key = CacheKey(metric.name, metric.config_hash(), None)
    claim = try_claim(new_study, key, (), metric, "compression", this_process())
    assert isinstance(claim, Claimed)
    release(claim.run_id)  # the job ended without closing its run

    ctx = JobContext()
    out: list = []
    job = threading.Thread(
        target=lambda: out.extend(
            score_study(ScoreRequest(new_study.path, ["compression"], {"workers": 1}), ctx)
        )
    )
    job.start()
    job.join(60)
    if job.is_alive():
        ctx.cancel.cancel()
        job.join(60)
        pytest.fail("the job waited for a run its own process had left open")
    [summary] = out
    assert (summary.run_id, summary.status, summary.scored) == (claim.run_id, "done", 40)
    assert query(new_study.path, "SELECT status, n_items FROM metric_run") == [("done", 40)]


def test_a_killed_run_with_every_score_written_is_closed_as_done(
    new_study: Study, tmp_path: Path
) -> None:
    """Killed after its last batch, before it could say so: nothing is left to resume."""
    n = 40
    add_items(new_study, make_rows(n))
    path = new_study.path
    code, _, err = Command(
        ["score", str(path), "--metrics", "compression", "--workers", "1"]
    ).finish()
    assert code == 0, err
    gone = Command(["--version"])
    gone.finish()  # a process that has ended: the run's owner, as if killed
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE metric_run SET status = 'running', finished_at = NULL, owner_pid = ?",
            (gone.pid,),
        )
    code, out, err = Command(["score", str(path), "--metrics", "compression", "--json"]).finish()
    assert code == 0, err
    assert _runs(out)["compression"]["status"] == "cached"
    assert query(path, "SELECT status, n_items, error FROM metric_run") == [("done", n, None)]


def test_an_import_waits_for_another_import_and_says_so(new_study: Study, tmp_path: Path) -> None:
    path = new_study.path
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    _write_pairs(first, 60_000)
    second.write_text("source,output\nA new source sentence.,A new output.\n")
    _writer_waits_for_a_held_import(path, first, ["import", str(path), str(second)])
    assert query(path, "SELECT COUNT(*) FROM item") == [(60_001,)]
