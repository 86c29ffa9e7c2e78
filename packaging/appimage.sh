#!/usr/bin/env bash
# Wrap the PyInstaller bundle (dist/meaningbench) as an AppImage for Linux: `make appimage`.
#
#   packaging/appimage.sh [BUNDLE_DIR] [OUT_DIR]
#
# Builds the AppDir (the bundle under usr/lib/meaningbench, AppRun, the desktop entry and
# the icon), then runs appimagetool on it. appimagetool is not on PyPI nor in Debian: put
# it on the PATH (or name it in APPIMAGETOOL), e.g. the appimagetool-x86_64.AppImage
# release of the AppImage project. Without it the AppDir is left ready in OUT_DIR and the
# script says so and exits with status 3.
#
# The AppImage runs the desktop app; `MeaningBench-x86_64.AppImage cli ARGS…` runs the
# command line (`… cli score study.mbstudy --metrics bleu`).
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

TOOL=${APPIMAGETOOL:-$(command -v appimagetool || command -v appimagetool-"$ARCH".AppImage || true)}
if [ -z "$TOOL" ]; then
    echo "appimage: AppDir ready in $APPDIR; appimagetool was not found (set APPIMAGETOOL" >&2
    echo "appimage: or put it on the PATH) so no .AppImage was made" >&2
    exit 3
fi
TARGET="$OUT/MeaningBench-$VERSION-$ARCH.AppImage"
# Inside containers without FUSE an AppImage tool runs by extracting itself.
APPIMAGE_EXTRACT_AND_RUN=1 ARCH="$ARCH" "$TOOL" --no-appstream "$APPDIR" "$TARGET"
echo "appimage: $TARGET ($(du -h "$TARGET" | cut -f1))"
