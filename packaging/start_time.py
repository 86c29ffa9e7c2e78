"""Start-up of the desktop program to its first window: wall time and CPU time, run after run.

    xvfb-run -a -s "-screen 0 1600x1000x24" python packaging/start_time.py \
        dist/meaningbench/MeaningBench --runs 5 --cold dist/meaningbench [--json OUT]
    xvfb-run -a ... python packaging/start_time.py .venv/bin/meaningbench gui --runs 5

Each run starts the program with a data folder of its own (so it shows the welcome page),
waits until its main window is mapped (xdotool), reads the CPU time the process has used by
then (user + system, from /proc: the machine's other work slows the wall time much more
than it changes this), and ends the program. With `--cold FOLDER` the files under FOLDER
(the bundle) are dropped from the page cache before each run, so the start reads them from
disk. `make bundle-check` takes its cold-start figure from here. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

WINDOW_TITLE = "^MeaningBench$"
WINDOW_TIMEOUT_S = 60.0


class NoWindow(Exception):
    pass


@dataclass(frozen=True)
class Start:
    wall_s: float  # from the start of the process to its window being mapped
    cpu_s: float  # user + system CPU time of the process (all its threads) by then
    load: float  # the machine's load average (1 min) when the run began


def xdotool(*args: str) -> str:
    done = subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=30)
    return done.stdout.strip() if done.returncode == 0 else ""


def find_window(name: str, proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The id of the first visible window whose title matches `name` (a regex)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = xdotool("search", "--onlyvisible", "--name", name)
        if found:
            return found.splitlines()[0]
        if proc.poll() is not None:
            raise NoWindow(f"the program exited ({proc.returncode}) before {name!r} showed")
        time.sleep(0.02)
    raise NoWindow(f"no window {name!r} after {timeout:.0f} s")


def cpu_seconds(pid: int) -> float:
    """User + system time of a running process, all threads (fields 14 and 15 of stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    fields = stat.rsplit(")", 1)[1].split()  # the name in parentheses may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def evict_from_page_cache(folder: Path) -> None:
    """Drop the files under `folder` from the page cache, so the next start reads them from disk."""
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def start(
    cmd: list[str], env: dict[str, str], *, cold: Path | None = None, title: str = WINDOW_TITLE
) -> tuple[subprocess.Popen[bytes], str, Start]:
    """Start `cmd` and time it to its window; returns the running process and the window id."""
    if cold is not None:
        evict_from_page_cache(cold)
    load = os.getloadavg()[0]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, env=env)
    try:
        window = find_window(title, proc, WINDOW_TIMEOUT_S)
        wall = time.monotonic() - started
        cpu = cpu_seconds(proc.pid)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, window, Start(wall_s=wall, cpu_s=cpu, load=load)


def end(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def summary(label: str, runs: list[Start]) -> str:
    walls = [r.wall_s for r in runs]
    cpus = [r.cpu_s for r in runs]
    loads = [r.load for r in runs]
    return (
        f"{label}: to the window {statistics.median(walls):.2f} s median "
        f"({min(walls):.2f}–{max(walls):.2f}), CPU {statistics.median(cpus):.2f} s median "
        f"({min(cpus):.2f}–{max(cpus):.2f}); {len(runs)} runs, load average "
        f"{min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} CPUs"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="+", help="the program and its arguments")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", type=Path, default=None, help="drop this folder from the cache")
    parser.add_argument("--json", type=Path, default=None, help="write the runs here")
    args = parser.parse_args(argv)
    if not os.environ.get("DISPLAY"):
        print("start_time needs an X display: run it under xvfb-run", file=sys.stderr)
        return 2
    runs = []
    with tempfile.TemporaryDirectory(prefix="mb-start-") as tmp:
        for i in range(args.runs):
            env = {**os.environ, "MEANINGBENCH_HOME": f"{tmp}/home{i}", "QT_QPA_PLATFORM": "xcb"}
            proc, _, run = start(args.command, env, cold=args.cold)
            end(proc)
            print(f"run {i + 1}: {run.wall_s:.2f} s to the window, CPU {run.cpu_s:.2f} s, "
                  f"load {run.load:.1f}", flush=True)  # fmt: skip
            runs.append(run)
    label = ("cold" if args.cold else "warm") + f" {Path(args.command[0]).name}"
    print(summary(label, runs))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
