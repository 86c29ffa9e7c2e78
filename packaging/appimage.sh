#!/usr/bin/env bash
# Wrap the PyInstaller bundle (dist/meaningbench) as an AppImage for Linux: `make appimage`.
#
#   packaging/appimage.sh [BUNDLE_DIR] [OUT_DIR]
#
# Builds the AppDir (the bundle under usr/lib/meaningbench, AppRun, the desktop entry and
# the icon), then runs appimagetool on it, which puts the AppImage type-2 runtime in front
# of a squashfs image of the AppDir. Neither appimagetool nor the runtime is packaged on
# PyPI, in Debian (bookworm: only libappimage, squashfs-tools, squashfuse) or on npm: the
# tools found there (appimage-builder, python-appimage, pyproject-appimage, appimage,
# @reforged/maker-appimage, electron-builder's app-builder) download one of them from the
# AppImage project's GitHub releases when they run. So it is installed by hand: the
# appimagetool-x86_64.AppImage release on the PATH (as appimagetool) or named in
# APPIMAGETOOL. Without it the AppDir is left ready in OUT_DIR, the script says what to
# install and exits with status 3, so `make appimage` fails.
#
# The AppImage runs the desktop app; `MeaningBench-x86_64.AppImage cli ARGS…` runs the
# command line (`… cli score study.mbstudy --metrics bleu`). After building it, the script
# runs `cli --version` through it (extracting itself where FUSE is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${1:-dist/meaningbench}
OUT=${2:-dist}
ARCH=${ARCH:-$(uname -m)}
APPDIR="$OUT/MeaningBench.AppDir"
VERSION=$("$BUNDLE/meaningbench" --version | awk '{print $2}')

[ -x "$BUNDLE/MeaningBench" ] || { echo "appimage: no bundle in $BUNDLE (make bundle)" >&2; exit 2; }

rm -rf "$APPDIR"
mkdir -p "$APPDIR/usr/lib" "$APPDIR/usr/share/applications" \
    "$APPDIR/usr/share/icons/hicolor/scalable/apps" "$APPDIR/usr/share/mime/packages"
cp -a "$BUNDLE" "$APPDIR/usr/lib/meaningbench"

cat > "$APPDIR/AppRun" <<'RUN'
#!/bin/sh
# The desktop app, or the command line with `cli` as the first argument.
HERE=$(dirname "$(readlink -f "$0")")
if [ "${1:-}" = "cli" ]; then
    shift
    exec "$HERE/usr/lib/meaningbench/meaningbench" "$@"
fi
exec "$HERE/usr/lib/meaningbench/MeaningBench" "$@"
RUN
chmod 755 "$APPDIR/AppRun"

# The desktop entry starts the AppImage itself; appimaged and AppImageLauncher rewrite Exec.
sed -e 's|^Exec=.*|Exec=MeaningBench %f|' packaging/meaningbench.desktop \
    > "$APPDIR/usr/share/applications/meaningbench.desktop"
cp "$APPDIR/usr/share/applications/meaningbench.desktop" "$APPDIR/meaningbench.desktop"
cp packaging/meaningbench.svg "$APPDIR/usr/share/icons/hicolor/scalable/apps/meaningbench.svg"
cp packaging/meaningbench.svg "$APPDIR/meaningbench.svg"
ln -sf meaningbench.svg "$APPDIR/.DirIcon"
cp packaging/meaningbench-mime.xml "$APPDIR/usr/share/mime/packages/meaningbench.xml"

# The AppDir works as it is (AppRun is what the AppImage runs).
GOT=$("$APPDIR/AppRun" cli --version)
[ "$GOT" = "meaningbench $VERSION" ] || { echo "appimage: $APPDIR/AppRun cli --version said '$GOT'" >&2; exit 1; }
echo "appimage: $APPDIR/AppRun cli --version: $GOT"

TOOL=${APPIMAGETOOL:-$(command -v appimagetool || command -v appimagetool-"$ARCH".AppImage || true)}
if [ -z "$TOOL" ]; then
    cat >&2 <<MSG
appimage: the AppDir is ready in $APPDIR, but no AppImage was made: appimagetool was not found.
appimage: install it from the AppImage project's releases (it is not on PyPI, in Debian or on npm):
appimage:   appimagetool-$ARCH.AppImage from https://github.com/AppImage/appimagetool/releases
appimage: make it executable, then put it on the PATH as appimagetool or run
appimage:   APPIMAGETOOL=/path/to/appimagetool-$ARCH.AppImage make appimage
MSG
    exit 3
fi
TARGET="$OUT/MeaningBench-$VERSION-$ARCH.AppImage"
# Inside containers without FUSE an AppImage runs by extracting itself (the tool too).
APPIMAGE_EXTRACT_AND_RUN=1 ARCH="$ARCH" "$TOOL" --no-appstream "$APPDIR" "$TARGET"
GOT=$(APPIMAGE_EXTRACT_AND_RUN=1 "$TARGET" cli --version)
[ "$GOT" = "meaningbench $VERSION" ] || { echo "appimage: $TARGET cli --version said '$GOT'" >&2; exit 1; }
echo "appimage: $TARGET ($(du -h "$TARGET" | cut -f1)); cli --version: $GOT"
