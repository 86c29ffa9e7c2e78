"""`packaging/bundle_size.py`: the bundle's size, what dominates it, and the 1.2 GB goal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "packaging" / "bundle_size.py"


def sized(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.truncate(size)  # sparse: the apparent size is what an unpacked bundle occupies


def run(bundle: Path, out: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(SCRIPT), str(bundle), "--json", str(out)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def test_sizes_by_part_and_within_the_goal(tmp_path: Path) -> None:
    bundle = tmp_path / "meaningbench"
    sized(bundle / "MeaningBench", 20_000_000)
    sized(bundle / "_internal" / "torch" / "lib" / "libtorch_cpu.so", 400_000_000)
    sized(bundle / "_internal" / "torch" / "_C.so", 30_000_000)
    sized(bundle / "_internal" / "PySide6" / "Qt" / "lib" / "libQt6Widgets.so.6", 7_000_000)
    (bundle / "_internal" / "libz.so.1").symlink_to("torch/_C.so")
    done = run(bundle, tmp_path / "size.json")
    assert done.returncode == 0, done.stderr
    figures = json.loads((tmp_path / "size.json").read_text())
    link = len("torch/_C.so")  # a link counts as itself, not as what it points to
    assert figures["total_bytes"] == 457_000_000 + link
    assert figures["parts"]["torch"] == 430_000_000
    assert figures["parts"]["torch/lib/libtorch_cpu.so"] == 400_000_000
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{bundle}: 0.46 GB unpacked")
    assert lines[1].split() == ["430.0", "MB", "torch"]  # the largest part first


def test_over_the_goal_fails(tmp_path: Path) -> None:
    bundle = tmp_path / "meaningbench"
    sized(bundle / "_internal" / "torch" / "lib" / "libtorch_cuda.so", 1_300_000_000)
    done = run(bundle, tmp_path / "size.json")
    assert done.returncode == 1
    assert "1.30 GB unpacked (goal 1.2 GB)" in done.stdout
