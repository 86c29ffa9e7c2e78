"""The bundle's run-time hooks: stock ones that import whole packages at start are replaced.

PyInstaller runs the run-time hook of every module the bundle holds when the program
starts, before any of the program's own code. The stock hooks of NLTK, setuptools and
pkg_resources import those packages (seconds of CPU on the development machine), so the
spec's hook folder (packaging/hooks) maps them to a script that does nothing. PyInstaller
takes the first hook folder that names a module only when it names a script: an empty
list is passed over and the stock hook runs, so every entry must name an existing script.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / "packaging" / "hooks"
REPLACED = {"nltk", "setuptools", "pkg_resources"}


def test_replaced_hooks_name_a_script_that_does_nothing() -> None:
    table = ast.literal_eval((HOOKS / "rthooks.dat").read_text(encoding="utf-8"))
    assert table.keys() >= REPLACED
    for module, scripts in table.items():
        assert scripts, f"{module}: an empty list leaves PyInstaller's own hook in place"
        for name in scripts:
            script = HOOKS / "rthooks" / name
            assert script.is_file(), f"{module}: {script} does not exist"
            assert not ast.parse(script.read_text(encoding="utf-8")).body, f"{name} runs code"


def test_the_spec_reads_the_hook_folder() -> None:
    tree = ast.parse((ROOT / "packaging" / "meaningbench.spec").read_text(encoding="utf-8"))
    analysis = next(
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "Analysis"
    )
    hookspath = next(k.value for k in analysis.keywords if k.arg == "hookspath")
    assert "'packaging' / 'hooks'" in ast.unparse(hookspath)


PROBE = r"""
import json, sys
from meaningbench.ui.launch import create_application, start
app = create_application()
window = start(None, open_initial=False)
app.processEvents()
print("LOADED" + json.dumps(sorted(m for m in sys.modules if "." not in m)))
"""


def test_the_window_shows_without_the_packages_whose_hooks_are_replaced(tmp_path: Path) -> None:
    # What the bundle no longer imports at start must not be what its window needs.
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "MEANINGBENCH_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("LOADED"))
    loaded = set(json.loads(line[len("LOADED") :]))
    assert "PySide6" in loaded and "meaningbench" in loaded
    assert not loaded & REPLACED
