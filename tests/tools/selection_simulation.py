"""The selection strategies replayed on the public rating files: figures and the plot.

    python -m tests.tools.selection_simulation [DATASETS] [--seeds 20]

Imports SimpDA 2022 (per-rater), QuestEval (anonymous) and ASSET (per-rater) from
DATASETS (default ../shared/datasets; ASSET is CC BY-NC and is only read there) into
temporary studies, scores them with a cheap offline battery, runs `meaningbench simulate`
on each, writes the figures to tests/benchmarks/results/selection_simulation.json and the
three plots, one above the other, to resources/screenshots/selection-simulation.png.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import tempfile
import time
from pathlib import Path

from meaningbench.analysis.selection_sim import plot_svg, simulate_study, summary_lines
from meaningbench.cli import main as cli
from meaningbench.db.study import open_study

ROOT = Path(__file__).resolve().parents[2]
FILES = {
    "SimpDA 2022 (per-rater)": "simpda2022/simpDA_2022.csv",
    "QuestEval (anonymous)": "csmd_sources/questeval_likert_ratings_cleaned.csv",
    "ASSET (per-rater)": "asset/human_ratings.csv",
}
BATTERY = ["bleu", "sari", "chrf", "meteor", "bertscore"]
STRATEGIES = ("disagreement", "variance", "diversity")


def _stack(svgs: list[str]) -> str:
    """The charts one above the other, in one SVG (groups, which Qt's renderer draws)."""
    sizes = [
        tuple(int(v) for v in re.search(r"width='(\d+)' height='(\d+)'", s).groups()) for s in svgs
    ]  # type: ignore[union-attr]
    width, height = max(w for w, _ in sizes), sum(h for _, h in sizes)
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}'>"
    ]
    y = 0
    for svg, (_, h) in zip(svgs, sizes, strict=True):
        inner = svg[svg.index(">") + 1 : svg.rindex("</svg>")]
        head = svg[: svg.index(">")]
        font = re.search(r"font-family='[^']*' font-size='\d+'", head)
        parts.append(f"<g transform='translate(0 {y})' {font.group(0) if font else ''}>{inner}</g>")
        y += h
    parts.append("</svg>")
    return "".join(parts)


def _command_seconds(path: Path, seeds: int) -> dict[str, float]:
    """`meaningbench simulate` on the study as a user runs it (a whole process: start-up,
    reading the study and the simulation), with the machine's load before and after."""
    import os
    import subprocess
    import sys

    before = os.getloadavg()[0]
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "meaningbench.cli", "simulate", str(path), "--json",
         "--seeds", str(seeds)],
        check=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 1), "load_before": before, "load_after": os.getloadavg()[0]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "datasets", nargs="?", type=Path, default=ROOT.parent / "shared" / "datasets"
    )
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    from meaningbench.ui.svg_image import write_png

    results: dict[str, object] = {}
    svgs = []
    with tempfile.TemporaryDirectory() as tmp:
        for title, rel in FILES.items():
            path = Path(tmp) / (Path(rel).stem + ".mbstudy")
            assert cli(["import", str(path), str(args.datasets / rel)]) == 0
            assert cli(["score", str(path), "--metrics", ",".join(BATTERY), "--quiet"]) == 0
            study = open_study(path)
            started = time.perf_counter()
            try:
                sim = simulate_study(study, STRATEGIES, seeds=args.seeds)
            finally:
                study.close()
            elapsed = time.perf_counter() - started
            command = _command_seconds(path, args.seeds)
            print(title)
            print("\n".join(summary_lines(sim)))
            print(f"  ({elapsed:.1f} s in-process, {command['seconds']:.1f} s the command)")
            data = sim.to_dict()
            data.pop("curves")
            results[title] = {**data, "seconds": round(elapsed, 1), "command": command}
            svgs.append(plot_svg(sim, title=title))
    results["machine"] = {"platform": platform.platform(), "cpus": __import__("os").cpu_count()}
    out = ROOT / "tests" / "benchmarks" / "results" / "selection_simulation.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    png = ROOT / "resources" / "screenshots" / "selection-simulation.png"
    write_png(_stack(svgs), png)
    print(f"wrote {out.relative_to(ROOT)} and {png.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
