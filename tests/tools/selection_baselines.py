"""subset2evaluate's methods beside the product's strategies on the public rating files.

    python -m tests.tools.selection_baselines [DATASETS] [--seeds 20] [--rounds 4]

Imports SimpDA 2022, QuestEval and ASSET from DATASETS (default ../shared/datasets; ASSET is
CC BY-NC and is only read there) into temporary studies, scores them with bleu, chrf, ter
and sari, runs `meaningbench simulate --compare-subset2evaluate` for both targets (the
whole command, timed; with --rounds, each strategy topped up adaptively too), writes the field's figures to
tests/benchmarks/results/selection_baselines.json and SimpDA's two plots, one above the
other, to resources/screenshots/selection-baselines.png. Needs subset2evaluate 1.0.27.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from meaningbench.cli import main as cli
from tests.tools.selection_simulation import _stack

ROOT = Path(__file__).resolve().parents[2]
FILES = {
    "SimpDA 2022": "simpda2022/simpDA_2022.csv",
    "QuestEval": "csmd_sources/questeval_likert_ratings_cleaned.csv",
    "ASSET": "asset/human_ratings.csv",
}
BATTERY = ["bleu", "chrf", "ter", "sari"]


def _simulate(
    path: Path, target: str, seeds: int, plot: Path, rounds: int = 0
) -> dict[str, object]:
    """The command as a user runs it, with the machine's load before and after."""
    before = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "meaningbench.cli", "simulate", str(path), "--json",
         "--target", target, "--seeds", str(seeds), "--compare-subset2evaluate",
         "--out", str(plot), "--rounds", str(rounds)],
        capture_output=True,
        text=True,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return {"refused": done.stderr.strip().splitlines()[-1]}
    out = json.loads(done.stdout)
    return {
        "field_protocol": out["field_protocol"],
        "subset2evaluate": out["subset2evaluate"],
        "summary": out["summary"],
        "command": {
            "seconds": round(seconds, 1),
            "load_before": before,
            "load_after": os.getloadavg()[0],
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "datasets", nargs="?", type=Path, default=ROOT.parent / "shared" / "datasets"
    )
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    from meaningbench.ui.svg_image import write_png

    results: dict[str, object] = {}
    svgs = []
    with tempfile.TemporaryDirectory() as tmp:
        for title, rel in FILES.items():
            path = Path(tmp) / (Path(rel).stem + ".mbstudy")
            assert cli(["import", str(path), str(args.datasets / rel)]) == 0
            assert cli(["score", str(path), "--metrics", ",".join(BATTERY), "--quiet"]) == 0
            for target in ("metrics", "systems"):
                plot = Path(tmp) / f"{path.stem}-{target}.svg"
                found = _simulate(path, target, args.seeds, plot, args.rounds)
                results[f"{title}, {target}"] = found
                print(title, target, found.get("refused") or found["command"])
                if title == "SimpDA 2022" and "refused" not in found:
                    svgs.append(plot.read_text(encoding="utf-8"))
    results["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count()}
    out = ROOT / "tests" / "benchmarks" / "results" / "selection_baselines.json"
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    png = ROOT / "resources" / "screenshots" / "selection-baselines.png"
    write_png(_stack(svgs), png)
    print(f"wrote {out.relative_to(ROOT)} and {png.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
