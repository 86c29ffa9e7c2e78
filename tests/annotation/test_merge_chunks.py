"""A large merge lets the study's raters in: it commits chunk by chunk, so a rating saved
while it runs is stored long before the merge ends; a merge killed half way keeps whole
chunks, and merging again brings in the rest as if it had never stopped."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from meaningbench.annotation.session import AnnotationSession
from meaningbench.db.study import copy_study, open_study
from tests.fault_tools import ROOT, cli, env, write_pairs

ROWS = 12_000


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the lead's study with a few items, a rater's copy holding ROWS rated items)."""
    folder = tmp_path_factory.mktemp("copies")
    lead = folder / "lead.mbstudy"
    assert cli("import", lead, write_pairs(folder / "small.csv", 20, tag="Lead")).returncode == 0
    other = folder / "other.mbstudy"
    done = cli("import", other, write_pairs(folder / "big.csv", ROWS, tag="Other"))
    assert done.returncode == 0, done.stderr
    return lead, other


def _start_merge(target: Path, other: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "meaningbench.cli", "merge", str(target), str(other)],
        env=env(),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _merged_items(target: Path) -> int:
    conn = sqlite3.connect(f"{target.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM item").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _wait_for_first_chunk(proc: subprocess.Popen[str], target: Path, before: int) -> None:
    deadline = time.monotonic() + 300
    while _merged_items(target) <= before:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _state(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return conn.execute(
            "SELECT i.pair_key, a.name, r.value, r.state, r.origin FROM rating r "
            "JOIN item i ON i.id = r.item_id JOIN annotator a ON a.id = r.annotator_id "
            "ORDER BY i.pair_key, a.name, r.state, r.value"
        ).fetchall()
    finally:
        conn.close()


def _merged_whole_and_target(lead: Path, other: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of `lead` with `other` merged in uninterrupted (the state to reach), and a
    fresh copy of `lead` to merge into."""
    whole = copy_study(lead, tmp_path / "whole.mbstudy")
    assert cli("merge", whole, other).returncode == 0
    target = copy_study(lead, tmp_path / "lead.mbstudy")
    return whole, target


def _rate_in_thread(target: Path) -> tuple[threading.Thread, list[BaseException]]:
    """A rater opens the study and saves one rating, in a thread (it may have to wait)."""
    failures: list[BaseException] = []

    def rate() -> None:
        try:
            study = open_study(target)
            try:
                session = AnnotationSession(study, "ana")
                item = session.current()
                assert item is not None
                session.submit(item.item_id, {"meaning": 42.0})
            finally:
                study.close()
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            failures.append(exc)

    thread = threading.Thread(target=rate, daemon=True)
    thread.start()
    return thread, failures


def test_a_rating_saved_during_a_large_merge_is_stored_before_it_ends(
    copies: tuple[Path, Path], tmp_path: Path
) -> None:
    lead, other = copies
    target = copy_study(lead, tmp_path / "lead.mbstudy")
    proc = _start_merge(target, other)
    try:
        _wait_for_first_chunk(proc, target, 20)
        # Frozen early, whatever the machine's speed: in a chunk (holding the lock) or
        # between two. The rater starts meanwhile and must get in before the later chunks.
        os.kill(proc.pid, signal.SIGSTOP)
        thread, failures = _rate_in_thread(target)
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGCONT)
        thread.join(timeout=600)
        assert not thread.is_alive() and not failures, failures
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert f"{ROWS} ratings added" in out.replace(",", "")
    rows = _state(target)
    assert ("ana", 42.0, "current", "ui") in [r[1:] for r in rows]
    # Ratings are numbered as they are stored: most of the merge's came after the rater's.
    conn = sqlite3.connect(target)
    try:
        (mine,) = conn.execute(
            "SELECT r.id FROM rating r JOIN annotator a ON a.id = r.annotator_id "
            "WHERE a.name = 'ana'"
        ).fetchone()
        (later,) = conn.execute(
            "SELECT COUNT(*) FROM rating WHERE origin LIKE 'merge:%' AND id > ?", (mine,)
        ).fetchone()
    finally:
        conn.close()
    assert later >= ROWS // 2, f"the rating waited for {ROWS - later} of {ROWS} merged ratings"


def test_a_merge_killed_half_way_keeps_whole_chunks_and_merging_again_completes_it(
    copies: tuple[Path, Path], tmp_path: Path
) -> None:
    lead, other = copies
    whole, target = _merged_whole_and_target(lead, other, tmp_path)
    proc = _start_merge(target, other)
    _wait_for_first_chunk(proc, target, 20)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    kept = _state(target)
    assert 0 < len(kept) < len(_state(whole))  # some chunks were committed, not all
    again = cli("merge", target, other)
    assert again.returncode == 0, again.stderr
    assert _state(target) == _state(whole)


def test_a_merge_stopped_by_a_full_disk_says_what_it_kept(
    copies: tuple[Path, Path], tmp_path: Path
) -> None:
    from tests.fault_tools import assert_one_line_error, file_size_limit

    lead, other = copies
    whole, target = _merged_whole_and_target(lead, other, tmp_path)
    done = cli("merge", target, other, preexec=file_size_limit(1_500_000))
    line = assert_one_line_error(done, str(target), "cannot write", "which are kept")
    assert f"of {ROWS:,} items" in line and "merge the same file again" in line
    assert 0 < len(_state(target)) < len(_state(whole))
    assert cli("merge", target, other).returncode == 0
    assert _state(target) == _state(whole)
