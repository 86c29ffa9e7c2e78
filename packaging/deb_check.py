"""`make deb-check`: the .deb installed with apt, used, and removed, under a virtual X server.

    xvfb-run -a python packaging/deb_check.py dist/meaningbench_VERSION_amd64.deb \
        [--archive dist/meaningbench-VERSION-linux-x86_64.tar.xz] [--report FILE]

1. `apt-get install ./….deb` (apt resolves its Depends from the distribution's archive);
2. `meaningbench --version` from the PATH; the desktop entry is valid
   (desktop-file-validate, where installed), and the `.mbstudy` type is known to the
   system's MIME database (where shared-mime-info is installed);
3. bundle_check.py on /opt/meaningbench: the window comes up, a rating is made through it by
   keyboard events (xdotool), and the command line finds it; the dataset and offline scoring
   (BERTScore on the bundled ONNX Runtime);
4. the figures, side by side in one run: the .deb's size, the installed size, and the cold
   start to the window from the installed package and from the development environment
   (`.venv/bin/meaningbench gui`), alternating, each after its files were dropped from the
   page cache;
5. `apt-get remove`, then `dpkg --purge`: every file the package installed is gone, and
   nothing is left in /opt/meaningbench or under /usr with the package's name;
6. with `--archive`, the portable archive is unpacked into a temporary folder and its `run`
   script is checked the same way (version, window, rating);
7. with `--bare ROOT`, the Depends are checked on a bare Debian: a minimal system
   (`debootstrap --variant=minbase`, made in ROOT on first use and kept) gets the .deb
   through apt, which installs its Depends and nothing else; there every program,
   extension and X11 plugin of the bundle must find its libraries (`ldd`),
   `meaningbench --version` must answer, and the window must come up under Xvfb (xvfb and
   xdotool are then added to that system, as tools of the check).

Runs on this machine, as root (apt, chroot). Exits non-zero on the first failure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import bundle_check  # beside this script
import start_time

ROOT = Path(__file__).resolve().parents[1]
PREFIX = Path("/opt/meaningbench")
PACKAGE = "meaningbench"


class CheckFailed(Exception):
    pass


def step(message: str) -> None:
    print(f"deb-check: {message}", flush=True)


def apt(*args: str) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    done = subprocess.run(["apt-get", "-y", "-q", *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise CheckFailed(f"apt-get {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr}")


def installed_files() -> list[Path]:
    done = subprocess.run(["dpkg", "-L", PACKAGE], capture_output=True, text=True, check=True)
    return [Path(line) for line in done.stdout.splitlines() if line.strip()]


def check_installed(deb: Path) -> list[Path]:
    apt("install", str(deb.resolve()))
    files = installed_files()
    step(f"installed: {len(files)} paths; {PREFIX} {du_mib(PREFIX):.0f} MiB")
    on_path = shutil.which(PACKAGE)
    if on_path != f"/usr/bin/{PACKAGE}":
        raise CheckFailed(f"`{PACKAGE}` on the PATH is {on_path}, not /usr/bin/{PACKAGE}")
    version = subprocess.run([PACKAGE, "--version"], capture_output=True, text=True, timeout=120)
    expected = f"{PACKAGE} {deb.name.split('_')[1]}"
    if version.stdout.strip() != expected:
        raise CheckFailed(f"{PACKAGE} --version said {version.stdout.strip()!r}, not {expected!r}")
    step(f"{PACKAGE} --version from the PATH: {version.stdout.strip()}")
    entry = Path("/usr/share/applications/meaningbench.desktop")
    if shutil.which("desktop-file-validate"):
        done = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
        # Hints (two main categories: Education and Science, as asked) are not faults.
        faults = [line for line in done.stdout.splitlines() if " hint: " not in line]
        if done.returncode != 0 or faults:
            raise CheckFailed(f"{entry}: {' '.join(faults) or done.stderr}")
        step(f"{entry}: valid")
    known = Path("/usr/share/mime/application/x-meaningbench-study.xml")
    if shutil.which("update-mime-database"):
        if not known.is_file():
            raise CheckFailed(f"the MIME database does not know .mbstudy ({known} is missing)")
        step("the MIME database knows application/x-meaningbench-study")
    return files


def du_mib(path: Path) -> float:
    done = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[0]) / 1024


def cold_starts(runs: int, venv: Path) -> dict[str, list[float]]:
    """Cold starts to the window, the installed package and the venv alternating."""
    programs = {
        "installed": ([f"/usr/bin/{PACKAGE}", "gui"], PREFIX),
        "venv": ([str(venv / "bin" / PACKAGE), "gui"], venv),
    }
    walls: dict[str, list[float]] = {name: [] for name in programs}
    with tempfile.TemporaryDirectory(prefix="mb-deb-start-") as tmp:
        for i in range(runs):
            for name, (cmd, cold) in programs.items():
                home = f"{tmp}/{name}{i}"
                env = {**os.environ, "MEANINGBENCH_HOME": home, "QT_QPA_PLATFORM": "xcb"}
                if name == "venv":
                    start_time.evict_from_page_cache(ROOT / "app")
                proc, _, figures = start_time.start(cmd, env, cold=cold)
                start_time.end(proc)
                walls[name].append(figures.wall_s)
                step(f"cold start {name} run {i + 1}: {figures.wall_s:.2f} s to the window")
    return walls


def check_removed(files: list[Path]) -> None:
    apt("remove", PACKAGE)
    # The package has no conffiles, so remove leaves nothing for purge; dpkg --purge says so.
    subprocess.run(["dpkg", "--purge", PACKAGE], capture_output=True, check=False)
    status = subprocess.run(["dpkg", "-s", PACKAGE], capture_output=True, text=True)
    if status.returncode == 0 and "Status: deinstall ok config-files" not in status.stdout:
        raise CheckFailed(f"dpkg still lists {PACKAGE} after removal:\n{status.stdout[:500]}")
    left = [p for p in files if p.is_file() or p.is_symlink()]
    left += [p for p in (PREFIX, Path("/usr/share/doc", PACKAGE)) if p.exists()]
    left += list(Path("/usr").rglob("*meaningbench*"))
    if left:
        raise CheckFailed("left behind after apt-get purge: " + ", ".join(map(str, left[:10])))
    step("removed (apt-get remove, dpkg --purge): nothing left in /opt or /usr")


def check_archive(archive: Path, shots: Path | None) -> None:
    with tempfile.TemporaryDirectory(prefix="mb-dist-check-") as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="tar")
        (top,) = Path(tmp).iterdir()
        run = top / "run"
        version = subprocess.run([str(run), "cli", "--version"], capture_output=True, text=True)
        step(f"archive: {run.relative_to(tmp)} cli --version: {version.stdout.strip()}")
        if not version.stdout.startswith(f"{PACKAGE} "):
            raise CheckFailed(f"{run} cli --version said {version.stdout!r} {version.stderr!r}")
        readme = (top / "README.txt").read_text()
        if "sudo apt install" not in readme:
            raise CheckFailed("the archive's README names no apt command")
        if bundle_check.main([str(top / "meaningbench"), *(["--shots", str(shots)] if shots else [])]):
            raise CheckFailed("bundle-check of the unpacked archive failed")


def in_root(root: Path, *cmd: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
           "DEBIAN_FRONTEND": "noninteractive"}  # fmt: skip
    return subprocess.run(["chroot", str(root), *cmd], env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def check_bare_system(deb: Path, root: Path, mirror: str) -> None:
    """The .deb on a minimal Debian where only its Depends are added (see the module's 7.)."""
    if not (root / "usr" / "bin" / "apt-get").exists():
        step(f"making a minimal Debian in {root} (debootstrap, from {mirror})")
        codename = subprocess.run(["sh", "-c", ". /etc/os-release; echo $VERSION_CODENAME"],
                                  capture_output=True, text=True).stdout.strip() or "bookworm"  # fmt: skip
        subprocess.run(["debootstrap", "--variant=minbase", codename, str(root), mirror],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    subprocess.run(["mount", "-t", "proc", "proc", str(root / "proc")], check=True)
    try:
        in_root(root, "apt-get", "-y", "-q", "purge", PACKAGE)
        shutil.copyfile(deb, root / "tmp" / deb.name)
        in_root(root, "apt-get", "-q", "update")
        done = in_root(root, "apt-get", "-y", "-q", "--no-install-recommends", "install",
                       f"/tmp/{deb.name}")  # fmt: skip
        if done.returncode != 0:
            raise CheckFailed(f"apt-get install on the bare system: {done.stdout[-1500:]}{done.stderr}")
        missing = bare_missing_libraries(root)
        if missing:
            raise CheckFailed("on the bare system, not found: " + "; ".join(missing[:20]))
        step("bare system: every program, extension and X11 plugin finds its libraries")
        version = in_root(root, PACKAGE, "--version")
        if not version.stdout.startswith(f"{PACKAGE} "):
            raise CheckFailed(f"bare system: --version said {version.stdout!r} {version.stderr!r}")
        step(f"bare system: {version.stdout.strip()}")
        done = in_root(root, "apt-get", "-y", "-q", "--no-install-recommends", "install",
                       "xvfb", "xauth", "xdotool")  # fmt: skip
        if done.returncode != 0:
            raise CheckFailed(f"apt-get install xvfb on the bare system: {done.stderr}")
        script = (
            f"MEANINGBENCH_HOME=/tmp/mb-home QT_QPA_PLATFORM=xcb {PACKAGE} gui & "
            "xdotool search --sync --onlyvisible --name '^MeaningBench$' >/dev/null "
            "&& echo window; kill %1"
        )
        window = in_root(root, "timeout", "120", "xvfb-run", "-a", "sh", "-c", script)
        if "window" not in window.stdout:
            raise CheckFailed(f"bare system: no window ({window.stdout[-500:]}{window.stderr[-1500:]})")
        step("bare system: the window comes up under Xvfb")
        in_root(root, "apt-get", "-y", "-q", "purge", PACKAGE)
    finally:
        subprocess.run(["umount", str(root / "proc")], check=False)


def bare_missing_libraries(root: Path) -> list[str]:
    """`ldd` inside the root on the bundle's roots (system_libraries.is_root)."""
    from system_libraries import elf_files, is_root

    bundle = root / PREFIX.relative_to("/")
    missing = []
    for path in elf_files(bundle):
        relative = path.relative_to(bundle)
        if not is_root(relative):
            continue
        done = in_root(root, "env", f"LD_LIBRARY_PATH={PREFIX}/_internal", "ldd",
                       str(PREFIX / relative))  # fmt: skip
        for line in done.stdout.splitlines():
            if "not found" in line:
                missing.append(f"{line.split()[0]} (by {relative})")
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("deb", type=Path)
    parser.add_argument("--archive", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=3, help="cold starts of each")
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv")
    parser.add_argument("--shots", type=Path, default=None)
    parser.add_argument("--report", type=Path, default=None, help="write the figures as JSON")
    parser.add_argument("--bare", type=Path, default=None, help="a minimal Debian to check in")
    parser.add_argument("--mirror", default="http://deb.debian.org/debian")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("deb-check installs a package: run it as root (sudo make deb-check)", file=sys.stderr)
        return 2
    if not os.environ.get("DISPLAY") or not shutil.which("xdotool"):
        print("deb-check needs xdotool and an X display: run it under xvfb-run", file=sys.stderr)
        return 2
    try:
        files = check_installed(args.deb)
        try:
            if bundle_check.main([str(PREFIX), *(["--shots", str(args.shots)] if args.shots else [])]):
                raise CheckFailed(f"bundle-check of the installed {PREFIX} failed")
            installed_mib = du_mib(PREFIX)
            walls = cold_starts(args.runs, args.venv)
        finally:
            check_removed(files)
        if args.archive:
            check_archive(args.archive, args.shots)
        if args.bare:
            check_bare_system(args.deb, args.bare.resolve(), args.mirror)
    except CheckFailed as exc:
        print(f"deb-check: FAILED: {exc}", file=sys.stderr)
        return 1
    figures = {
        "deb_mib": args.deb.stat().st_size / 2**20,
        "installed_mib": installed_mib,
        "archive_mib": args.archive.stat().st_size / 2**20 if args.archive else None,
        "cold_start_installed_s": walls["installed"],
        "cold_start_venv_s": walls["venv"],
        "load_average": os.getloadavg()[0],
        "cpus": os.cpu_count(),
    }
    for name in ("installed", "venv"):
        values = walls[name]
        step(f"cold start to the window, {name}: median {statistics.median(values):.2f} s "
             f"({min(values):.2f}-{max(values):.2f})")  # fmt: skip
    step(f".deb {figures['deb_mib']:.0f} MiB, installed {installed_mib:.0f} MiB")
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(figures, indent=2))
    step("passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
