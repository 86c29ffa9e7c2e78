"""Smoke test of the built bundle (`make bundle-check`), run under a virtual X server.

It uses the bundle the way a person does, from outside: the desktop program is started,
its windows are found and typed into with xdotool (real X key events through the XTEST
extension, so the keys go through Qt's own input handling, shortcuts and focus), and what
the person did is then read back with the bundled command line:

1. `meaningbench` is a link to `MeaningBench`, torch keeps its torch_shm_manager;
   `meaningbench --version` and `MeaningBench --version` name this version;
2. a first start with an empty data folder shows the welcome page (the start-up time and
   the CPU time it took are measured after the bundle's files were dropped from the page
   cache: a cold start; packaging/start_time.py);
3. the demo study, built by the bundled command line, is opened in the desktop program;
   one item is rated through the rating screen (Annotate, a new rater, digits, Enter);
   the program is quit with Ctrl+Q;
4. `meaningbench export --ratings` finds that rating in the study file;
5. `meaningbench dataset` writes the study as a rating dataset: its Parquet file (pyarrow
   inside the bundle) is read back with the build environment's pyarrow and holds that
   rating;
6. BLEU, METEOR (WordNet inside the bundle) and BERTScore (the bundled MiniLM encoder)
   are scored by the bundled command line with no network (HF_HUB_OFFLINE=1, and a
   network namespace of its own where the system allows one); BERTScore ran on ONNX
   Runtime, its default on the CPU: the bundled torch exported the encoder (the graph and
   its hash in the data folder) and the bundled onnxruntime ran it, as the run's recorded
   versions say. A bundle without either would score in torch, quietly but slower.

Needs xdotool (Debian package `xdotool`) and runs inside `xvfb-run`. Screenshots of the
welcome page and of the rating screen are written to --shots when given (PySide6 from the
build environment grabs the X screen). Exits non-zero on the first failure.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import start_time  # packaging/start_time.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
RATER = "bundle-check"
RATING = 73  # typed as the digits 7 and 3 on each scale
WINDOW_TIMEOUT_S = start_time.WINDOW_TIMEOUT_S


class CheckFailed(Exception):
    pass


def step(message: str) -> None:
    print(f"bundle-check: {message}", flush=True)


def run(cmd: list[str], env: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise CheckFailed(
            f"{' '.join(cmd)} exited with {done.returncode}\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout


def wait_window(name: str, proc: subprocess.Popen[bytes], timeout: float = WINDOW_TIMEOUT_S) -> str:
    """The id of the first visible window whose title matches `name` (a regex)."""
    try:
        return start_time.find_window(name, proc, timeout)
    except start_time.NoWindow as exc:
        raise CheckFailed(str(exc)) from exc


def focus(window: str) -> None:
    # No window manager under Xvfb: focus is given directly, and the pointer is put on the
    # window so that X's pointer-root focus cannot move the keys elsewhere.
    xdotool("mousemove", "--window", window, "40", "40")
    xdotool("windowfocus", "--sync", window)
    time.sleep(0.2)


def xdotool(*args: str) -> str:
    return start_time.xdotool(*args)


def keys(*names: str) -> None:
    for name in names:
        xdotool("key", "--delay", "60", name)
        time.sleep(0.15)


def screenshot(path: Path) -> None:
    grab = (
        "import sys;from PySide6.QtGui import QGuiApplication;a=QGuiApplication(['grab']);"
        "sys.exit(0 if a.primaryScreen().grabWindow(0).save(sys.argv[1]) else 1)"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run([sys.executable, "-c", grab, str(path)], env=env, timeout=60)
    if done.returncode == 0:
        step(f"screenshot {path}")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def quit_program(proc: subprocess.Popen[bytes], window: str, summary: bool) -> None:
    focus(window)
    keys("ctrl+q")
    if summary:
        # What was saved is said in a box that outlives the window; closing it ends the program.
        box = wait_window("^Ratings saved$", proc, 20)
        focus(box)
        keys("Return")
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired as exc:
        proc.kill()
        raise CheckFailed("the program did not end after Ctrl+Q") from exc
    if proc.returncode != 0:
        raise CheckFailed(f"the program ended with exit code {proc.returncode}")


def check_versions(bundle: Path, env: dict[str, str]) -> str:
    version = run([str(bundle / "meaningbench"), "--version"], env).strip()
    gui_version = run([str(bundle / "MeaningBench"), "--version"], env).strip()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    expected = f"meaningbench {project['version']}"
    if version != expected or gui_version != expected:
        raise CheckFailed(f"--version said {version!r} and {gui_version!r}, not {expected!r}")
    step(f"--version: {version}")
    return version


def check_layout(bundle: Path) -> None:
    """The command line is a link to the desktop program; torch keeps only the program it runs."""
    cli = bundle / "meaningbench"
    if not cli.is_symlink() or os.readlink(cli) != "MeaningBench":
        raise CheckFailed(f"{cli} is not a link to MeaningBench")
    # `import torch` refuses to load without torch_shm_manager (its shared-memory helper).
    tools = bundle / "_internal" / "torch" / "bin"
    names = sorted(p.name for p in tools.iterdir()) if tools.is_dir() else []
    if names != ["torch_shm_manager"] or not os.access(tools / names[0], os.X_OK):
        raise CheckFailed(f"{tools} holds {names}, not an executable torch_shm_manager alone")
    step("layout: meaningbench -> MeaningBench; torch/bin/torch_shm_manager")


def check_welcome(bundle: Path, env: dict[str, str], shots: Path | None) -> start_time.Start:
    step(f"cold start: {load()}")
    try:
        proc, window, figures = start_time.start([str(bundle / "MeaningBench")], env, cold=bundle)
    except start_time.NoWindow as exc:
        raise CheckFailed(str(exc)) from exc
    step(
        f"cold start to the welcome window: {figures.wall_s:.2f} s, "
        f"CPU time of the program by then {figures.cpu_s:.2f} s"
    )
    time.sleep(1.5)
    if shots:
        screenshot(shots / "bundle-welcome.png")
    quit_program(proc, window, summary=False)
    return figures


def rate_one_item(bundle: Path, env: dict[str, str], study: Path, shots: Path | None) -> float:
    started = time.monotonic()
    proc = subprocess.Popen([str(bundle / "MeaningBench"), str(study)], env=env)
    window = wait_window(f"^{study.stem} — MeaningBench$", proc)
    seconds = time.monotonic() - started
    step(f"warm start to the window with the demo study open: {seconds:.2f} s")
    try:
        focus(window)
        keys("ctrl+shift+a")  # Study ▸ Annotate…
        picker = wait_window("^Who is rating\\?$", proc, 20)
        focus(picker)
        xdotool("type", "--delay", "60", RATER)
        keys("Return", "Return")  # a new rater is confirmed with a second Enter
        time.sleep(1.0)
        focus(window)
        # Each scale of the study: the digits 7 and 3 make 73, Tab moves to the next scale
        # (and comes back round to the first when there are fewer scales).
        for _ in range(3):
            xdotool("type", "--delay", "80", str(RATING))
            time.sleep(0.4)
            keys("Tab")
        if shots:
            screenshot(shots / "bundle-rating.png")
        keys("Return")  # submit
        time.sleep(1.0)
        if shots:
            screenshot(shots / "bundle-after-rating.png")
        quit_program(proc, window, summary=True)
    finally:
        if proc.poll() is None:
            proc.kill()
    return seconds


def check_rating(bundle: Path, env: dict[str, str], study: Path, work: Path) -> None:
    out = work / "ratings.csv"
    run([str(bundle / "meaningbench"), "export", str(study), str(out), "--ratings"], env)
    with out.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("annotator") == RATER]
    if not rows:
        raise CheckFailed(f"no rating by {RATER!r} in {study} (export: {out})")
    values = {float(r["rating"]) for r in rows if r.get("rating")}
    if values != {float(RATING)}:
        raise CheckFailed(f"{RATER}'s ratings are {sorted(values)}, not {RATING}: {rows}")
    step(f"the bundled CLI reads {len(rows)} rating(s) of {RATING} by {RATER} from {study.name}")


def check_dataset(bundle: Path, env: dict[str, str], study: Path, work: Path) -> None:
    import pyarrow.parquet as pq  # the build environment's: the bundle's is not importable here

    folder = work / "dataset"
    cmd = [str(bundle / "meaningbench"), "dataset", str(study), str(folder), "--json"]
    said = json.loads(run([*cmd, "--boot", "50"], env))
    path = folder / "ratings.parquet"
    if not path.is_file():
        raise CheckFailed(f"`meaningbench dataset` wrote no {path}")
    table = pq.read_table(path)
    if table.num_rows != said["ratings"] or table.num_rows == 0:
        raise CheckFailed(f"{path} holds {table.num_rows} rows; the command said {said}")
    rows = [r for r in table.to_pylist() if r["rater"] == RATER]
    values = {float(r["value"]) for r in rows}
    # The dataset leaves hidden control items out, and the rater's first item may be one
    # (the demo study's queues are drawn anew each time it is built): then there is
    # nothing of the rater's to find, and the export (check_rating) says which it was.
    with (work / "ratings.csv").open(encoding="utf-8", newline="") as f:
        regular = [r for r in csv.DictReader(f) if r.get("annotator") == RATER
                   and r.get("kind") == "regular"]  # fmt: skip
    if regular and (not rows or values != {float(RATING)}):
        raise CheckFailed(f"{path}: {RATER}'s ratings are {sorted(values)}, not {RATING}")
    if not regular and rows:
        raise CheckFailed(f"{path} holds {RATER}'s rating of a control item: {rows}")
    what = f"{len(rows)} by {RATER}" if regular else f"none by {RATER} (a control item)"
    step(f"the bundled CLI wrote {path.name}: {table.num_rows} ratings, {what}")


def offline_prefix() -> list[str]:
    """A network namespace with no interfaces, where the system lets this user make one."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn"]
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


