"""Start-up: the window appears before torch is imported, on the study asked for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from meaningbench.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import json, sys
from PySide6.QtCore import QTimer
import meaningbench.ui.launch as launch
from meaningbench.ui.launch import create_application, start
app = create_application()
def report():
    page = window.current_page()
    out = {
        "visible": window.isVisible(),
        "torch": "torch" in sys.modules,
        "transformers": "transformers" in sys.modules,
        "page": page,
        "title": window.windowTitle(),
    }
    print("PROBE" + json.dumps(out), flush=True)
    app.quit()
# Report once the start-up step that opens the study has run (after the first paint),
# whatever the machine's speed.
opener = launch.open_initial_study
def open_then_report(window, study):
    opener(window, study)
    QTimer.singleShot(0, report)
launch.open_initial_study = open_then_report
window = start(sys.argv[1:2] or None)
app.exec()
"""


def run_probe(home: Path, *args: str) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "MEANINGBENCH_HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("PROBE"))
    return json.loads(line[len("PROBE") :])


def test_window_appears_without_torch(tmp_path: Path, study_with_facts) -> None:
    path, _facts = study_with_facts
    out = run_probe(tmp_path / "home", str(path))
    assert out["visible"]
    assert out["page"] == "browser"
    assert out["title"].startswith("pop — ")
    # The metric registry may be loaded (score columns are named from the metrics' defaults);
    # the heavy libraries the neural metrics use must not be.
    assert not out["torch"] and not out["transformers"]


def test_without_a_study_it_opens_the_most_recent_one(tmp_path: Path, study_with_facts) -> None:
    from meaningbench.settings import UserPrefs

    path, _facts = study_with_facts
    home = tmp_path / "home"
    home.mkdir()
    os.environ["MEANINGBENCH_HOME"] = str(home)  # the autouse fixture restores it
    prefs = UserPrefs()
    prefs.add_recent(tmp_path / "gone.mbstudy")  # missing files are skipped
    prefs.add_recent(path)
    prefs.add_recent(tmp_path / "gone.mbstudy")
    prefs.save()
    out = run_probe(home)
    assert out["page"] == "browser" and out["title"].startswith("pop — ")
    empty_home = tmp_path / "empty"
    out = run_probe(empty_home)
    assert out["page"] is None and out["title"] == "MeaningBench"  # the welcome page


def test_the_gui_command_is_registered() -> None:
    from meaningbench.commands import gui

    args = build_parser().parse_args(["gui", "some.mbstudy"])
    assert args.func is gui.run and args.study == Path("some.mbstudy")
    assert build_parser().parse_args(["gui"]).study is None


def test_python_dash_m_app_and_the_gui_command_reach_launch(monkeypatch) -> None:
    # The event loop itself is what the probes above run; here only the wiring of the
    # two entry points to it, with `launch` recording its argument instead of blocking.
    import meaningbench.__main__ as entry
    import meaningbench.ui.launch as launch_module
    from meaningbench.cli import main as cli_main

    calls: list[list[str] | None] = []
    monkeypatch.setattr(launch_module, "launch", lambda argv=None: calls.append(argv) or 0)
    monkeypatch.setattr("sys.argv", ["python -m meaningbench", "pilot.mbstudy"])
    assert entry.main() == 0
    assert cli_main(["gui", "other.mbstudy"]) == 0
    assert cli_main(["gui"]) == 0
    assert calls == [["pilot.mbstudy"], ["other.mbstudy"], None]
