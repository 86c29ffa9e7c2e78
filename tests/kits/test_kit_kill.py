"""`kit` killed with SIGKILL while its kits take their place, or while the lead's study
records them: the record never names a kit that is not there, a top-up's items are never
in a queue without their kit, and the next `kit` gives out the same kits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.cli import main
from meaningbench.db.study import open_study
from meaningbench.kits.record import kit_records
from tests.cluster.helpers import query
from tests.fault_tools import env
from tests.kits.campaign_helpers import lead_keys, lead_study
from tests.kits.campaign_study import campaign_study

ROOT = Path(__file__).resolve().parents[2]

# Makes the kits and stops, until its stdin closes, where the test kills it: at the first
# kit moved into the folder ("placing"), or as the lead's study writes its record of the
# kits ("recording").
MAKER = """
import os, sys
from pathlib import Path
from meaningbench.db.study import open_study
from meaningbench.kits import making

study_path, out, where, raters, top_up = sys.argv[1:6]
out = Path(out).resolve()

def stop():
    print("stopped", flush=True)
    sys.stdin.read()

if where == "placing":
    moved = os.replace
    def replace(src, dest, *args, **kwargs):
        if Path(dest).resolve().parent == out and str(dest).endswith(".mbkit"):
            stop()
        return moved(src, dest, *args, **kwargs)
    os.replace = replace
else:
    store = making.store_records
    def record(*args, **kwargs):
        stop()
        return store(*args, **kwargs)
    making.store_records = record
study = open_study(study_path)
making.make_kits(study, raters.split(","), out, top_up=top_up == "top-up")
"""


def _kill_making(lead: Path, out: Path, where: str, raters: str, top_up: bool) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            MAKER,
            str(lead),
            str(out),
            where,
            raters,
            "top-up" if top_up else "queue",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env(),
        cwd=ROOT,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "stopped"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def _recorded_files(lead: Path, top_up: bool) -> dict[str, str]:
    """The kit files the lead's study records (top-ups or the others), by kit id."""
    study = open_study(lead)
    try:
        with study.session() as s:
            return {k: r.file for k, r in kit_records(s).items() if r.top_up == top_up}
    finally:
        study.close()


def _queued(path: Path) -> set[tuple[str, str]]:
    """(rater, item key) of every queue entry of a study or kit."""
    rows = query(
        path,
        "SELECT a.name, i.pair_key FROM queue_entry q JOIN item i ON i.id = q.item_id "
        "JOIN annotator a ON a.id = q.annotator_id",
    )
    return {(str(a), str(k)) for a, k in rows}


def _kit_files(out: Path) -> list[Path]:
    return sorted(out.glob("*.mbkit")) if out.is_dir() else []


def _in_kits(out: Path, lead: Path) -> set[tuple[str, str]]:
    """The kits' queue entries, by the lead's item keys (a blind kit's keys are its own)."""
    keys = lead_keys(lead)
    held = set().union(*(_queued(kit) for kit in _kit_files(out)))
    return {(a, keys[k][0] if k in keys else k) for a, k in held}


def _true_together(
    lead: Path, out: Path, queued_before: set[tuple[str, str]], top_up: bool
) -> None:
    """Every recorded kit is a file, and every queue entry a kit gave is in a kit file."""
    recorded = _recorded_files(lead, top_up)
    assert all((out / name).exists() for name in recorded.values()), recorded
    assert _queued(lead) - queued_before <= _in_kits(out, lead)


@pytest.mark.parametrize("where", ["placing", "recording"])
def test_kits_killed_on_their_way_are_made_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=1).close()
    out = tmp_path / "kits"
    _kill_making(lead, out, where, "ana,ben", top_up=False)
    _true_together(lead, out, _queued(lead), top_up=False)

    assert main(["kit", str(lead), "--raters", "ana,ben", "--out", str(out)]) == 0, (
        capsys.readouterr().err
    )
    recorded = _recorded_files(lead, top_up=False)
    assert sorted(recorded.values()) == [p.name for p in _kit_files(out)]
    assert sorted(recorded.values()) == ["ana.mbkit", "ben.mbkit"]


@pytest.mark.parametrize("where", ["placing", "recording"])
def test_a_top_up_killed_on_its_way_gives_its_items_out_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    lead = campaign_study(tmp_path)
    before = _queued(lead)
    out = tmp_path / "top-up"
    _kill_making(lead, out, where, "ana,ben", top_up=True)
    _true_together(lead, out, before, top_up=True)

    code = main(["kit", str(lead), "--top-up", "--raters", "ana,ben", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    _true_together(lead, out, before, top_up=True)
    # Exactly the top-up's kits, each recorded once, and their items in the raters' queues.
    tops = sorted(_recorded_files(lead, top_up=True).values())
    assert tops == [p.name for p in _kit_files(out)] == ["ana-top-up-1.mbkit", "ben-top-up-1.mbkit"]
    assert _in_kits(out, lead) == _queued(lead) - before != set()
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".mbpart")]