def check_scoring(bundle: Path, env: dict[str, str], study: Path, work: Path) -> None:
    offline = {**env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    prefix = offline_prefix()
    step("scoring offline" + (" in a network namespace of its own" if prefix else ""))
    copy = work / "scored.mbstudy"
    shutil.copyfile(study, copy)
    metrics = "bleu,meteor,bertscore"
    started = time.monotonic()
    cmd = [str(bundle / "meaningbench"), "score", str(copy), "--metrics", metrics, "--quiet"]
    run([*prefix, *cmd, "--workers", "1"], offline, timeout=1200)
    step(f"scored {metrics} in {time.monotonic() - started:.1f} s")
    # The command line's helpers (its Ctrl+C watcher, scoring workers) are the bundle's own
    # program started again: none of them may open the app's window.
    stray = xdotool("search", "--onlyvisible", "--name", "MeaningBench")
    if stray:
        raise CheckFailed(f"`meaningbench score` left a MeaningBench window open ({stray})")
    out = work / "items.csv"
    run([str(bundle / "meaningbench"), "export", str(copy), str(out)], env)
    with out.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for metric in ("bleu", "meteor", "bertscore"):
        columns = [c for c in rows[0] if c.lower().startswith(metric)]
        filled = [r[c] for r in rows for c in columns if r[c] not in ("", None)]
        if not columns or len(filled) < len(rows):
            raise CheckFailed(
                f"{metric}: columns {columns} hold {len(filled)} scores for {len(rows)} items"
            )
        step(f"{metric}: {len(filled)} scores in {columns}")
    problem = onnx_problem(copy, Path(env["MEANINGBENCH_HOME"]))
    if problem is not None:
        raise CheckFailed(problem)
    step("bertscore ran on ONNX Runtime, its export in the data folder")


def onnx_problem(study: Path, home: Path, metric: str = "bertscore") -> str | None:
    """Why the study's runs of `metric` did not run on ONNX Runtime from an export in the
    data folder `home`, or None when they did."""
    conn = sqlite3.connect(f"file:{study}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT versions FROM metric_run WHERE metric = ? AND status = 'done'", (metric,)
        ).fetchall()
    finally:
        conn.close()
    if not rows:
        return f"{study.name} holds no finished {metric} run"
    failed = sorted((home / "onnx").glob("*.failed"))
    why = (failed[0].read_text(encoding="utf-8").splitlines() or ["?"])[0] if failed else ""
    note = f" (the export failed: {why})" if failed else ""
    for (text,) in rows:
        versions = json.loads(text or "{}")
        backend = versions.get("backend") or "an unrecorded backend"
        if not backend.startswith("onnx"):
            return f"{metric} ran on {backend}, not on ONNX Runtime{note}"
        if not versions.get("onnxruntime"):
            return f"{metric} ran on ONNX Runtime without its version (its metadata is missing)"
    exports = sorted((home / "onnx").glob("*.onnx"))
    if not exports or not all(e.with_name(e.name + ".sha256").is_file() for e in exports):
        return f"no whole ONNX export (a graph and its hash) in {home / 'onnx'}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path, help="the bundle folder (dist/meaningbench)")
    parser.add_argument("--shots", type=Path, default=None, help="folder for screenshots")
    parser.add_argument("--report", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args(argv)
    if not shutil.which("xdotool"):
        print("bundle-check needs xdotool: apt-get install xdotool", file=sys.stderr)
        return 2
    if not os.environ.get("DISPLAY"):
        print("bundle-check needs an X display: run it under xvfb-run", file=sys.stderr)
        return 2
    bundle = args.bundle.resolve()
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mb-bundle-check-") as tmp:
        work = Path(tmp)
        # A data folder of its own: the first start is a first start, and nothing of the
        # user's (preferences, recent studies, the NLTK folder) is read or changed.
        env = {**os.environ, "MEANINGBENCH_HOME": str(work / "home"), "QT_QPA_PLATFORM": "xcb"}
        env.pop("PYTHONPATH", None)
        try:
            check_layout(bundle)
            version = check_versions(bundle, env)
            cold = check_welcome(bundle, env, args.shots)
            study = Path(run([str(bundle / "meaningbench"), "demo", "--no-gui"], env).strip())
            step(f"demo study {study}")
            warm = rate_one_item(bundle, env, study, args.shots)
            check_rating(bundle, env, study, work)
            check_dataset(bundle, env, study, work)
            check_scoring(bundle, env, study, work)
        except CheckFailed as exc:
            print(f"bundle-check: FAILED: {exc}", file=sys.stderr)
            return 1
    if args.report:
        args.report.write_text(
            json.dumps(
                {
                    "version": version,
                    "cold_start_s": cold.wall_s,
                    "cold_start_cpu_s": cold.cpu_s,
                    "cold_start_load": cold.load,
                    "warm_start_with_study_s": warm,
                },
                indent=2,
            )
        )
    step("passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
