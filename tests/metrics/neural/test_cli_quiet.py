"""`meaningbench score` with a model metric writes only its own progress to stderr: no
"Loading weights" bar, no warnings from transformers or torch."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAIRS = (
    "source,output,system\n"
    "The cat sat on the mat.,A cat was on the mat.,a\n"
    "The committee postponed the vote.,The vote was delayed.,a\n"
    "The cat sat on the mat.,The cat sat.,b\n"
)
# tqdm's bar: "Scoring: 100%|####| 3/3 [00:01<00:00, 2.9item/s, bertscore[refs=source]]"
OWN_LINE = re.compile(r"^(Scoring: .*|meaningbench: .*)$")


def test_score_writes_nothing_but_its_progress_to_stderr(tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MEANINGBENCH_HOME": str(tmp_path / "home")}
    # Warnings a library prints once per process (a deprecation, a non-writable array)
    # would show here: they must not reach the user.
    env.pop("PYTHONWARNINGS", None)
    data = tmp_path / "pairs.csv"
    data.write_text(PAIRS, encoding="utf-8")
    study = tmp_path / "s.mbstudy"
    cli = [sys.executable, "-m", "meaningbench.cli"]
    subprocess.run([*cli, "import", str(study), str(data)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    done = subprocess.run(
        [*cli, "score", str(study), "--metrics", "bertscore"],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "bertscore" in done.stdout and "done" in done.stdout
    segments = [s.strip() for s in re.split(r"[\r\n]", done.stderr) if s.strip()]
    assert segments, "the progress bar is missing"
    # tqdm redraws with \r and may clear the line with escape codes before the last draw.
    foreign = [s for s in segments if not OWN_LINE.match(s.replace("\x1b[A", "").strip())]
    assert not foreign, foreign
    assert any("3/3" in s for s in segments)


def test_passive_thread_waits_are_set_before_torch_and_a_user_choice_is_kept() -> None:
    code = (
        "import os, sys\n"
        "from meaningbench.metrics.neural.support.models import prefer_passive_thread_waits\n"
        "prefer_passive_thread_waits()\n"
        "print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()  # fmt: skip
    assert out == ["PASSIVE", "False"]
    mine = subprocess.run([sys.executable, "-c", code], env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
                          capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    assert mine == ["ACTIVE", "False"]
    late = subprocess.run(
        [sys.executable, "-c", "import torch\n" + code], env=env, capture_output=True, text=True,
        check=True,
    ).stdout.split()  # fmt: skip
    assert late == ["None", "True"]  # torch's OpenMP already started: nothing to set
