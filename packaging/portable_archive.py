"""`make dist`: the bundle as a portable archive, `meaningbench-VERSION-linux-ARCH.tar.xz`.

    python packaging/portable_archive.py dist/meaningbench dist

Unpacked anywhere (no root needed), the folder holds:
- `run`: starts the desktop program (`./run study.mbstudy` opens a study);
  `./run cli ARGS` runs the command line (`./run cli score study.mbstudy --metrics bleu`);
- `install-desktop-entry`: adds the program to this user's menu and `.mbstudy` files to
  its file manager (under ~/.local/share, pointing at this folder);
- `README.txt`: the system libraries the program needs and the commands that install
  them (made by system_libraries.py from the bundle itself);
- `meaningbench/`: the bundle.
The archive is written to a temporary name beside it and renamed when complete.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from debian_package import link_copy, project  # beside this script
from meaningbench.desktop import PACKAGES as QT_PACKAGES
from system_libraries import SystemNeeds, apt_command, system_needs

ROOT = Path(__file__).resolve().parents[1]

RUN = """\
#!/bin/sh
# The desktop program, or the command line with `cli` as the first argument.
HERE=$(dirname "$(readlink -f "$0")")
if [ "${1:-}" = "cli" ]; then
    shift
    exec "$HERE/meaningbench/meaningbench" "$@"
fi
exec "$HERE/meaningbench/MeaningBench" "$@"
"""

INSTALL_DESKTOP_ENTRY = """\
#!/bin/sh
# Adds MeaningBench to this user's menu and opens .mbstudy files with it. Run it again
# after moving this folder; remove with: rm ~/.local/share/applications/meaningbench.desktop
set -e
HERE=$(dirname "$(readlink -f "$0")")
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
mkdir -p "$DATA/applications" "$DATA/icons/hicolor/scalable/apps" "$DATA/mime/packages"
sed -e "s|^Exec=.*|Exec=\\"$HERE/run\\" %f|" "$HERE/share/meaningbench.desktop" \\
    > "$DATA/applications/meaningbench.desktop"
cp "$HERE/share/meaningbench.svg" "$DATA/icons/hicolor/scalable/apps/meaningbench.svg"
cp "$HERE/share/meaningbench-mime.xml" "$DATA/mime/packages/meaningbench.xml"
command -v update-mime-database >/dev/null && update-mime-database "$DATA/mime" || true
command -v update-desktop-database >/dev/null && update-desktop-database "$DATA/applications" || true
echo "MeaningBench is in the menu (Education, Science); .mbstudy files open with it."
"""


def readme(version: str, needs: SystemNeeds) -> str:
    rpm = sorted({QT_PACKAGES[s][1] for s in needs.sonames if s in QT_PACKAGES})
    return f"""\
MeaningBench {version}, portable (Linux, {platform.machine()})

Start the desktop program:        ./run
Open a study:                     ./run path/to/study.mbstudy
The command line:                 ./run cli --help
Add it to the menu:               ./install-desktop-entry

Nothing needs to be installed for the command line. The window needs the X11 and
OpenGL libraries of a desktop; most desktops have them. Where one is missing, the
program says which, and what installs it. All of them at once:

Debian, Ubuntu:
  {apt_command(needs.depends)}
Fedora (the X11 and Qt ones; the rest comes with any desktop):
  sudo dnf install {" ".join(rpm)}

The program works offline: its Python, PyTorch (CPU), Qt and the default sentence
encoder are inside the folder `meaningbench`. Studies, settings and logs live in your
home folder, never here, so this folder can be replaced by a newer one.
"""


def build(bundle: Path, out: Path) -> Path:
    if not (bundle / "MeaningBench").is_file():
        raise SystemExit(f"dist: no bundle in {bundle} (make bundle)")
    version = str(project()["version"])
    needs = system_needs(bundle)
    name = f"meaningbench-{version}-linux-{platform.machine()}"
    out.mkdir(parents=True, exist_ok=True)
    archive = out / f"{name}.tar.xz"
    with tempfile.TemporaryDirectory(dir=out, prefix=".dist-") as tmp:
        top = Path(tmp, name)
        top.mkdir()
        link_copy(bundle, top / "meaningbench")
        for script, text in (("run", RUN), ("install-desktop-entry", INSTALL_DESKTOP_ENTRY)):
            (top / script).write_text(text)
            (top / script).chmod(0o755)
        (top / "README.txt").write_text(readme(version, needs))
        share = top / "share"
        share.mkdir()
        for source in ("meaningbench.desktop", "meaningbench.svg", "meaningbench-mime.xml"):
            shutil.copyfile(ROOT / "packaging" / source, share / source)
        partial = out / f".{archive.name}.part"
        subprocess.run(
            ["tar", "--owner=0", "--group=0", "--numeric-owner", "-C", tmp,
             "--use-compress-program=xz -T0 -6", "-cf", str(partial), name],
            check=True,
        )
        partial.replace(archive)
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path, help="the bundle folder (dist/meaningbench)")
    parser.add_argument("out", type=Path, help="where the archive goes")
    args = parser.parse_args(argv)
    archive = build(args.bundle, args.out)
    print(f"dist: {archive} ({archive.stat().st_size / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
